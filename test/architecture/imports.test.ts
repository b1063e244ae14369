import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { LAYERS } from "./layers.ts";

// The shape of src/ as data (./layers.ts, shown in docs/architecture.md): which module may import
// which. A module is a folder of src/ or a file at its root. Every import counts, `import type` and
// `import()` too: a type-only circle still means neither file can be read without the other.

const SRC = resolve(import.meta.dir, "../../src");

type Graph = Map<string, string[]>;

/** Every relative module specifier of a TypeScript text: static, type-only, re-exported and dynamic. */
function specifiersOf(text: string): string[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((name) => name.startsWith("."));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** src/'s import graph, by path relative to src/; imports of files outside src/ (package.json, db/) are left out. */
function srcGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const targets = specifiersOf(readFileSync(file, "utf8"))
      .map((spec) => resolve(dirname(file), spec))
      .filter((target) => target.startsWith(`${SRC}/`) && existsSync(target))
      .map((target) => relative(SRC, target));
    graph.set(relative(SRC, file), [...new Set(targets)]);
  }
  return graph;
}

/** The folder a file of src/ belongs to, or the file itself at src/'s root. */
const moduleOf = (file: string) => file.split("/")[0] ?? file;

/** The imports that go up or sideways: each as "from → to (from's layer → to's layer)". */
function layerBreaches(graph: Graph, layers: { modules: string[] }[]): string[] {
  const layerOf = new Map(layers.flatMap((layer, i) => layer.modules.map((m) => [m, i] as const)));
  const breaches: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const [a, b] = [moduleOf(from), moduleOf(to)];
      if (a === b) continue;
      const [la, lb] = [layerOf.get(a), layerOf.get(b)];
      if (la === undefined || lb === undefined || lb >= la)
        breaches.push(`src/${from} → src/${to} (${a}, layer ${la ?? "none"} → ${b}, layer ${lb ?? "none"})`);
    }
  }
  return breaches.sort();
}

/** Each import circle between files, as one way around it: "a → b → a". */
function circles(graph: Graph): string[] {
  // Tarjan's strongly connected components: each of more than one file, or of a file importing itself, is a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[] = [];
  const lowOf = (v: string) => low.get(v) ?? 0;
  const visit = (v: string) => {
    const i = index.size;
    index.set(v, i);
    low.set(v, i);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(lowOf(v), lowOf(w)));
      } else if (stack.includes(w)) low.set(v, Math.min(lowOf(v), index.get(w) ?? i));
    }
    if (lowOf(v) !== i) return;
    const component = new Set(stack.splice(stack.indexOf(v)));
    if (component.size > 1 || graph.get(v)?.includes(v)) found.push(wayAround(graph, component));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found.sort();
}

/** The shortest way from a circle's first file (by name) back to itself. */
function wayAround(graph: Graph, circle: Set<string>): string {
  const start = [...circle].sort()[0] ?? "";
  const ways = new Map([[start, [start]]]);
  const queue = [start];
  for (const v of queue) {
    const way = ways.get(v) ?? [];
    for (const w of graph.get(v) ?? []) {
      if (w === start) return [...way, start].map((file) => `src/${file}`).join(" → ");
      if (circle.has(w) && !ways.has(w)) {
        ways.set(w, [...way, w]);
        queue.push(w);
      }
    }
  }
  return `src/${start}`;
}

describe("src/'s imports", () => {
  const graph = srcGraph();

  test("every folder and root file of src/ has exactly one layer, and every layer names only what exists", () => {
    const modules = [...new Set([...graph.keys()].map(moduleOf))].sort();
    const placed = LAYERS.flatMap((layer) => layer.modules);
    expect(modules.filter((m) => !placed.includes(m))).toEqual([]);
    expect(placed.filter((m) => !modules.includes(m))).toEqual([]);
    expect(placed.filter((m, i) => placed.indexOf(m) !== i)).toEqual([]);
  });

  test("no module imports from its own layer or one above it", () => {
    expect(layerBreaches(graph, LAYERS)).toEqual([]);
  });

  test("the dashboard and the console are siblings over the HTML kit: neither imports the other", () => {
    const layerOf = (m: string) => LAYERS.findIndex((layer) => layer.modules.includes(m));
    expect(layerOf("dashboard")).toBe(layerOf("console"));
    expect(layerOf("html")).toBe(layerOf("dashboard") - 1);
    const across = [...graph].flatMap(([from, targets]) =>
      targets
        .filter((to) => [moduleOf(from), moduleOf(to)].sort().join() === "console,dashboard")
        .map((to) => `src/${from} → src/${to}`),
    );
    expect(across).toEqual([]);
  });

  test("no import circle between files", () => {
    expect(circles(graph)).toEqual([]);
  });
});

describe("the checks themselves", () => {
  test("a type-only import, a re-export and a dynamic import are all imports; comments and strings are not", () => {
    const text = [
      'import type { A } from "../a/x.ts";',
      'export { b } from "./b.ts";',
      'const c = await import("../c/y.ts");',
      'import { d } from "elysia";',
      '// import { e } from "../e/z.ts";',
      "const f = \"from '../f/w.ts'\";",
    ].join("\n");
    expect(specifiersOf(text)).toEqual(["../a/x.ts", "./b.ts", "../c/y.ts"]);
  });

  test("an import up or sideways is named with both files and both layers", () => {
    const graph: Graph = new Map([
      ["store/x.ts", ["errors/catalog.ts", "store/y.ts"]],
      ["errors/catalog.ts", ["store/x.ts"]],
      ["auth/session.ts", ["accounts/keys.ts"]],
    ]);
    const layers = [{ modules: ["errors"] }, { modules: ["store"] }, { modules: ["auth", "accounts"] }];
    expect(layerBreaches(graph, layers)).toEqual([
      "src/auth/session.ts → src/accounts/keys.ts (auth, layer 2 → accounts, layer 2)",
      "src/errors/catalog.ts → src/store/x.ts (errors, layer 0 → store, layer 1)",
    ]);
  });

  test("a circle is named as the way around it", () => {
    const graph: Graph = new Map([
      ["limits/limiter.ts", ["deps.ts", "runtime/clock.ts"]],
      ["deps.ts", ["limits/limiter.ts"]],
      ["runtime/clock.ts", []],
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
    ]);
    expect(circles(graph)).toEqual([
      "src/a.ts → src/b.ts → src/c.ts → src/a.ts",
      "src/deps.ts → src/limits/limiter.ts → src/deps.ts",
    ]);
  });
});
