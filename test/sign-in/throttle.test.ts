// Issue 34 (CONTRACT 8, docs/operations.md#sign-in-throttling): at most 5 wrong passwords for one
// email from one client address are answered 401 in 15 minutes however many arrive at once, the
// rest 429 with Retry-After whatever the password; another address is not locked out; one address
// spraying many emails stops at its ceiling. On both doors, JSON and form. The server trusts
// 127.0.0.1 (TRUSTED_PROXIES), so each request's X-Forwarded-For is its client address.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SIGN_IN_WINDOW_MS, WRONG_PASSWORDS_PER_ADDRESS } from "../../src/auth/throttle.ts";
import { admin } from "../support/harness.ts";
import { consoleWorld, type ConsoleWorld } from "../operator/support.ts";

let world: ConsoleWorld;
beforeAll(async () => {
  world = await consoleWorld({ TRUSTED_PROXIES: "127.0.0.1" });
});
afterAll(() => world.close());

let serial = 0;
/** A client address no other test uses. */
const address = () => `198.51.100.${++serial}`;

interface Door {
  name: string;
  /** A person who may sign in at this door. */
  person(): Promise<{ email: string; password: string }>;
  send(email: string, password: string, from: string): Promise<Response>;
  signedIn: number;
}

const json = (path: string) => (email: string, password: string, from: string) =>
  fetch(`${world.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify({ email, password }),
  });
const form = (path: string) => (email: string, password: string, from: string) =>
  fetch(`${world.url}${path}`, {
    method: "POST",
    headers: { origin: world.url, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": from },
    body: new URLSearchParams({ email, password }).toString(),
    redirect: "manual",
  });

async function user() {
  const n = ++serial;
  const res = await admin(world.url, "POST", "/admin/accounts", { name: `Shop ${n}`, email: `shop${n}@example.test` });
  const { id } = (await res.json()) as { id: string };
  const login = { email: `user${n}@example.test`, password: `user password ${n}` };
  expect((await admin(world.url, "POST", `/admin/accounts/${id}/users`, login)).status).toBe(201);
  return login;
}
async function operator() {
  const made = await world.operator(`operator${++serial}@ops.example`, "operator password 1");
  return { email: made.email, password: made.password };
}

const DOORS: Door[] = [
  { name: "POST /api/session", person: user, send: json("/api/session"), signedIn: 204 },
  { name: "the dashboard's sign-in form", person: user, send: form("/dashboard/sign-in"), signedIn: 303 },
  { name: "POST /operator/session", person: operator, send: json("/operator/session"), signedIn: 204 },
  { name: "the console's sign-in form", person: operator, send: form("/operator/sign-in"), signedIn: 303 },
];

/** `count` attempts at once; their statuses, each 429 checked for its Retry-After. */
async function burst(door: Door, count: number, email: string, password: string, from: string) {
  const answers = await Promise.all(Array.from({ length: count }, () => door.send(email, password, from)));
  const statuses = answers.map((r) => r.status);
  for (const r of answers) {
    if (r.status !== 429) continue;
    const wait = Number(r.headers.get("retry-after"));
    expect(Number.isInteger(wait) && wait >= 1 && wait <= SIGN_IN_WINDOW_MS / 1000).toBe(true);
    expect(await r.text()).toContain("Too many failed sign-ins");
  }
  return {
    unauthorized: statuses.filter((s) => s === 401).length,
    refused: statuses.filter((s) => s === 429).length,
    other: statuses.filter((s) => s !== 401 && s !== 429),
  };
}

describe.each(DOORS)("$name", (door) => {
  test("30 wrong passwords at once: 5 × 401, 25 × 429; the right one from that address too, not from another", async () => {
    const person = await door.person();
    const from = address();
    expect(await burst(door, 30, person.email, "wrong password", from)).toEqual({
      unauthorized: 5,
      refused: 25,
      other: [],
    });
    const locked = await door.send(person.email, person.password, from);
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).toBe(String(SIGN_IN_WINDOW_MS / 1000));
    // Through the trusted proxy from another address, the right password signs in at once.
    expect((await door.send(person.email, person.password, address())).status).toBe(door.signedIn);
    // Still locked from the first.
    world.deps.clock.advance(SIGN_IN_WINDOW_MS - 1000);
    const later = await door.send(person.email, person.password, from);
    expect(later.status).toBe(429);
    expect(later.headers.get("retry-after")).toBe("1");
    // Once the window has passed since the last wrong password, the right one signs in from there.
    world.deps.clock.advance(1000);
    expect((await door.send(person.email, person.password, from)).status).toBe(door.signedIn);
  });

  test("100 at once against a fresh email, and again after the window: at most 5 × 401 each time", async () => {
    const person = await door.person();
    const from = address();
    expect(await burst(door, 100, person.email, "wrong password", from)).toEqual({
      unauthorized: 5,
      refused: 95,
      other: [],
    });
    world.deps.clock.advance(SIGN_IN_WINDOW_MS);
    expect(await burst(door, 100, person.email, "wrong password", from)).toEqual({
      unauthorized: 5,
      refused: 95,
      other: [],
    });
  });

  test("an unknown email is counted alike", async () => {
    const from = address();
    expect(await burst(door, 30, `nobody${++serial}@example.test`, "x", from)).toEqual({
      unauthorized: 5,
      refused: 25,
      other: [],
    });
  });

  test("wrong passwords one at a time, never more than 5 in any 15 minutes; a right one clears its address's count", async () => {
    const person = await door.person();
    const from = address();
    for (let i = 0; i < 4; i++) expect((await door.send(person.email, "wrong", from)).status).toBe(401);
    expect((await door.send(person.email, person.password, from)).status).toBe(door.signedIn);
    for (let i = 0; i < 5; i++) {
      world.deps.clock.advance(60_000);
      expect((await door.send(person.email, "wrong", from)).status).toBe(401);
    }
    // Ten minutes after the first of them, then 15 after the last: the window restarts at each one.
    world.deps.clock.advance(6 * 60_000);
    expect((await door.send(person.email, "wrong", from)).status).toBe(429);
    world.deps.clock.advance(SIGN_IN_WINDOW_MS - 6 * 60_000 - 1);
    expect((await door.send(person.email, person.password, from)).status).toBe(429);
    world.deps.clock.advance(1);
    expect((await door.send(person.email, person.password, from)).status).toBe(door.signedIn);
  });

  test(`one address spraying many emails stops after ${WRONG_PASSWORDS_PER_ADDRESS} wrong passwords; others are not held`, async () => {
    world.deps.clock.advance(SIGN_IN_WINDOW_MS);
    const from = address();
    const person = await door.person();
    const emails = Array.from({ length: 60 }, (_, i) => `spray${++serial}-${i}@example.test`);
    const answers = await Promise.all(emails.map((email) => door.send(email, "Summer2024!", from)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBe(WRONG_PASSWORDS_PER_ADDRESS);
    expect(statuses.filter((s) => s === 429).length).toBe(60 - WRONG_PASSWORDS_PER_ADDRESS);
    expect(answers.find((r) => r.status === 429)?.headers.get("retry-after")).toBe(String(SIGN_IN_WINDOW_MS / 1000));
    // The address is held even for a right password; another address is not.
    expect((await door.send(person.email, person.password, from)).status).toBe(429);
    expect((await door.send(person.email, person.password, address())).status).toBe(door.signedIn);
    world.deps.clock.advance(SIGN_IN_WINDOW_MS);
    expect((await door.send(person.email, person.password, from)).status).toBe(door.signedIn);
  });
});

test("the dashboard's and the console's counts are apart: a user's lock is not the same email's operator's", async () => {
  const [dashboard, , console] = DOORS as [Door, Door, Door, Door];
  const from = address();
  const email = `twin${++serial}@example.test`;
  await world.operator(email, "operator password 1");
  expect((await burst(dashboard, 10, email, "wrong", from)).refused).toBe(5);
  expect((await console.send(email, "operator password 1", from)).status).toBe(204);
});
