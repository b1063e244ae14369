import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createAccount, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { admin, startApp, testDeps, type TestDeps } from "../support/harness.ts";

// Issue 35, CONTRACT 3: an account's dashboard logins after they are made. The operator lists them
// with their last sign-in, gives one a new password or removes it, and either ends every session
// of that login; the user changes their own password, which ends their other sessions. Over real
// HTTP, on the test backend.

/** Each test hashes and checks passwords (argon2id, 64 MiB) several times: minutes on a saturated machine. */
const SLOW = 180_000;

let deps: TestDeps;
let server: ReturnType<typeof startApp>;
let url: string;

beforeEach(async () => {
  deps = await testDeps();
  server = startApp(deps);
  url = server.url;
});
afterEach(async () => {
  await server.stop();
  await deps.cleanup();
});

type UserRow = { id: string; email: string; created_at: string; last_sign_in_at: string | null };

async function usersOf(accountId: string): Promise<UserRow[]> {
  const response = await admin(url, "GET", `/admin/accounts/${accountId}/users`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: UserRow[] }).data;
}

/** GET /api/settings with a cookie: 200 while its session lives, 401 once it ended. */
const sessionStatus = async (cookie: string) => (await fetch(`${url}/api/settings`, { headers: { cookie } })).status;

const signInStatus = async (email: string, password: string) =>
  (
    await fetch(`${url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    })
  ).status;

async function auditOf(accountId: string, action: string) {
  const response = await admin(url, "GET", `/admin/audit?account_id=${accountId}&action=${action}`);
  return ((await response.json()) as { data: { action: string; changes: Record<string, unknown> }[] }).data;
}

async function secondUser(account: TestAccount, email: string): Promise<TestAccount> {
  const password = "another long password";
  const response = await admin(url, "POST", `/admin/accounts/${account.id}/users`, { email, password });
  expect(response.status).toBe(201);
  return { id: account.id, email, password };
}

function errorOf(response: Response) {
  return response.json() as Promise<{ error: { code: string; message: string } }>;
}

describe("customer logins (operator API)", () => {
  test(
    "GET /admin/accounts/{id}/users lists the logins with their last sign-in, null until the first",
    async () => {
      const acme = await createAccount(url, "Acme");
      const [before] = await usersOf(acme.id);
      expect(before).toEqual({
        id: expect.stringMatching(/^usr_/),
        account_id: acme.id,
        email: acme.email,
        created_at: expect.any(String),
        last_sign_in_at: null,
      } as never);
      deps.clock.advance(60_000);
      await signInCookie(url, acme);
      const [after] = await usersOf(acme.id);
      expect(after!.last_sign_in_at).toBe(new Date(deps.clock.now()).toISOString());
      // A failed sign-in is no sign-in.
      deps.clock.advance(60_000);
      expect(await signInStatus(acme.email, "not the password")).toBe(401);
      expect((await usersOf(acme.id))[0]!.last_sign_in_at).toBe(after!.last_sign_in_at);

      expect((await admin(url, "GET", "/admin/accounts/acc_nobody/users")).status).toBe(404);
      const listed = await admin(url, "GET", "/admin/accounts");
      expect(((await listed.json()) as { data: { id: string }[] }).data.map((a) => a.id)).toEqual([acme.id]);
    },
    SLOW,
  );

  test(
    "a new password ends every session of that login, and only of that login; the audit entry holds no secret",
    async () => {
      const acme = await createAccount(url, "Acme");
      const colleague = await secondUser(acme, "colleague@acme.example");
      const phone = await signInCookie(url, acme);
      const laptop = await signInCookie(url, acme);
      const theirs = await signInCookie(url, colleague);
      const [user] = (await usersOf(acme.id)).filter((u) => u.email === acme.email);

      const reset = await admin(url, "POST", `/admin/users/${user!.id}/password`, { password: "a brand new password" });
      expect(reset.status).toBe(204);
      expect([await sessionStatus(phone), await sessionStatus(laptop), await sessionStatus(theirs)]).toEqual([
        401, 401, 200,
      ]);
      expect(await signInStatus(acme.email, acme.password)).toBe(401);
      expect(await signInStatus(acme.email, "a brand new password")).toBe(204);
      const entries = await auditOf(acme.id, "user.reset_password");
      expect(entries).toHaveLength(1);
      expect(JSON.stringify(entries)).not.toContain("a brand new password");
      expect(entries[0]!.changes).toEqual({ password: ["[secret]", "[secret changed]"] });
    },
    SLOW,
  );

  test(
    "a removed login cannot sign in, its sessions end, and it is gone from the list",
    async () => {
      const acme = await createAccount(url, "Acme");
      const cookie = await signInCookie(url, acme);
      const [user] = await usersOf(acme.id);
      expect((await admin(url, "DELETE", `/admin/users/${user!.id}`)).status).toBe(204);
      expect(await sessionStatus(cookie)).toBe(401);
      expect(await signInStatus(acme.email, acme.password)).toBe(401);
      expect(await usersOf(acme.id)).toEqual([]);
      expect((await auditOf(acme.id, "user.delete"))[0]!.changes).toEqual({ email: [acme.email, null] });
      // The email is free again.
      expect(
        (await admin(url, "POST", `/admin/accounts/${acme.id}/users`, { email: acme.email, password: "x".repeat(10) }))
          .status,
      ).toBe(201);
    },
    SLOW,
  );

  test(
    "an unknown user id is 404 and changes nothing; twice at once, one removal wins and one entry is written",
    async () => {
      const acme = await createAccount(url, "Acme");
      for (const [method, path, body] of [
        ["POST", "/admin/users/usr_nobody/password", { password: "long enough password" }],
        ["DELETE", "/admin/users/usr_nobody", undefined],
      ] as const) {
        const response = await admin(url, method, path, body);
        expect(response.status).toBe(404);
        expect((await errorOf(response)).error.code).toBe("not_found");
      }
      const [user] = await usersOf(acme.id);
      const both = await Promise.all([1, 2].map(() => admin(url, "DELETE", `/admin/users/${user!.id}`)));
      expect(both.map((r) => r.status).sort()).toEqual([204, 404]);
      expect(await auditOf(acme.id, "user.delete")).toHaveLength(1);
      // Two new passwords at once: both answered, the login takes one of them, no session survives.
      const other = await createAccount(url, "Other");
      const [otherUser] = await usersOf(other.id);
      const cookie = await signInCookie(url, other);
      const resets = await Promise.all(
        ["first new password", "second new password"].map((password) =>
          admin(url, "POST", `/admin/users/${otherUser!.id}/password`, { password }),
        ),
      );
      expect(resets.map((r) => r.status)).toEqual([204, 204]);
      expect(await sessionStatus(cookie)).toBe(401);
      const works = await Promise.all(
        ["first new password", "second new password"].map((p) => signInStatus(other.email, p)),
      );
      expect(works.sort()).toEqual([204, 401]);
    },
    SLOW,
  );

  test(
    "a password that breaks the rule is refused in words, and nothing changes",
    async () => {
      const acme = await createAccount(url, "Acme");
      const cookie = await signInCookie(url, acme);
      const [user] = await usersOf(acme.id);
      const response = await admin(url, "POST", `/admin/users/${user!.id}/password`, { password: "short" });
      expect(response.status).toBe(400);
      expect((await errorOf(response)).error.message).toBe("body field password: must be at least 10 characters long");
      expect(await sessionStatus(cookie)).toBe(200);
      expect(await signInStatus(acme.email, acme.password)).toBe(204);
    },
    SLOW,
  );
});

describe("a user's own password (dashboard API)", () => {
  const change = (cookie: string, body: unknown) =>
    fetch(`${url}/api/password`, {
      method: "POST",
      headers: { cookie, origin: url, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test(
    "needs the current password; ends the user's other sessions and keeps this one",
    async () => {
      const acme = await createAccount(url, "Acme");
      const colleague = await secondUser(acme, "colleague@acme.example");
      const here = await signInCookie(url, acme);
      const elsewhere = await signInCookie(url, acme);
      const theirs = await signInCookie(url, colleague);

      const wrong = await change(here, { current_password: "not it at all", password: "my new password" });
      expect(wrong.status).toBe(400);
      expect((await errorOf(wrong)).error.message).toStartWith("current_password:");
      expect(await signInStatus(acme.email, "my new password")).toBe(401);
      expect(await sessionStatus(elsewhere)).toBe(200);

      const done = await change(here, { current_password: acme.password, password: "my new password" });
      expect(done.status).toBe(204);
      expect([await sessionStatus(here), await sessionStatus(elsewhere), await sessionStatus(theirs)]).toEqual([
        200, 401, 200,
      ]);
      expect(await signInStatus(acme.email, acme.password)).toBe(401);
      expect(await signInStatus(acme.email, "my new password")).toBe(204);
      const entries = await auditOf(acme.id, "user.change_password");
      expect(entries).toHaveLength(1);
      expect(JSON.stringify(entries)).not.toContain("my new password");
    },
    SLOW,
  );

  test(
    "wrong current passwords count as failed sign-ins of that email: guessing through a session is throttled",
    async () => {
      const acme = await createAccount(url, "Acme");
      const cookie = await signInCookie(url, acme);
      const answers: number[] = [];
      for (let i = 0; i < 7; i++)
        answers.push(
          (await change(cookie, { current_password: `guess number ${i}`, password: "my new password" })).status,
        );
      expect(answers.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
      expect(answers.slice(5)).toContain(429);
      expect(
        (await change("sb_session=nothing", { current_password: acme.password, password: "x".repeat(12) })).status,
      ).toBe(401);
    },
    SLOW,
  );
});
