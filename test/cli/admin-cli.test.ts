import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir, TEST_ENCRYPTION_KEY } from "../support/harness.ts";
import { makeDatabase, processEnv, runMain } from "../support/process.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A database as a first `switchboard serve` leaves it: the CLI makes none (test/cli/database.test.ts). */
async function database(): Promise<{ env: Record<string, string>; path: string }> {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const path = join(dir.path, "db.sqlite");
  await makeDatabase(path);
  return { env: processEnv(path), path };
}

async function cli(env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  const { code, stdout, stderr } = await runMain(["admin", ...args], env);
  if (code !== 0) throw new Error(`exit ${code}: ${stderr}`);
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("switchboard admin", () => {
  test("provisions an account end to end and prints the JSON the HTTP API answers", async () => {
    const { env, path } = await database();
    const account = await cli(
      env,
      "accounts",
      "create",
      "--name",
      "Acme",
      "--email",
      "ops@acme.example",
      "--max-numbers",
      "2",
    );
    expect(account).toMatchObject({ name: "Acme", billing_status: "active", retention: "24h", max_numbers: 2 });
    const id = account.id as string;
    expect(
      await cli(env, "accounts", "update", id, "--billing-status", "suspended", "--max-numbers", "null"),
    ).toMatchObject({ billing_status: "suspended", max_numbers: null });
    expect(await cli(env, "accounts", "get", id)).toMatchObject({ billing_status: "suspended" });
    expect(
      await cli(env, "users", "create", id, "--email", "me@acme.example", "--password", "long enough pw"),
    ).toMatchObject({ email: "me@acme.example" });
    const key = await cli(env, "api-keys", "create", id, "--mode", "test", "--name", "ci");
    expect(key.key).toMatch(/^px_test_/);
    expect(await cli(env, "api-keys", "revoke", key.id as string)).toMatchObject({ id: key.id });
    expect(await cli(env, "wabas", "create", id, "--waba-id", "1001", "--access-token", "EAAG-cli")).toMatchObject({
      waba_id: "1001",
      status: "connected",
    });
    expect(await cli(env, "wabas", "update", "1001", "--status", "token_revoked")).toMatchObject({
      status: "token_revoked",
    });
    expect(await cli(env, "wabas", "get", "1001")).toMatchObject({ status: "token_revoked" });
    expect(
      await cli(env, "numbers", "create", id, "--phone-number-id", "2001", "--waba-id", "1001", "--kind", "sandbox"),
    ).toMatchObject({ kind: "sandbox", throughput_level: "STANDARD" });
    expect(await cli(env, "numbers", "update", "2001", "--status", "restricted")).toMatchObject({
      status: "restricted",
    });
    expect(await cli(env, "numbers", "get", "2001")).toMatchObject({ status: "restricted" });
    expect((await cli(env, "numbers", "sync", "2001")).sync_error).toContain("could not be reached");
    // Usage per number, as GET /admin/usage answers it (nothing proxied through this database yet).
    expect(await cli(env, "usage", "list", "--from", "2026-01-01T00:00:00Z", "--account-id", id)).toEqual({ data: [] });

    // The same database, read by the server's store: everything is there and the key was revoked.
    const store = openSqliteStore(
      path,
      createSealer(new Uint8Array(Buffer.from(TEST_ENCRYPTION_KEY, "base64")), cryptoRandom),
    );
    expect(store.directory.apiKey(key.id as string)?.revokedAt).not.toBeNull();
    expect(store.directory.waba("1001")?.accessToken).toBe("EAAG-cli");
    await store.close();
  });

  test("accounts list, and an account's logins listed, given a new password and removed", async () => {
    const { env } = await database();
    expect(await cli(env, "accounts", "list")).toEqual({ data: [] });
    const acme = await cli(env, "accounts", "create", "--name", "Acme", "--email", "ops@acme.example");
    const globex = await cli(env, "accounts", "create", "--name", "Globex", "--email", "ops@globex.example");
    expect(((await cli(env, "accounts", "list")).data as { id: string }[]).map((a) => a.id)).toEqual([
      acme.id as string,
      globex.id as string,
    ]);
    const user = await cli(
      env,
      "users",
      "create",
      acme.id as string,
      "--email",
      "me@acme.example",
      "--password",
      "long enough pw",
    );
    expect(await cli(env, "users", "list", acme.id as string)).toEqual({
      data: [{ ...user, last_sign_in_at: null }],
    });
    expect(await cli(env, "users", "list", globex.id as string)).toEqual({ data: [] });
    const reset = await runMain(
      ["admin", "users", "reset-password", user.id as string, "--password", "a new password!"],
      env,
    );
    expect(reset.code).toBe(0);
    expect(reset.stdout + reset.stderr).not.toContain("a new password!");
    const short = await runMain(["admin", "users", "reset-password", user.id as string, "--password", "short"], env);
    expect(short.code).toBe(1);
    expect(JSON.parse(short.stderr).error.message).toBe("--password: must be at least 10 characters long");
    expect(await cli(env, "users", "delete", user.id as string)).toMatchObject({ id: user.id });
    const again = await runMain(["admin", "users", "delete", user.id as string], env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).error.code).toBe("not_found");
    expect(await cli(env, "users", "list", acme.id as string)).toEqual({ data: [] });
    const entries = (await cli(env, "audit", "list", "--account-id", acme.id as string, "--action", "user")).data as {
      action: string;
    }[];
    expect(entries.map((e) => e.action)).toEqual(["user.delete", "user.reset_password", "user.create"]);
  });

  test("an invalid flag value is a JSON error naming the flag, exit 1", async () => {
    const { env } = await database();
    const result = await runMain(
      ["admin", "accounts", "create", "--name", "Acme", "--email", "ops@acme.example", "--billing-status", "gold"],
      env,
    );
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stderr) as { error: { code: string; message: string } };
    expect(error.error.code).toBe("invalid_request");
    expect(error.error.message).toContain("--billing-status");
  });

  test("an unknown id is a not_found error, exit 1", async () => {
    const { env } = await database();
    const result = await runMain(["admin", "numbers", "get", "404404"], env);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr).error.code).toBe("not_found");
  });

  test.each([
    [["admin", "accounts", "explode"]],
    [["admin", "accounts", "get"]],
    [["admin", "api-keys", "revoke", "key_1", "--force", "yes"]],
    [["admin", "accounts", "create", "--name"]],
  ])("%j is a usage error, exit 2", async (args) => {
    const { env } = await database();
    const result = await runMain(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Usage: switchboard admin");
  });

  test("help lists every command", async () => {
    const { env } = await database();
    const result = await runMain(["admin", "help"], env);
    expect(result.code).toBe(0);
    for (const line of [
      "accounts create",
      "users create",
      "api-keys revoke",
      "wabas update",
      "numbers sync",
      "onboardings list",
      "onboardings delete",
    ])
      expect(result.stdout).toContain(line);
  });
});
