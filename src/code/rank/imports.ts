/**
 * The import graph between a repository's files, read from the indexed texts: `import`/`from`/
 * `require`/`use`/`mod`/`#include`/`alias` statements, each specifier resolved to the files it
 * names (a relative path, or dotted/`::`/`/` segments matched against the end of file paths; a
 * package or folder import shares its edge among the folder's files). Two signals come of it for a
 * sentence query: a file imported by many others is central to the repository, and a candidate file
 * gains a share of the best score among the files it imports or that import it. docs/code-search.md
 * has the figures behind the weights.
 */
import type { CodeIndex } from "../store.ts";
import { tuned } from "./tuning.ts";

/**
 * Share of its score a chunk of the most imported file gains. 0.2 with NEIGHBOUR_WEIGHT 0.2: the pair
 * chosen on all 19 development repositories (NDCG@10 0.880 → 0.881; leave-one-out 0.877, flat) that
 * raised recall@5 of file localisation on 16 unseen repositories 0.818 → 0.841.
 */
const CENTRALITY_WEIGHT = 0.2;
/** Share of the best neighbouring file's score a candidate file's best chunk gains (see above). */
const NEIGHBOUR_WEIGHT = 0.2;
/** A specifier that matches more files than this names nothing in particular (`utils`, `types`). */
const MAX_TARGETS = 8;

/** Specifiers in quotes: JS/TS `from`/`import`/`require`, Ruby `require(_relative)`, Lua, Zig, C includes. */
const QUOTED =
  /(?:\bfrom|\bimport|\brequire(?:_relative)?|@import|#\s*include|\bload)\s*\(?\s*["'<]([^"'<>\n]{1,200})["'>]/g;
/** Dotted, `::` or `\` names: Java, Kotlin, Scala, Python, Rust `use`, PHP `use`, Haskell, Elixir `alias`. */
const NAMED =
  /^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:import|from|use|alias|require)[ \t]+(?:qualified[ \t]+|static[ \t]+)?([A-Za-z_][\w.:\\]*)(?:[ \t]*\{([^}\n]*)\})?/gm;
/** Python `from .x import a, b` / `from x.y import a`: the module, and each name as a module inside it. */
const PYTHON_FROM = /^[ \t]*from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import[ \t]+([^\n#]+)/gm;
/** Rust `mod name;`: the sibling file or folder of that name. */
const RUST_MOD = /^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;/gm;
/** Lines of a Go `import ( … )` block. */
const GO_IMPORT_BLOCK = /^import[ \t]*\(([^)]*)\)/gm;
const GO_IMPORT_LINE = /"([^"\n]+)"/g;
/** Segments that say where a path starts, not which file it is. */
const ANCHOR_SEGMENTS = new Set(["crate", "self", "super", "@", "~", "src", "lib"]);
const SOURCE_EXTENSION =
  /\.(?:[cm]?[jt]sx?|py|rb|lua|zig|rs|go|h|hh|hpp|hxx|c|cc|cpp|inc|scala|kt|java|php|ex|exs|hs)$/;

/** Words compared case- and separator-blind, so `FooBar`, `foo_bar` and `foo-bar` meet. */
const fold = (word: string) => word.toLowerCase().replace(/[_-]/g, "");

export interface ImportGraph {
  /** Each file's in-degree (importers, a folder import shared among its files), log-scaled to 0..1. */
  centrality: Float32Array;
  /** Each file's neighbours in either direction. */
  neighbours: Int32Array[];
}

interface FileKeys {
  /** Folded path segments of each file without its extension; a package root ends with its folder. */
  segments: string[][];
  /** Files by their last folded segment. */
  byName: Map<string, number[]>;
  /** Files by their folded folder path. */
  byFolder: Map<string, number[]>;
}

const MODULE_ROOT = /^(mod|index|__init__|init|package|main|lib)$/;

function fileKeys(index: CodeIndex): FileKeys {
  const keys: FileKeys = { segments: [], byName: new Map(), byFolder: new Map() };
  index.files.forEach((file, f) => {
    const parts = file.path.split("/");
    const name = parts.pop() ?? "";
    const dot = name.indexOf(".", 1);
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const folder = parts.map(fold);
    const segments = [...folder, fold(stem)];
    keys.segments.push(segments);
    const add = (map: Map<string, number[]>, key: string) => {
      const list = map.get(key);
      if (list) list.push(f);
      else map.set(key, [f]);
    };
    add(keys.byName, fold(stem));
    // `middleware/mod.rs`, `utils/index.ts`, `pkg/__init__.py` are what `middleware`, `utils`, `pkg` name.
    if (MODULE_ROOT.test(stem) && folder.length) add(keys.byName, folder[folder.length - 1]);
    add(keys.byFolder, folder.join("/"));
  });
  return keys;
}

const endsWith = (whole: string[], tail: string[]) =>
  tail.length <= whole.length && tail.every((s, i) => whole[whole.length - tail.length + i] === s);
/** The shorter of two segment lists ends the longer: `org.x.Foo` names `Foo.java` indexed from inside `org/x`. */
const sameTail = (a: string[], b: string[]) => (a.length <= b.length ? endsWith(b, a) : endsWith(a, b));

/**
 * The files `segments` names: files whose path ends with them (dropping up to two trailing
 * segments, which may be an item inside the module), else the files of a folder that ends with them.
 */
function resolveSegments(keys: FileKeys, segments: string[]): number[] {
  const folded = segments.map(fold).filter((s) => s && !ANCHOR_SEGMENTS.has(s));
  for (let drop = 0; drop <= 2 && folded.length - drop > 0; drop++) {
    const tail = folded.slice(0, folded.length - drop);
    const named = (keys.byName.get(tail[tail.length - 1]) ?? []).filter((f) => {
      const own = keys.segments[f];
      return sameTail(own, tail) || sameTail(own.slice(0, -1), tail);
    });
    if (named.length) return named;
    const folder = resolveFolder(keys, tail);
    if (folder.length) return folder;
  }
  return [];
}

/** The files of the folder whose path and `segments` end alike (a Go package, a Scala `a.b._`). */
function resolveFolder(keys: FileKeys, segments: string[]): number[] {
  for (const [folder, files] of keys.byFolder)
    if (folder && sameTail(folder.split("/"), segments)) return files;
  return [];
}

/** The `.go` files of the folder a Go import path names inside one of the repository's modules. */
function resolveGoPackage(
  index: CodeIndex,
  keys: FileKeys,
  modules: { module: string; folder: string }[],
  importPath: string,
): number[] {
  for (const { module, folder } of modules) {
    if (importPath !== module && !importPath.startsWith(`${module}/`)) continue;
    const inside = `${folder}${importPath.slice(module.length + 1)}`.replace(/\/$/, "");
    const files = keys.byFolder.get(inside.split("/").filter(Boolean).map(fold).join("/")) ?? [];
    return files.filter((f) => index.files[f].path.endsWith(".go"));
  }
  // No go.mod indexed: a path under a domain (`github.com/…`) names the folder it ends like.
  const segments = importPath.split("/");
  if (modules.length || segments.length < 2 || !segments[0].includes(".")) return [];
  return resolveFolder(keys, segments.slice(1).map(fold)).filter((f) => index.files[f].path.endsWith(".go"));
}

/** A Go module's path (`module …` of its go.mod) and the folder of that go.mod. */
function goModules(index: CodeIndex): { module: string; folder: string }[] {
  const modules: { module: string; folder: string }[] = [];
  for (const file of index.files) {
    if (file.path !== "go.mod" && !file.path.endsWith("/go.mod")) continue;
    const module = index.texts[file.firstChunk]?.match(/^module\s+(\S+)/m)?.[1];
    if (module) modules.push({ module, folder: file.path.slice(0, -"go.mod".length) });
  }
  return modules;
}

/** Files a relative specifier (`./router`, `../lib/x.js`) names from the file at `from`. */
function resolveRelative(keys: FileKeys, from: string, specifier: string): number[] {
  const parts = from.split("/").slice(0, -1);
  for (const piece of specifier.replace(SOURCE_EXTENSION, "").split("/")) {
    if (piece === "..") parts.pop();
    else if (piece && piece !== ".") parts.push(piece);
  }
  const wanted = parts.map(fold);
  const named = keys.byName.get(wanted[wanted.length - 1]) ?? [];
  return named.filter((f) => {
    const own = keys.segments[f];
    return (
      (own.length === wanted.length && endsWith(own, wanted)) ||
      (own.length === wanted.length + 1 && endsWith(own.slice(0, -1), wanted))
    );
  });
}

/** What an import statement names: a path relative to the file, name segments, or a Go package path. */
interface Specifier {
  relative?: string;
  segments?: string[];
  goPackage?: string;
}

/** Every specifier a file's text imports, as relative paths or name segments. */
/** Every import statement holds one of these words on its line (Go's block lines aside). */
const IMPORT_WORDS = ["import", "from", "require", "include", "use", "mod", "alias", "load"];

/**
 * The lines of `text` that hold an import word, joined: the patterns then scan a small part of the
 * file (indexOf is far cheaper than a regular expression over every character).
 */
function importLines(text: string): string {
  const starts = new Set<number>();
  for (const word of IMPORT_WORDS)
    for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + word.length))
      starts.add(text.lastIndexOf("\n", at) + 1);
  const lines: string[] = [];
  for (const start of [...starts].sort((a, b) => a - b)) {
    const end = text.indexOf("\n", start);
    lines.push(text.slice(start, end < 0 ? undefined : end));
  }
  return lines.join("\n");
}

function specifiers(path: string, whole: string): Specifier[] {
  const found: Specifier[] = [];
  const isGo = path.endsWith(".go");
  const text = importLines(whole);
  const quoted = (spec: string) => {
    if (isGo) found.push({ goPackage: spec });
    else if (spec.startsWith(".")) found.push({ relative: spec });
    else found.push({ segments: spec.replace(SOURCE_EXTENSION, "").split(/[/.]/) });
  };
  for (const match of text.matchAll(QUOTED)) quoted(match[1]);
  if (isGo)
    for (const block of whole.matchAll(GO_IMPORT_BLOCK))
      for (const line of block[1].matchAll(GO_IMPORT_LINE)) quoted(line[1]);
  for (const match of text.matchAll(PYTHON_FROM)) {
    const [, dots, module, items] = match;
    const names = items
      .replace(/[()]/g, "")
      .split(",")
      .map((item) => item.trim().split(/\s/)[0]);
    const base = module ? module.split(".") : [];
    const paths = [base, ...names.filter((n) => /^\w+$/.test(n)).map((n) => [...base, n])];
    for (const segments of paths) {
      if (!segments.length) continue;
      if (dots)
        found.push({
          relative: `${dots.length === 1 ? "./" : "../".repeat(dots.length - 1)}${segments.join("/")}`,
        });
      else found.push({ segments });
    }
  }
  for (const match of text.matchAll(NAMED)) {
    const base = match[1].split(/::|[.\\]/).filter(Boolean);
    if (match[2])
      for (const item of match[2].split(",")) {
        const name = item.trim().split(/\s/)[0];
        if (/^\w+$/.test(name)) found.push({ segments: [...base, name] });
      }
    else if (base.length) found.push({ segments: base });
  }
  if (path.endsWith(".rs"))
    for (const match of text.matchAll(RUST_MOD)) found.push({ relative: `./${match[1]}` });
  return found;
}

/** The import graph of a loaded index, built on first use. */
const graphCache = new WeakMap<CodeIndex, ImportGraph>();
export function importGraph(index: CodeIndex): ImportGraph {
  const known = graphCache.get(index);
  if (known) return known;
  const keys = fileKeys(index);
  const modules = goModules(index);
  // Files share most of their imports (`<string>`, `absl/base/config.h`): each name is resolved once.
  const resolved = new Map<string, number[]>();
  const resolveNamed = (segments: string[]) => {
    const key = segments.join("\0");
    let targets = resolved.get(key);
    if (!targets) resolved.set(key, (targets = resolveSegments(keys, segments)));
    return targets;
  };
  const files = index.files;
  const inDegree = new Float64Array(files.length);
  const neighbours: Set<number>[] = files.map(() => new Set());
  files.forEach((file, f) => {
    if (file.kind !== "code") return;
    const parts: string[] = [];
    for (let c = file.firstChunk; c < file.firstChunk + file.chunkCount; c++) parts.push(index.texts[c]);
    const imported = new Map<number, number>();
    for (const spec of specifiers(file.path, parts.join("\n"))) {
      const targets = (
        spec.goPackage !== undefined
          ? resolveGoPackage(index, keys, modules, spec.goPackage)
          : spec.relative
            ? resolveRelative(keys, file.path, spec.relative)
            : resolveNamed(spec.segments ?? [])
      ).filter((t) => files[t].kind === "code");
      if (!targets.length || targets.length > MAX_TARGETS) continue;
      for (const t of targets)
        if (t !== f) imported.set(t, Math.max(imported.get(t) ?? 0, 1 / targets.length));
    }
    for (const [t, weight] of imported) {
      inDegree[t] += weight;
      neighbours[f].add(t);
      neighbours[t].add(f);
    }
  });
  const centrality = new Float32Array(files.length);
  let max = 0;
  for (let f = 0; f < files.length; f++) max = Math.max(max, Math.log1p(inDegree[f]));
  if (max > 0) for (let f = 0; f < files.length; f++) centrality[f] = Math.log1p(inDegree[f]) / max;
  const graph = { centrality, neighbours: neighbours.map((set) => Int32Array.from(set)) };
  graphCache.set(index, graph);
  return graph;
}

/**
 * For a sentence: each candidate's score × (1 + centrality weight × its file's centrality), then
 * each file's best chunk + neighbour weight × the best score among its graph neighbours' chunks.
 */
export function boostByImports(index: CodeIndex, scores: Map<number, number>): void {
  const centralityWeight = tuned("centralityWeight", CENTRALITY_WEIGHT);
  const neighbourWeight = tuned("neighbourWeight", NEIGHBOUR_WEIGHT);
  if (centralityWeight <= 0 && neighbourWeight <= 0) return;
  const graph = importGraph(index);
  if (centralityWeight > 0)
    for (const [chunk, score] of scores)
      scores.set(chunk, score * (1 + centralityWeight * graph.centrality[index.chunkFile[chunk]]));
  if (neighbourWeight <= 0) return;
  const fileBest = new Map<number, { chunk: number; score: number }>();
  for (const [chunk, score] of scores) {
    const file = index.chunkFile[chunk];
    const best = fileBest.get(file);
    if (!best || score > best.score) fileBest.set(file, { chunk, score });
  }
  for (const [file, best] of fileBest) {
    let neighbourBest = 0;
    for (const other of graph.neighbours[file])
      neighbourBest = Math.max(neighbourBest, fileBest.get(other)?.score ?? 0);
    if (neighbourBest > 0) scores.set(best.chunk, best.score + neighbourWeight * neighbourBest);
  }
}
