import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// The commit-msg hook the repository ships (.githooks/commit-msg, CONTRIBUTING.md#commits), run
// on messages as git hands them to it: a file whose path is its one argument.
const HOOK = resolve(import.meta.dir, "../../.githooks/commit-msg");

function judge(message: string): { code: number; said: string } {
  const dir = mkdtempSync(join(tmpdir(), "commit-msg-"));
  try {
    const file = join(dir, "COMMIT_EDITMSG");
    writeFileSync(file, message);
    const run = Bun.spawnSync(["sh", HOOK, file], { env: { ...process.env, LC_ALL: "C.UTF-8" } });
    return { code: run.exitCode, said: run.stderr.toString() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the commit-msg hook", () => {
  test("a short imperative subject passes, alone or with a body after a blank line", () => {
    expect(judge("Serve /api/settings with the account's routes\n").code).toBe(0);
    expect(judge("Move the kit to src/html\n\nThe console sat a floor above the dashboard.\n").code).toBe(0);
    expect(judge(`${"x".repeat(72)}\n`).code).toBe(0);
  });

  test("git's comment lines are not part of the message", () => {
    expect(judge("Fix the pager\n# Please enter the commit message\n#\n").code).toBe(0);
  });

  test("a subject over 72 characters is refused, counted in characters, not bytes", () => {
    const long = judge(`${"x".repeat(73)}\n`);
    expect(long.code).toBe(1);
    expect(long.said).toContain("73 characters; at most 72");
    expect(judge(`${"é".repeat(72)}\n`).code).toBe(0);
  });

  test("a body that starts on the second line, or an empty subject, is refused", () => {
    const glued = judge("Fix the pager\nbecause it skipped a page\n");
    expect(glued.code).toBe(1);
    expect(glued.said).toContain("blank line");
    expect(judge("\nA body without a subject\n").code).toBe(1);
  });
});
