import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generatedFiles } from "../../docs/generate.ts";

const ROOT = join(import.meta.dir, "../..");

describe("generated documentation", () => {
  for (const { path, text } of generatedFiles()) {
    test(`${path} is what \`bun docs/generate.ts\` writes`, () => {
      expect(readFileSync(join(ROOT, path), "utf8")).toBe(text);
    });
  }
});
