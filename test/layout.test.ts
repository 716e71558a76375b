/**
 * The layering rule of docs/architecture.md, read from the code's own imports: core folders never
 * import the adapters (`cli/`, `mcp/`, `http/`), and no two folders of `src/` import each other,
 * directly or round a longer circle. Type-only and lazy `import()` imports count too: a lazy import
 * still ties the folders together.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../src");
const ADAPTERS = new Set(["cli", "mcp", "http"]);
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

/** The top-level folder of `src/` a file belongs to; the entry point `src/index.ts` is "(entry)". */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(/[\\/]/);
  return parts.length === 1 ? "(entry)" : parts[0];
}

/** Every relative import of every file in `src/`, as [importing file, imported file]. */
function importEdges(root = SRC): [string, string][] {
  const edges: [string, string][] = [];
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|(^|[^:"'`])\/\/.*$/gm, "$1");
    for (const match of text.matchAll(SPECIFIER)) edges.push([file, resolve(dirname(file), match[1])]);
  }
  return edges;
}

/** Folder → folders it imports (other than itself), for folders inside src/. */
function folderGraph(edges: [string, string][]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    if (!to.startsWith(SRC)) continue; // package.json and other files outside src/
    const a = folderOf(from);
    const b = folderOf(to);
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
}

/** Every elementary circle's folders, found by depth-first search from each folder. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const found = new Map<string, string[]>();
  const visit = (start: string, at: string, path: string[]) => {
    for (const next of graph.get(at) ?? []) {
      if (next === start) {
        const key = [...path].sort().join(" ");
        if (!found.has(key)) found.set(key, [...path, start]);
      } else if (!path.includes(next) && next > start) visit(start, next, [...path, next]);
    }
  };
  for (const folder of graph.keys()) visit(folder, folder, [folder]);
  return [...found.values()];
}

describe("layout of src/", () => {
  const edges = importEdges();

  test("the import scan sees the code (a rule checked on nothing would always pass)", () => {
    expect(edges.length).toBeGreaterThan(200);
    expect(edges.some(([from, to]) => folderOf(from) === "cli" && folderOf(to) === "memory")).toBe(true);
  });

  test("no core folder imports an adapter folder (cli/, mcp/, http/)", () => {
    const upward = edges
      .filter(([, to]) => to.startsWith(SRC))
      .filter(([from]) => !ADAPTERS.has(folderOf(from)) && folderOf(from) !== "(entry)")
      .filter(([, to]) => ADAPTERS.has(folderOf(to)))
      .map(([from, to]) => `${relative(SRC, from)} → ${relative(SRC, to)}`);
    expect(upward).toEqual([]);
  });

  test("no circle of imports between folders", () => {
    const found = circles(folderGraph(edges)).map((circle) => circle.join(" → "));
    expect(found).toEqual([]);
  });

  test("the circle finder finds a circle where there is one", () => {
    const graph = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a"])],
      ["d", new Set(["a"])],
    ]);
    expect(circles(graph)).toEqual([["a", "b", "c", "a"]]);
  });
});
