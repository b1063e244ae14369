import { describe, expect, test } from "bun:test";
import { parseStressArgs } from "./args.ts";

describe("the stress runner's flags", () => {
  test("read runs, parallel, busy loops, env and the test's own arguments", () => {
    expect(
      parseStressArgs(
        ["--runs", "50", "--parallel", "4", "--busy", "0", "--env", "A=b=c", "--", "test/x.test.ts", "-t", "y"],
        2,
      ),
    ).toEqual({
      runs: 50,
      parallel: 4,
      busy: 0,
      env: { A: "b=c" },
      out: null,
      testArgs: ["test/x.test.ts", "-t", "y"],
    });
  });

  test("default to one busy loop per core", () => {
    expect(parseStressArgs(["--", "t.test.ts"], 8)).toMatchObject({ runs: 20, parallel: 2, busy: 8 });
  });

  test("name the flag and its rule when a value is wrong", () => {
    expect(parseStressArgs(["--runs", "0", "--", "t"], 2)).toEqual({
      error: "--runs takes a whole number of at least 1",
    });
    expect(parseStressArgs(["--busy", "x", "--", "t"], 2)).toEqual({
      error: "--busy takes a whole number of at least 0",
    });
    expect(parseStressArgs(["--env", "=v", "--", "t"], 2)).toEqual({ error: "--env takes KEY=VALUE" });
    expect(parseStressArgs(["--what", "1", "--", "t"], 2)).toMatchObject({
      error: expect.stringContaining("unknown flag --what"),
    });
    expect(parseStressArgs(["--runs", "3"], 2)).toMatchObject({ error: expect.stringContaining("no test given") });
  });
});
