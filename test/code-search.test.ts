import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  findRelated,
  indexRepository,
  locateRepository,
  openIndex,
  searchCode,
  searchLoaded,
} from "../src/code/code-search.ts";
import { definesSymbol, definesType, linesAround } from "../src/code/rank/definitions.ts";
import { stemCovered } from "../src/code/rank/path-words.ts";
import { pathPenalty, STRONG_PATH_PENALTY } from "../src/code/rank/penalties.ts";
import { refreshIndex } from "../src/code/refresh.ts";
import { indexFile, indexLayout, loadIndex } from "../src/code/store.ts";
import { errorLogPath } from "../src/home/paths.ts";
import { tempDir } from "./support/helpers.ts";
import { seededRandom } from "./support/random.ts";

beforeAll(() => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
});

/** A repository (a `.git` folder: code search indexes projects only) holding `files`. */
function repo(files: Record<string, string | Uint8Array>): string {
  const root = plainFolder(files);
  if (!(".git" in files)) mkdirSync(join(root, ".git"));
  return root;
}

/** A folder with no project marker. */
function plainFolder(files: Record<string, string | Uint8Array>): string {
  const root = tempDir("triforge-repo-");
  write(root, files);
  return root;
}

function write(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

const filler = (topic: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) => `export function ${topic}Helper${i}(x: number): number {\n  return x * ${i};\n}\n`,
  ).join("\n");

describe("ranking", () => {
  test("the chunk that defines a queried symbol beats chunks that only mention it", async () => {
    const root = repo({
      "src/callers.ts": `import { parseConfig } from "./config";\n// parseConfig parseConfig parseConfig: called everywhere\nexport const a = parseConfig("a");\nexport const b = parseConfig("b");\nexport const c = parseConfig("c");\n`,
      "src/more-callers.ts": `// we call parseConfig here too; parseConfig is great\nconst cfg = parseConfig(process.env.CONFIG);\n`,
      "src/config.ts": `${filler("unrelated", 3)}\nexport function parseConfig(text: string): Record<string, string> {\n  return Object.fromEntries(text.split("\\n").map((l) => l.split("=")));\n}\n`,
    });
    const { hits } = await searchCode(root, "parseConfig", { topK: 3 });
    expect(hits[0].file_path).toBe("src/config.ts");
    expect(hits[0].content).toContain("export function parseConfig");
  });

  test("a symbol's own file (Widget.cs) beats the partial-class files named after it (Widget.Async.cs)", async () => {
    const part = (name: string) =>
      `namespace Shop {\n    public static partial class Widget {\n        public static int ${name}Count(int widgets) => widgets + 1;\n    }\n}\n`;
    const root = repo({
      "Shop/Widget.Async.cs": part("Async"),
      "Shop/Widget.Batch.cs": part("Batch"),
      "Shop/Widget.Cache.cs": part("Cache"),
      "Shop/Widget.cs": part("Main"),
    });
    const { hits } = await searchCode(root, "Widget", { topK: 4 });
    expect(hits[0].file_path).toBe("Shop/Widget.cs");
    expect(hits.map((h) => h.file_path).sort()).toEqual([
      "Shop/Widget.Async.cs",
      "Shop/Widget.Batch.cs",
      "Shop/Widget.Cache.cs",
      "Shop/Widget.cs",
    ]);
  });

  test("a C header ranks below the .c file it declares; a C++ header beside its .cc does not", async () => {
    const header =
      "/* Progress meter: report transfer progress to the user. */\nvoid progress_report(struct transfer *t);\nvoid progress_reset(struct transfer *t);\n";
    const source = (include: string) =>
      `#include "${include}"\n\nvoid progress_report(struct transfer *t)\n{\n  fprintf(stderr, "%ld bytes\\n", t->bytes);\n}\n`;
    const files = async (root: string) =>
      (await searchCode(root, "report transfer progress to the user", { topK: 2 })).hits.map(
        (h) => h.file_path,
      );
    const c = repo({ "progress.h": header, "progress.c": source("progress.h") });
    expect(await files(c)).toEqual(["progress.c", "progress.h"]);
    const cpp = repo({ "progress.h": header, "progress.cc": source("progress.h") });
    expect(await files(cpp)).toEqual(["progress.h", "progress.cc"]);
  });

  test("a capitalised word of a sentence finds the type of that name; a namespace of that name does not count", async () => {
    const root = repo({
      "core/Column.kt":
        "package shop.core\n\nclass Column<T>(val table: Table, val name: String) {\n    fun nullable(): Column<T?> = Column(table, name)\n}\n",
      "core/ColumnType.kt":
        "package shop.core\n\n/** Column types: the definition of each column type and how a column of that type reads a value. */\nabstract class ColumnType<T> {\n    abstract fun readColumn(value: Any): T\n}\n",
      "core/ColumnTypes.kt":
        "package shop.core\n\n/** More column types: column type definitions for text columns. */\nclass TextColumnType : ColumnType<String>() {\n    override fun readColumn(value: Any) = value.toString()\n}\n",
    });
    const { hits } = await searchCode(root, "Column definition and column types", { topK: 3 });
    expect(hits[0].file_path).toBe("core/Column.kt");

    const csharp = repo({
      "Store/Orders.cs":
        "namespace Store\n{\n    // Orders placed in the shop: an order list per customer of the shop.\n    public class Orders { }\n}\n",
      "Shop/Cart.cs":
        "namespace Shop\n{\n    // Items a customer keeps for an order.\n    public class Cart { }\n}\n",
    });
    const orders = await searchCode(csharp, "Shop orders per customer", { topK: 2 });
    expect(orders.hits[0].file_path).toBe("Store/Orders.cs");
  });

  test("definesSymbol: receivers and type parameters allowed; re-export specifiers and trait impls are not definitions", () => {
    const cases: [string, string, boolean][] = [
      ["fun <T : Comparable<T>> Expression<T>.greater(other: T): Op<Boolean> = x", "greater", true],
      ["val <T> Column<T>.nullable get() = 1", "nullable", true],
      ["func (mx *Mux) Route(pattern string, fn func(r Router)) Router {", "Route", true],
      ["pub trait FromRequest<S>: Sized {", "FromRequest", true],
      ["impl Form {", "Form", true],
      ["export {\n  type MiddlewareBuilder as TRPCMiddlewareBuilder,\n}", "MiddlewareBuilder", false],
      ["import { type Foo } from './x'", "Foo", false],
      ["impl<S> FromRequest<S> for Form {", "FromRequest", false],
    ];
    for (const [text, name, defines] of cases)
      expect([text, definesSymbol(text, name)]).toEqual([text, defines]);
  });

  test("a C function defined with its return type on the line above (GNU/BSD style) is found as the definition", async () => {
    const calls = Array.from({ length: 6 }, (_, i) => `  parse_header (&bufs[${i}]);`).join("\n");
    const root = repo({
      "src/reader.c": `#include "buf.h"\n\n/* parse_header is called for every buffer */\nvoid read_all (struct buf *bufs)\n{\n${calls}\n}\n`,
      "src/proto.c": `#include "buf.h"\n\nstatic int\nparse_header (struct buf *b)\n{\n  return b->len > 4 ? b->data[0] : -1;\n}\n`,
    });
    const { hits } = await searchCode(root, "parse_header", { topK: 2 });
    expect(hits[0].file_path).toBe("src/proto.c");
    expect(definesSymbol("extern int\nparse_header (struct buf *b);", "parse_header")).toBe(false);
    expect(definesSymbol("  return\nparse_header (b);", "parse_header")).toBe(false);
  });

  test("linesAround keeps each line holding the name with the line above it, separate runs apart", () => {
    const text = "a\nb foo\nc\nd\ne\nfoo f\nfoo g\nh\ni\nj foo";
    expect(linesAround(text, "foo")).toBe("a\nb foo\n\ne\nfoo f\nfoo g\n\ni\nj foo");
    expect(linesAround("foo first\nx", "foo")).toBe("foo first");
  });

  test("a re-export barrel does not outrank the file that defines the symbol", async () => {
    const reexports = Array.from(
      { length: 12 },
      (_, i) => `  type Widget${i}Builder as PublicWidget${i}Builder,`,
    );
    const root = repo({
      "src/index.ts": `export {\n${reexports.join("\n")}\n  type WidgetBuilder as PublicWidgetBuilder,\n  type WidgetBuilderOptions,\n} from "./shapes";\n// WidgetBuilder: the public WidgetBuilder\n`,
      "src/shapes.ts": `${filler("shape", 4)}\nexport interface WidgetBuilder {\n  build(): string;\n}\n`,
    });
    const { hits } = await searchCode(root, "WidgetBuilder", { topK: 2 });
    expect(hits[0].file_path).toBe("src/shapes.ts");
    expect(hits[0].content).toContain("export interface WidgetBuilder");
  });

  test("definesType: type definitions and C++ aliases count; namespaces, imports and functions do not", () => {
    expect(definesType("sealed class Op<T> : Expression<T>()", "Op")).toBe(true);
    expect(definesType("pub struct Router<S = ()> {", "Router")).toBe(true);
    expect(definesType("template <typename T>\nusing Hash = absl::hash_internal::Hash<T>;", "Hash")).toBe(
      true,
    );
    expect(definesType("using Shop;\nnamespace Shop { }", "Shop")).toBe(false);
    expect(definesType("fun Column(name: String) = 1\nval Column = 2", "Column")).toBe(false);
  });

  test("definesType on a minified line reads only the words just before the name", () => {
    // A 300 KB line: the keyword right before the name still counts, one far back does not reach it.
    const minified = `${"var a=1;".repeat(40_000)} class Foo{}`;
    expect(definesType(minified, "Foo")).toBe(true);
    expect(definesType(`class ${"x".repeat(400)} Foo{}`, "Foo")).toBe(false);
    // Cut inside a long word: half of it is not taken for a keyword ("xclass" is no "class").
    expect(definesType(`${"x".repeat(400)}class Foo{}`, "Foo")).toBe(false);
  });

  test("a file named only by the query's words (transfer.c) beats one whose name merely contains one", async () => {
    // The other file leads by BM25, though not by the margin that lifts a clear lexical winner.
    const root = repo({
      "lib/transfer.c":
        '#include "transfer.h"\n\nint send_buffer(struct conn *c)\n{\n  /* data sent on the connection during a transfer */\n  return conn_write(c, c->buf, c->len);\n}\n',
      "lib/transfer_trace.c":
        '#include "trace.h"\n\n/* Trace: log how much data was sent and received during a transfer. */\nvoid trace_data_sent(struct conn *c, long sent)\n{\n  infof(c, "data sent %ld", sent);\n}\n',
    });
    const { hits } = await searchCode(root, "how data is sent during a transfer", { topK: 2 });
    expect(hits.map((h) => h.file_path)).toEqual(["lib/transfer.c", "lib/transfer_trace.c"]);
    expect(stemCovered(new Set(["data", "sent", "transfer"]), "lib/transfer.c")).toBe(true);
    expect(stemCovered(new Set(["data", "sent", "transfer"]), "lib/transfer_trace.c")).toBe(false);
  });

  test("a package's root file (mod.rs, index.ts, __init__.py, init.lua) is named by its folder", async () => {
    // map_request.rs leads by BM25, though not by the margin that lifts a clear lexical winner.
    const root = repo({
      "src/middleware/mod.rs":
        "//! Utilities for writing middleware: layers wrap the router's services, as a layer wraps any service.\n\nmod from_fn;\nmod map_request;\n\npub use self::from_fn::from_fn;\npub use self::map_request::map_request;\n",
      "src/middleware/map_request.rs":
        "//! Middleware layers that map the request before the router: a middleware layer wraps the router.\n\npub fn map_request<F>(f: F) -> MapRequestLayer<F> {\n    MapRequestLayer { f }\n}\n",
    });
    const { hits } = await searchCode(root, "how middleware layers wrap the router", { topK: 2 });
    expect(hits[0].file_path).toBe("src/middleware/mod.rs");
    const keywords = new Set(["middleware", "layers"]);
    for (const path of [
      "src/middleware/mod.rs",
      "web/middleware/index.ts",
      "pkg/middleware/__init__.py",
      "lua/middleware/init.lua",
    ])
      expect([path, stemCovered(keywords, path)]).toEqual([path, true]);
    expect(stemCovered(keywords, "mod.rs")).toBe(false);
  });

  test("a test file ranks below the implementation it tests", async () => {
    const body =
      "export function computeInvoiceTotal(lines: { price: number; qty: number }[]): number {\n  return lines.reduce((sum, l) => sum + l.price * l.qty, 0);\n}\n";
    const root = repo({
      "src/invoice.ts": body,
      "test/invoice.test.ts": `// invoice total computation tests\n${body}\ntest("computeInvoiceTotal sums invoice lines", () => {});\n`,
    });
    const { hits } = await searchCode(root, "compute the invoice total from its lines", { topK: 2 });
    expect(hits.map((h) => h.file_path)).toEqual(["src/invoice.ts", "test/invoice.test.ts"]);
  });

  test("benchmarks, C++ test headers and Rust benches/ rank like tests, below the code they exercise", async () => {
    const code = "int JoinStrings(const char* a, const char* b) {\n  return concat_join(a, b);\n}\n";
    const exercise = (name: string) =>
      `// ${name}: join strings, concat join of strings\nvoid ${name}() {\n  JoinStrings("a", "b"); JoinStrings("c", "d");\n}\n`;
    const root = repo({
      "strings/join.cc": code,
      "strings/join_benchmark.cc": exercise("BM_JoinStrings"),
      "strings/join_test.h": exercise("JoinStringsTestHelper"),
      "benches/join.rs": exercise("bench_join_strings"),
      "FooBenchmark.java": exercise("joinStringsBenchmark"),
    });
    const { hits } = await searchCode(root, "join strings concat", { topK: 5 });
    expect(hits[0].file_path).toBe("strings/join.cc");
    for (const path of [
      "strings/join_benchmark.cc",
      "strings/join_test.h",
      "benches/join.rs",
      "FooBenchmark.java",
    ])
      expect([path, pathPenalty(path)]).toEqual([path, STRONG_PATH_PENALTY]);
    for (const path of ["src/benchmark.rs", "bench.go", "strings/join.h"])
      expect([path, pathPenalty(path)]).toEqual([path, 1]);
  });

  test("results carry file, lines and the exact content of those lines; snippets are cut to max lines", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `  const step${i} = ${i}; // retry backoff step`);
    const text = `export function scheduleRetry() {\n${lines.join("\n")}\n  return "retryBackoffMarker";\n}\n`;
    const root = repo({ "lib/retry.ts": text });
    const { hits } = await searchCode(root, "retryBackoffMarker", { topK: 1, maxSnippetLines: 4 });
    const fileLines = text.split("\n");
    expect(hits[0].end_line - hits[0].start_line).toBe(3);
    expect(hits[0].content).toBe(fileLines.slice(hits[0].start_line - 1, hits[0].end_line).join("\n"));
    expect(hits[0].content).toContain("retryBackoffMarker");
  });

  test("--content filters by kind: docs only when asked", async () => {
    const root = repo({
      "README.md": "# Deployment guide\nHow to deploy the frobnicator service.\n",
      "src/deploy.ts": "export const frobnicatorDeploy = 1;\n",
    });
    expect((await searchCode(root, "deploy frobnicator")).hits.map((h) => h.file_path)).toEqual([
      "src/deploy.ts",
    ]);
    expect(
      (await searchCode(root, "deploy frobnicator", { content: "docs" })).hits.map((h) => h.file_path),
    ).toEqual(["README.md"]);
    expect((await searchCode(root, "deploy frobnicator", { content: "all" })).hits).toHaveLength(2);
  });

  test("find-related returns other chunks like the given one, never the chunk itself", async () => {
    const handler = (name: string) =>
      `export async function handle${name}Request(request: Request): Promise<Response> {\n  const body = await request.json();\n  validatePayload(body);\n  return new Response(JSON.stringify({ ok: true, kind: "${name}" }));\n}\n`;
    const root = repo({
      "api/users.ts": handler("User"),
      "api/orders.ts": handler("Order"),
      "math/geometry.ts":
        "export const circleArea = (r: number) => Math.PI * r * r;\nexport const squareArea = (s: number) => s * s;\n",
    });
    const result = await findRelated(root, "api/users.ts", 2, { topK: 2 });
    expect(result.source?.file_path).toBe("api/users.ts");
    expect(result.hits[0].file_path).toBe("api/orders.ts");
    expect(
      result.hits.some((h) => h.file_path === "api/users.ts" && h.start_line === result.source?.start_line),
    ).toBe(false);
    await expect(findRelated(root, "api/missing.ts", 1)).rejects.toThrow("not an indexed file");
  });
});

describe("the index", () => {
  test("is incremental: only changed files are re-read and re-chunked, deleted files vanish", async () => {
    const root = repo({
      "a.ts": "export const alphaValue = 1;\n",
      "b.ts": "export const betaValue = 2;\n",
      "c.ts": "export const gammaValue = 3;\n",
    });
    const first = await refreshIndex(root);
    expect(first.report.changed).toBe(3);
    const again = await refreshIndex(root);
    expect(again.report.changed).toBe(0);

    write(root, { "b.ts": "export const betaRenamed = 22;\n" });
    rmSync(join(root, "c.ts"));
    const third = await refreshIndex(root);
    expect(third.report).toMatchObject({ changed: 1, removed: 1, files: 2 });
    expect(third.files.map((f) => f.path).sort()).toEqual(["a.ts", "b.ts"]);
    // The index on disk equals a fresh build of the same files.
    const fresh = await refreshIndex(root, { force: true });
    const saved = loadIndex(third.root, third.modelId)!;
    const terms = (index: typeof fresh) => {
      const out: Record<string, number> = {};
      index.bm25.terms.forEach((t, i) => {
        out[t] = index.bm25.offsets[i + 1] - index.bm25.offsets[i];
      });
      return out;
    };
    expect(terms(saved)).toEqual(terms(fresh));
    expect([...saved.texts].sort()).toEqual([...fresh.texts].sort());

    const { hits } = await searchCode(root, "betaRenamed", { topK: 5 });
    expect(hits[0].file_path).toBe("b.ts");
    expect((await searchCode(root, "gammaValue", { topK: 5 })).hits.map((h) => h.file_path)).not.toContain(
      "c.ts",
    );
  });

  test("a file touched but unchanged is not re-chunked", async () => {
    const root = repo({ "x.py": "def unchanged():\n    return 1\n" });
    await refreshIndex(root);
    const later = new Date(Date.now() + 5000);
    Bun.spawnSync(["touch", "-d", later.toISOString(), join(root, "x.py")]);
    const touched = await refreshIndex(root);
    expect(touched.report.changed).toBe(0);
  });

  test("a search indexes a fresh repository inline and never answers 'not indexed'", async () => {
    const root = repo({ "main.go": "package main\n\nfunc startServer() {}\n" });
    expect(existsSync(indexFile(root))).toBe(false);
    const { hits, index } = await searchCode(root, "startServer");
    expect(hits[0].file_path).toBe("main.go");
    expect(index.files).toBe(1);
    expect(existsSync(indexFile(root))).toBe(true);
  });

  test("a damaged index file is rebuilt, not trusted", async () => {
    const root = repo({ "k.rb": "def kappa_method\n  :kappa\nend\n" });
    const built = await indexRepository(root);
    writeFileSync(indexFile((await openIndex(root)).root), "TFCODE01garbage");
    const rebuilt = await refreshIndex((await openIndex(root)).root);
    expect(rebuilt.report.changed).toBe(built.files);
  });

  test("a directory where index.bin should be is removed and the index rebuilt in its place", async () => {
    const root = realpathSync(repo({ "k.rb": "def kappa_method\n  :kappa\nend\n" }));
    await refreshIndex(root);
    const file = indexFile(root);
    rmSync(file);
    mkdirSync(join(file, "inside"), { recursive: true });
    const rebuilt = await refreshIndex(root);
    expect(rebuilt.report.changed).toBe(1);
    expect(readFileSync(file).subarray(0, 8).toString()).toBe("TFCODE02");
    expect(readFileSync(errorLogPath(), "utf8")).toContain(`${file} is damaged`);
  });

  test("64 garbled bytes anywhere in index.bin (its header or any section) are a rebuild with one line in errors.log, never served", async () => {
    const root = repo({
      "src/invoice.ts": `${filler("billing", 12)}\nexport function parseInvoice(text: string) {\n  return text.split(";");\n}\n`,
      "src/retry.py": "def schedule_retry(delay):\n    return delay * 2\n",
      "docs/guide.md": "# Guide\n\nInvoices are parsed on arrival.\n",
    });
    const first = await searchCode(root, "parse the invoice text", { content: "all" });
    const file = indexFile(first.repo);
    const clean = readFileSync(file);
    const { header, headerBytes, sections } = indexLayout(clean);
    const regions = [{ name: "header", ...headerBytes }, ...sections];
    const log = errorLogPath();
    const logLines = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
    const before = logLines().length;
    const random = seededRandom(18);
    const trials = 3;
    for (const { name, start, end } of regions) {
      expect([name, end - start > 0]).toEqual([name, true]);
      for (let trial = 0; trial < trials; trial++) {
        const garbled = Buffer.from(clean);
        const length = Math.min(64, end - start);
        const at = start + Math.floor(random() * (end - start - length + 1));
        // XOR with 1–255 changes every byte it touches.
        for (let i = 0; i < length; i++) garbled[at + i] ^= 1 + Math.floor(random() * 255);
        writeFileSync(file, garbled);
        expect([name, loadIndex(first.repo, header.modelId)]).toEqual([name, undefined]);
        expect(existsSync(file)).toBe(false);
      }
    }
    const lines = logLines().slice(before);
    expect(lines.length).toBe(regions.length * trials);
    for (const line of lines)
      expect(line).toMatch(/\[code index\] .*index\.bin is damaged \(.*\); rebuilding it/);
    writeFileSync(file, clean);
    expect(loadIndex(first.repo, header.modelId)).toBeDefined();
    // A process without the index in memory rebuilds it from the files, to the same answers.
    rmSync(file);
    const rebuilt = await refreshIndex(first.repo);
    expect(rebuilt.report.changed).toBe(3);
    const again = await searchLoaded(rebuilt, "parse the invoice text", { content: "all" });
    expect(again.hits).toEqual(first.hits);
  });
});

describe("the repository of a folder", () => {
  test("is the nearest folder above with .git (folder or worktree file) or .triforge/config.json; none: the folder itself", () => {
    const root = realpathSync(
      repo({ "src/lib/deep/a.ts": "x", "pkg/.triforge/config.json": "{}", "pkg/b.ts": "y" }),
    );
    expect(locateRepository(join(root, "src/lib/deep"))).toEqual({
      root,
      scope: "src/lib/deep",
      project: true,
    });
    expect(locateRepository(root)).toEqual({ root, scope: "", project: true });
    // The nearest marker wins: an activated project inside the repository is its own root.
    expect(locateRepository(join(root, "pkg"))).toEqual({
      root: join(root, "pkg"),
      scope: "",
      project: true,
    });
    const worktree = realpathSync(repo({ ".git": "gitdir: /elsewhere/.git/worktrees/w\n", "src/c.ts": "z" }));
    expect(locateRepository(join(worktree, "src"))).toEqual({ root: worktree, scope: "src", project: true });
    const plain = realpathSync(plainFolder({ "src/d.ts": "w" }));
    expect(locateRepository(join(plain, "src"))).toEqual({
      root: join(plain, "src"),
      scope: "",
      project: false,
    });
    expect(() => locateRepository(join(plain, "nope"))).toThrow("does not exist");
  });

  test("a search in a subfolder returns its files only, from the repository's one index, paths from the root", async () => {
    const root = realpathSync(
      repo({
        "src/lib/parse.ts": "export function parseConfig(text: string) {\n  return text.split(',');\n}\n",
        "src/app/main.ts":
          "import { parseConfig } from '../lib/parse';\nexport const config = parseConfig('a,b');\n",
      }),
    );
    const sub = await searchCode(join(root, "src/app"), "parseConfig");
    expect(sub).toMatchObject({ repo: root, scope: "src/app" });
    expect(sub.hits.map((h) => h.file_path)).toEqual(["src/app/main.ts"]);
    const whole = await searchCode(root, "parseConfig");
    expect(whole.scope).toBeUndefined();
    expect(whole.hits[0].file_path).toBe("src/lib/parse.ts");
    expect(existsSync(indexFile(root))).toBe(true);
    expect(existsSync(indexFile(join(root, "src/app")))).toBe(false);
    const related = await findRelated(join(root, "src/lib"), "parse.ts", 1, { topK: 5 });
    expect(related.source?.file_path).toBe("src/lib/parse.ts");
    expect(related.hits).toEqual([]);
  });

  test("a folder the repository ignores (a scratch project, a vendored checkout) is searched as its own root", async () => {
    const root = realpathSync(
      repo({
        ".gitignore": "scratch/\n",
        "src/app.ts": "export const app = 1;\n",
        "scratch/widget.ts": "export function parseWidget(text: string) {\n  return text.trim();\n}\n",
      }),
    );
    const scratch = await searchCode(join(root, "scratch"), "parse widget");
    expect(scratch.repo).toBe(join(root, "scratch"));
    expect(scratch.scope).toBeUndefined();
    expect(scratch.hits.map((h) => h.file_path)).toEqual(["widget.ts"]);
    // The repository's own index still leaves it out.
    expect((await searchCode(root, "parse widget")).hits.map((h) => h.file_path)).not.toContain(
      "scratch/widget.ts",
    );
  });
});

describe("bounded indexes", () => {
  test("a folder that is not a project is refused before anything is read, naming the override; allowLarge indexes it", async () => {
    const plain = plainFolder({ "notes/todo.ts": "export function planTheWeek() {\n  return 7;\n}\n" });
    const refusal = (await searchCode(plain, "planTheWeek").catch((e) => e)) as Error;
    expect(refusal.message).toContain("is not a project");
    expect(refusal.message).toContain("--allow-large");
    expect(refusal.message).toContain("allow_large: true");
    expect(existsSync(indexFile(realpathSync(plain)))).toBe(false);
    await expect(indexRepository(plain)).rejects.toThrow("is not a project");
    const allowed = await searchCode(plain, "planTheWeek", { allowLarge: true });
    expect(allowed.hits[0].file_path).toBe("notes/todo.ts");
    // A project file makes a project, found from a folder inside it too.
    const node = realpathSync(plainFolder({ "package.json": "{}", "src/app.ts": "export const app = 1;\n" }));
    expect(locateRepository(join(node, "src"))).toEqual({ root: node, scope: "src", project: true });
    expect((await searchCode(join(node, "src"), "app")).hits[0].file_path).toBe("src/app.ts");
  });

  test("the home folder (even a dotfiles repository) and / are refused, whatever they hold", async () => {
    const previous = process.env.HOME;
    const home = realpathSync(
      repo({ "package.json": "{}", "project/.git/HEAD": "ref", "project/a.ts": "x" }),
    );
    process.env.HOME = home;
    try {
      expect(locateRepository(home).project).toBe(false);
      await expect(searchCode(home, "anything")).rejects.toThrow(`${home} is the home folder`);
      await expect(searchCode("/", "anything")).rejects.toThrow("/ is the file-system root");
      expect(existsSync(indexFile("/"))).toBe(false);
      expect(existsSync(indexFile(home))).toBe(false);
      expect(locateRepository(join(home, "project")).project).toBe(true);
    } finally {
      process.env.HOME = previous;
    }
  });

  test("an index stops at the cap of files, bytes or seconds; searches say which cap and how to raise it; the next pass goes on", async () => {
    const root = repo(
      Object.fromEntries(
        Array.from({ length: 6 }, (_, i) => [
          `src/m${i}.ts`,
          `export function cappedHelper${i}(x: number) {\n  return x + ${i};\n}\n`,
        ]),
      ),
    );
    const unlimited = { maxFiles: 1e9, maxBytes: 1e12, maxSeconds: 1e6 };
    const byFiles = await refreshIndex(root, { force: true, limits: { ...unlimited, maxFiles: 2 } });
    expect(byFiles.report).toMatchObject({ files: 2, capped: { name: "files", limit: 2 } });
    const noted = await searchLoaded(byFiles, "cappedHelper1");
    expect(noted.note).toContain("stopped at 2 files, the cap per index (TRIFORGE_CODE_MAX_FILES raises it)");
    const byBytes = await refreshIndex(root, { force: true, limits: { ...unlimited, maxBytes: 130 } });
    expect(byBytes.report).toMatchObject({ files: 2, capped: { name: "bytes" } });
    expect((await searchLoaded(byBytes, "x")).note).toContain("TRIFORGE_CODE_MAX_BYTES raises it");
    const byTime = await refreshIndex(root, { force: true, limits: { ...unlimited, maxSeconds: 0 } });
    expect(byTime.report).toMatchObject({ files: 0, capped: { name: "seconds", limit: 0 } });
    expect((await searchLoaded(byTime, "x")).note).toContain("indexed by the next search");
    // The next pass (default caps) keeps what was done and indexes the rest; no note is left.
    const whole = await refreshIndex(root, { previous: byFiles });
    expect(whole.report).toMatchObject({ files: 6, changed: 4 });
    expect(whole.report.capped).toBeUndefined();
    expect((await searchLoaded(whole, "cappedHelper1")).note).toBeUndefined();
    // The environment sets the caps of a process.
    process.env.TRIFORGE_CODE_MAX_FILES = "3";
    try {
      const other = repo({
        "a.ts": "export const a = 1;\n",
        "b.ts": "export const b = 2;\n",
        "c.ts": "1",
        "d.ts": "2",
      });
      const result = await searchCode(other, "export const");
      expect(result.index).toMatchObject({ files: 3, capped: { name: "files", limit: 3 } });
      expect(result.note).toContain("TRIFORGE_CODE_MAX_FILES");
    } finally {
      delete process.env.TRIFORGE_CODE_MAX_FILES;
    }
  });
});

describe("bad input", () => {
  test("a missing path or a file instead of a folder is a clear error", async () => {
    const root = repo({ "f.ts": "x" });
    await expect(searchCode(join(root, "nope"), "x")).rejects.toThrow("does not exist");
    await expect(searchCode(join(root, "f.ts"), "x")).rejects.toThrow("is not a directory");
  });

  test("binary files are skipped and counted; invalid UTF-8 is indexed with replacement characters and counted", async () => {
    const root = repo({
      "blob.ts": new Uint8Array([0x63, 0x6f, 0x6e, 0x73, 0x74, 0x00, 0x01, 0x02]),
      "latin1.ts": new Uint8Array([
        ...new TextEncoder().encode("export const caf"),
        0xe9,
        ...new TextEncoder().encode(" = 'uniqueLatinMarker';\n"),
      ]),
    });
    const index = await refreshIndex(root);
    expect(index.report.skipped.binary).toBe(1);
    expect(index.report.invalidUtf8).toBe(1);
    expect((await searchCode(root, "uniqueLatinMarker")).hits[0].file_path).toBe("latin1.ts");
  });

  test("an empty, punctuation-only or 10 KB query answers without crashing", async () => {
    const root = repo({
      "ops.ts": "export const pick = (o?: { a?: number }) => o?.a ?? 0;\nexport const arrow = () => 1;\n",
    });
    expect((await searchCode(root, "   ")).note).toBe("the query is empty");
    const punctuation = await searchCode(root, "?.");
    expect(punctuation.hits[0]?.file_path).toBe("ops.ts");
    const nothing = await searchCode(root, "#@!");
    expect(nothing.hits).toEqual([]);
    expect(nothing.note).toContain("nothing in 1 indexed files matches");
    const long = await searchCode(root, "arrow pick ".repeat(1000));
    expect(long.hits.length).toBeGreaterThan(0);
    expect(long.note).toContain("cut to its first");
  });

  test("an empty repository has an empty index and answers with a note", async () => {
    const root = repo({});
    const result = await searchCode(root, "anything");
    expect(result.hits).toEqual([]);
    expect(result.index.files).toBe(0);
  });
});
