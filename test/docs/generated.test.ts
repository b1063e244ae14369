import { describe, expect, test } from "bun:test";
import { GENERATED_FILES, regenerate } from "../../docs/generate.ts";

// The tables of docs/ that the code owns must be what `bun docs/generate.ts` writes from it today.
describe("generated documentation", () => {
  for (const file of GENERATED_FILES) {
    test(`docs/${file} holds the tables the code gives (else run bun docs/generate.ts)`, async () => {
      const committed = await Bun.file(new URL(`../../docs/${file}`, import.meta.url)).text();
      expect(regenerate(file, committed)).toBe(committed);
    });
  }

  test("a page whose markers are gone is refused, not silently left stale", () => {
    expect(() => regenerate("errors.md", "# Errors\n")).toThrow('the markers of "proxy-errors" are missing');
  });

  test("a stale table is rewritten between its markers, the prose around it kept", async () => {
    const committed = await Bun.file(new URL("../../docs/errors.md", import.meta.url)).text();
    const stale = committed.replace("| `1006` | 429 |", "| `1006` | 420 |");
    expect(stale).not.toBe(committed);
    expect(regenerate("errors.md", stale)).toBe(committed);
  });
});
