import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { makeDatabase, processEnv, runMain, runOnTerminal } from "../support/process.ts";

// Issue 35, CONTRACT 1: only `serve`, `restore` and `migrate --to` may create a database. Every
// other command given a SQLite file that does not exist exits 2 with one line naming the path it
// looked for, and creates nothing (not the file, its directory, its lock or a development key).
// On a terminal, each command's first line names the database it uses.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function directory(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  return dir.path;
}

describe("a command given a SQLite file that does not exist", () => {
  test.each([
    ["admin accounts list", ["admin", "accounts", "list"]],
    ["admin accounts create", ["admin", "accounts", "create", "--name", "Acme", "--email", "ops@acme.example"]],
    [
      "admin operators create",
      ["admin", "operators", "create", "--email", "a@ops.example", "--password", "long password 1"],
    ],
    ["backup", ["backup"]],
  ])("%s exits 2 with one line naming the path, and creates nothing", async (_, args) => {
    const dir = directory();
    const path = join(dir, "elsewhere", "switchboard.db");
    // DEV_MODE=1 too: its development key (kept beside the database) must not be made either.
    for (const extra of [{}, { DEV_MODE: "1", ENCRYPTION_KEY: "" }] as Record<string, string>[]) {
      const { code, stdout, stderr } = await runMain(args, processEnv(path, extra));
      expect(code).toBe(2);
      expect(stdout).toBe("");
      const lines = stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`no database at ${path}`);
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  test("a relative DATABASE_URL is named as the full path it was looked for at", async () => {
    const dir = directory();
    const { code, stderr } = await runMain(["admin", "accounts", "list"], {
      ...processEnv("unused"),
      DATABASE_URL: `file:./${join("data-nowhere", "x.db")}`,
    });
    expect(code).toBe(2);
    expect(stderr).toContain("no database at /");
    expect(stderr).toContain("/data-nowhere/x.db");
    expect(existsSync(join(dir, "data-nowhere"))).toBe(false);
  });

  test("migrate --from a file that does not exist exits 2 naming it, before it looks at PostgreSQL", async () => {
    const dir = directory();
    const from = join(dir, "old.db");
    const { code, stderr } = await runMain(
      ["migrate", "--from", `file:${from}`, "--to", "postgres://nobody@127.0.0.1:9/nothing"],
      processEnv(from),
    );
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual([expect.stringContaining(`no database at ${from} (--from)`)]);
    expect(readdirSync(dir)).toEqual([]);
  });

  test("restore --from a backup file that does not exist says so, not that a manifest is missing", async () => {
    const dir = directory();
    const from = join(dir, "switchboard-20260101T000000Z-v14.db.zst");
    const { code, stderr } = await runMain(["restore", "--from", from], processEnv(join(dir, "restored.db")));
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual([
      `switchboard: restore refused: no backup at ${from}: the file does not exist`,
    ]);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("on a terminal", () => {
  test("the first line names the database the command uses; piped, standard output is only its JSON", async () => {
    const dir = directory();
    const path = join(dir, "switchboard.db");
    await makeDatabase(path);
    const env = processEnv(path);
    const shown = await runOnTerminal(["admin", "accounts", "list"], env);
    expect(shown.code).toBe(0);
    const [first, ...rest] = shown.output.trim().split("\n");
    expect(first).toBe(`switchboard: database ${path}`);
    expect(JSON.parse(rest.join("\n"))).toEqual({ data: [] });

    const piped = await runMain(["admin", "accounts", "list"], env);
    expect(piped.stderr).toBe("");
    expect(JSON.parse(piped.stdout)).toEqual({ data: [] });

    const backup = await runOnTerminal(["backup", "--to", join(dir, "backups")], env);
    expect(backup.code).toBe(0);
    expect(backup.output.split("\n")[0]).toBe(`switchboard: database ${path}`);
  });
});

describe("a command given a PostgreSQL server that cannot be reached", () => {
  test("exits 1 with one line naming DATABASE_URL and the database, never its password nor a stack", async () => {
    // A port nothing listens on: the command line does not wait as a server does.
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = listener.port;
    listener.stop(true);
    const url = `postgres://someone:hunter2secret@127.0.0.1:${port}/nowhere`;
    const env = processEnv("unused", { DATABASE_URL: url, REDIS_URL: "redis://127.0.0.1:9" });
    const { code, stdout, stderr } = await runMain(["admin", "accounts", "list"], env);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines.at(-1)).toContain(
      `DATABASE_URL: PostgreSQL at postgres://127.0.0.1:${port}/nowhere could not be reached`,
    );
    expect(stderr).not.toContain("hunter2secret");
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
