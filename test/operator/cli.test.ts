import { afterAll, beforeAll, expect, test } from "bun:test";
import { processEnv, runMain } from "../support/process.ts";
import { consoleWorld, operatorCookie, operatorsCli, type ConsoleWorld } from "./support.ts";

// Issue 29: `switchboard admin operators create|list|delete|reset-password`, run beside the server
// on its database (either backend); what the CLI does holds for the server at once.

let world: ConsoleWorld;
beforeAll(async () => {
  world = await consoleWorld();
});
afterAll(() => world.close());

const cli = (...args: string[]) => operatorsCli(world, ...args);

const signIn = (email: string, password: string) =>
  fetch(`${world.url}/operator/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });

test("create, list, reset-password and delete; the password is never printed; sessions end with a reset or a deletion", async () => {
  const created = await cli("create", "--email", "Ana@Ops.example", "--password", "first password 1");
  expect(created.code).toBe(0);
  expect(Object.keys(created.json).sort()).toEqual(["created_at", "email", "id"]);
  expect(created.json.email).toBe("ana@ops.example");
  expect(created.json.id).toMatch(/^opr_[0-9a-z]{16}$/);
  expect(created.stdout + created.stderr).not.toContain("first password 1");
  expect(created.stdout).not.toContain("argon2");
  await cli("create", "--email", "bo@ops.example", "--password", "second password 2");

  const list = await cli("list");
  expect(list.json.data.map((o: { email: string }) => o.email)).toEqual(["ana@ops.example", "bo@ops.example"]);
  expect(list.stdout).not.toContain("argon2");

  // One email, one operator.
  const again = await cli("create", "--email", "ana@ops.example", "--password", "another password");
  expect(again.code).toBe(1);
  expect(again.json.error.code).toBe("conflict");

  // The server signs the new operator in at once.
  const cookie = await operatorCookie(world.url, "ana@ops.example", "first password 1");
  expect((await world.get(cookie, "/operator")).status).toBe(200);

  const reset = await cli("reset-password", "ana@ops.example", "--password", "a new password 3");
  expect(reset.code).toBe(0);
  expect(reset.json.id).toBe(created.json.id);
  expect((await world.get(cookie, "/operator")).status).toBe(303);
  expect((await signIn("ana@ops.example", "first password 1")).status).toBe(401);
  const fresh = await operatorCookie(world.url, "ana@ops.example", "a new password 3");

  const deleted = await cli("delete", created.json.id);
  expect(deleted.json).toEqual(created.json);
  expect((await world.get(fresh, "/operator")).status).toBe(303);
  expect((await signIn("ana@ops.example", "a new password 3")).status).toBe(401);
  expect((await cli("list")).json.data.map((o: { email: string }) => o.email)).toEqual(["bo@ops.example"]);
  expect((await cli("delete", "bo@ops.example")).code).toBe(0);
  expect((await cli("list")).json).toEqual({ data: [] });
});

test("an unknown operator is not_found; a bad email or a short password names the flag; exit 1", async () => {
  for (const args of [
    ["delete", "opr_nobody"],
    ["reset-password", "nobody@ops.example", "--password", "long enough 1"],
  ]) {
    const r = await cli(...args);
    expect(r.code).toBe(1);
    expect(r.json.error.code).toBe("not_found");
  }
  const badEmail = await cli("create", "--email", "not-an-email", "--password", "long enough 1");
  expect(badEmail.code).toBe(1);
  expect(badEmail.json.error.message).toContain("--email");
  const short = await cli("create", "--email", "c@ops.example", "--password", "short");
  expect(short.code).toBe(1);
  expect(short.json.error.message).toContain("--password");
  expect((await cli("list")).json).toEqual({ data: [] });
});

test("usage errors exit 2; help lists the operator commands", async () => {
  expect((await cli("delete")).code).toBe(2);
  expect((await cli("create", "--email", "d@ops.example", "--name", "x")).code).toBe(2);
  const { deps } = world;
  const help = await runMain(["admin", "help"], processEnv("unused", { DATABASE_URL: deps.databaseUrl }));
  for (const line of ["operators create", "operators list", "operators delete", "operators reset-password"])
    expect(help.stdout).toContain(line);
});
