import { SETTINGS, type Setting } from "../src/config/settings.ts";

/** The configuration table written into README.md and docs/configuration.md, from the settings table. */
export function settingsTable(): string {
  const rows = (Object.entries(SETTINGS) as [string, Setting<unknown>][]).map(([name, s]) => {
    const shown = s.shown ?? (s.fallback === null ? "none" : `\`${s.fallback}\``);
    return `| \`${name}\` | ${shown} | ${s.meaning} |`;
  });
  return ["| variable | default | meaning |", "|---|---|---|", ...rows].join("\n");
}

export const SETTINGS_BEGIN = "<!-- settings table: written by `bun docs/generate.ts` from src/config/settings.ts -->";
export const SETTINGS_END = "<!-- end of settings table -->";

/** `text` with what stands between the markers replaced by the table. */
export function withSettingsTable(text: string): string {
  const begin = text.indexOf(SETTINGS_BEGIN);
  const end = text.indexOf(SETTINGS_END);
  if (begin < 0 || end < begin) throw new Error("the settings table's markers are missing");
  return `${text.slice(0, begin + SETTINGS_BEGIN.length)}\n${settingsTable()}\n${text.slice(end)}`;
}
