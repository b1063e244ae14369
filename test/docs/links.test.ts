import { describe, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// Every citation of a docs/ section in the code, the tests and the docs themselves must name a
// heading that exists, so that a renamed heading cannot leave its citations pointing nowhere.

const ROOT = resolve(import.meta.dir, "../..");
const SKIP = new Set(["node_modules", ".git", "data", "dist"]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.(ts|tsx|md|lua|yaml|conf|sh)$|^Dockerfile$|^run$/.test(name) ? [path] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = anchorOf(heading[1]!.replaceAll("`", ""));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const pages = new Map<string, Set<string>>();
async function anchors(page: string): Promise<Set<string> | null> {
  if (!pages.has(page)) {
    const file = Bun.file(join(ROOT, page));
    if (!(await file.exists())) return null;
    pages.set(page, anchorsOf(await file.text()));
  }
  return pages.get(page)!;
}

describe("citations of docs/", () => {
  test("headings make the anchors GitHub gives them", () => {
    expect(anchorOf("Ours or upstream's")).toBe("ours-or-upstreams");
    expect(anchorOf("Health, metrics and logs")).toBe("health-metrics-and-logs");
    expect(anchorOf("At least once, and in no fixed order")).toBe("at-least-once-and-in-no-fixed-order");
  });

  test("every docs/<page>.md#<anchor> in the tree, and every link between docs pages, names an existing heading", async () => {
    const broken: string[] = [];
    let cited = 0;
    for (const path of files(ROOT)) {
      const text = await Bun.file(path).text();
      const where = relative(ROOT, path);
      const targets: string[] = [];
      // Plain citations, as comments and test names write them.
      for (const m of text.matchAll(/\bdocs\/([a-z-]+\.md)#([a-z0-9_-]+)/g)) targets.push(`docs/${m[1]}#${m[2]}`);
      // Relative Markdown links, as the docs pages and the README write them.
      if (path.endsWith(".md")) {
        for (const m of text.matchAll(/\]\(([^)#\s]*\.md)?#([^)\s]+)\)/g)) {
          const page = m[1] ? relative(ROOT, resolve(dirname(path), m[1])) : where;
          targets.push(`${page}#${m[2]}`);
        }
      }
      for (const target of targets) {
        const [page, anchor] = target.split("#") as [string, string];
        cited++;
        const known = await anchors(page);
        if (!known?.has(anchor)) broken.push(`${where}: ${target}`);
      }
    }
    expect(cited).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
