import { afterAll, beforeAll, expect, test } from "bun:test";
import { admin } from "../support/harness.ts";
import { createAccount, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { consoleWorld, type ConsoleWorld } from "./support.ts";
import { recordsCounting } from "../support/store-rows.ts";

// GET /admin/usage.csv?from=&to=&account_id= (docs/operations.md#operator-api), with the operator
// token or an operator session: one row per account, number, UTC day, kind and label; the console's
// Usage page totals the same rows.

let world: ConsoleWorld;
let acme: TestAccount;
let other: TestAccount;
let cookie: string;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The clock's instant: 2026-01-01T00:00:00Z. */
let jan1: number;

beforeAll(async () => {
  world = await consoleWorld();
  jan1 = world.deps.clock.now();
  acme = await createAccount(world.url, "Acme, Inc.");
  other = await createAccount(world.url, "=HYPERLINK(evil)");
  const u = (
    accountId: string,
    targetId: string,
    hour: number,
    kind: "forwarded" | "upstream_error" | "refused",
    label: string,
    count: number,
  ) => ({ accountId, targetId, hour, kind, label, count });
  await world.deps.store.requests.append(
    recordsCounting([
      u(acme.id, "1001", jan1 - HOUR, "forwarded", "POST /{phone_number_id}/messages", 9),
      u(acme.id, "1001", jan1 + HOUR, "forwarded", "POST /{phone_number_id}/messages", 3),
      u(acme.id, "1001", jan1 + 5 * HOUR, "forwarded", "POST /{phone_number_id}/messages", 4),
      u(acme.id, "1001", jan1 + 5 * HOUR, "upstream_error", "131031", 1),
      u(acme.id, "waba-1", jan1 + DAY + HOUR, "forwarded", "GET /{waba_id}/message_templates", 2),
      u(other.id, "2001", jan1 + 2 * DAY, "refused", "1006", 6),
    ]),
  );
  world.deps.clock.advance(3 * DAY);
  cookie = (await world.operator()).cookie;
});
afterAll(() => world.close());

const csv = (query: string, headers: Record<string, string> = {}) =>
  fetch(`${world.url}/admin/usage.csv${query}`, { headers });
const asAdmin = (query: string) => admin(world.url, "GET", `/admin/usage.csv${query}`);

test("one row per account, number, day, kind and label; a download named after its period", async () => {
  const r = await asAdmin("");
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  expect(r.headers.get("content-disposition")).toBe(
    'attachment; filename="switchboard-usage-2026-01-01-to-2026-01-04.csv"',
  );
  // This month by default: December's calls are not in it. Names a spreadsheet would run are kept text.
  const acmeRows = [
    `${acme.id},"Acme, Inc.",1001,2026-01-01,forwarded,POST /{phone_number_id}/messages,7`,
    `${acme.id},"Acme, Inc.",1001,2026-01-01,upstream_error,131031,1`,
    `${acme.id},"Acme, Inc.",waba-1,2026-01-02,forwarded,GET /{waba_id}/message_templates,2`,
  ];
  const otherRows = [`${other.id},'=HYPERLINK(evil),2001,2026-01-03,refused,1006,6`];
  // By account id, then day, number, kind and label.
  const rows = acme.id < other.id ? [...acmeRows, ...otherRows] : [...otherRows, ...acmeRows];
  expect(await r.text()).toBe(["account_id,account_name,target_id,day,kind,label,count", ...rows, ""].join("\r\n"));
});

test("from, to and account_id narrow it; an unknown account is 404; a time no date holds, or to before from, is 400", async () => {
  const body = async (query: string) => (await asAdmin(query)).text();
  const lines = (text: string) => text.trim().split("\r\n").slice(1);
  expect(lines(await body(`?from=2025-12-31&to=2026-01-01T02:00:00Z&account_id=${acme.id}`))).toEqual([
    `${acme.id},"Acme, Inc.",1001,2025-12-31,forwarded,POST /{phone_number_id}/messages,9`,
    `${acme.id},"Acme, Inc.",1001,2026-01-01,forwarded,POST /{phone_number_id}/messages,3`,
  ]);
  expect(lines(await body(`?account_id=${other.id}`))).toEqual([
    `${other.id},'=HYPERLINK(evil),2001,2026-01-03,refused,1006,6`,
  ]);
  expect(lines(await body("?from=2026-01-02"))).toHaveLength(2);
  for (const [query, status] of [
    ["?account_id=acc_nobody", 404],
    ["?from=yesterday", 400],
    ["?to=%2B275760-09-13T00:00:00.001Z", 400],
    ["?from=2026-01-02&to=2026-01-01", 400],
  ] as const) {
    const r = await asAdmin(query);
    expect({ query, status: r.status }).toEqual({ query, status });
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe(
      status === 404 ? "not_found" : "invalid_request",
    );
  }
});

test("an operator's session downloads it; an account user's cookie, or none, does not", async () => {
  expect((await csv("", { cookie })).status).toBe(200);
  const user = await signInCookie(world.url, acme);
  expect((await csv("", { cookie: user })).status).toBe(401);
  expect((await csv("")).status).toBe(401);
});

test("the Usage page totals the rows per day or month and links the CSV of the same period", async () => {
  const page = await (await world.get(cookie, `/operator/usage?account_id=${acme.id}&from=2025-12-01&by=month`)).text();
  expect(page).toContain(
    `href="/admin/usage.csv?from=2025-12-01T00%3A00%3A00.000Z&to=2026-01-04T01%3A00%3A00.000Z&account_id=${acme.id}"`,
  );
  // December: 9 forwarded; January: 7 forwarded and 1 upstream error on 1001, 2 on the WABA.
  const cells = [...page.matchAll(/<td data-label="(?:Month|Forwarded|Errors|Refused)"[^>]*>([^<]*)</g)].map(
    (m) => m[1],
  );
  expect(cells).toEqual(["2025-12", "9", "0", "0", "2026-01", "7", "1", "0", "2026-01", "2", "0", "0"]);
  const days = await (await world.get(cookie, "/operator/usage")).text();
  expect(days).toContain("2026-01-03");
  expect(days).not.toContain("2025-12-31");
  expect((await world.get(cookie, "/operator/usage?account_id=acc_nobody")).status).toBe(404);
  expect((await world.get(cookie, "/operator/usage?by=year")).status).toBe(400);
});

// Issue 34, item 10: a spreadsheet that splits lines on `;` or a tab (or naively on `,`) read the
// part of a name after one as a cell, and ran it as a formula, leading spaces or not.
test("a name whose part after a ; or , would be read as a formula is quoted, and each such part kept text", async () => {
  const names = ["Acme;=1+1", "Beta,+SUM(A1);-2;@x", "Gamma;\tTab", "Delta\t=1+1", "  =2+2"];
  const rows: string[] = [];
  for (const [i, name] of names.entries()) {
    const account = await createAccount(world.url, name);
    await world.deps.store.requests.append(
      recordsCounting([
        { accountId: account.id, targetId: `30${i}`, hour: jan1 + HOUR, kind: "forwarded", label: "x", count: 1 },
      ]),
    );
    const [, row] = (await (await asAdmin(`?account_id=${account.id}`)).text()).trim().split("\r\n");
    rows.push(row!);
    expect(row).toBe(
      [
        `${account.id},"Acme;'=1+1",300,2026-01-01,forwarded,x,1`,
        `${account.id},"Beta,'+SUM(A1);'-2;'@x",301,2026-01-01,forwarded,x,1`,
        `${account.id},"Gamma;'\tTab",302,2026-01-01,forwarded,x,1`,
        `${account.id},"Delta\t'=1+1",303,2026-01-01,forwarded,x,1`,
        `${account.id},  '=2+2,304,2026-01-01,forwarded,x,1`,
      ][i],
    );
  }
  // Split as such a spreadsheet splits, no cell starts a formula.
  for (const row of rows) {
    for (const piece of row.split(/[;,\t]/)) expect(piece).not.toMatch(/^ *[=+\-@\r]/);
  }
});
