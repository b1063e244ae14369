/**
 * Writes the generated parts of the documentation: the configuration table in README.md and
 * docs/configuration.md (from src/config/settings.ts). `bun docs/generate.ts`; test/docs checks
 * that the committed files are what it writes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withSettingsTable } from "./settings-table.ts";

const ROOT = join(import.meta.dir, "..");

/** Each generated file with the text it should hold. */
export function generatedFiles(): { path: string; text: string }[] {
  return ["README.md", "docs/configuration.md"].map((path) => ({
    path,
    text: withSettingsTable(readFileSync(join(ROOT, path), "utf8")),
  }));
}

if (import.meta.main) {
  for (const { path, text } of generatedFiles()) writeFileSync(join(ROOT, path), text);
}
