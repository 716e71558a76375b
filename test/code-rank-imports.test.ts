import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openIndex } from "../src/code/code-search.ts";
import { importGraph } from "../src/code/rank/imports.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
import { searchIndex } from "../src/code/search.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { tempDir } from "./support/helpers.ts";

/** One small project per import syntax; each file names its imports the way its language does. */
const FILES: Record<string, string> = {
  "go.mod": "module example.com/shop\n\ngo 1.22\n",
  "cart/cart.go":
    'package cart\n\nimport (\n\t"fmt"\n\t"example.com/shop/money"\n)\n\nfunc Total() { fmt.Println(money.Zero) }\n',
  "money/money.go": "package money\n\nconst Zero = 0\n",
  "web/app.ts":
    'import { route } from "./router";\nimport { log } from "../shared/log.js";\nexport const app = route(log);\n',
  "web/router.ts": "export function route(f) { return f; }\n",
  "shared/log.ts": "export function log(x) { return x; }\n",
  "pkg/__init__.py": "",
  "pkg/server.py":
    "from .handlers import handle\nfrom pkg import codec\n\ndef serve():\n    return handle(codec)\n",
  "pkg/handlers.py": "def handle(x):\n    return x\n",
  "pkg/codec.py": "def encode(x):\n    return x\n",
  "src/main.rs": "mod parser;\nuse crate::lexer::Token;\nfn main() {}\n",
  "src/parser.rs": "pub fn parse() {}\n",
  "src/lexer.rs": "pub struct Token;\n",
  "core/src/main/scala/shop/Checkout.scala":
    "package shop\n\nimport shop.pricing.{Discount, Tax}\n\nobject Checkout\n",
  "core/src/main/scala/shop/pricing/Discount.scala": "package shop.pricing\n\nobject Discount\n",
  "core/src/main/scala/shop/pricing/Tax.scala": "package shop.pricing\n\nobject Tax\n",
  "lib/buffer.c": '#include "buffer.h"\n#include <stdio.h>\nint buffer_len(void) { return 0; }\n',
  "lib/buffer.h": "int buffer_len(void);\n",
  "lib/stdio_wrap.c": "int nothing(void) { return 0; }\n",
};

async function indexOf(files: Record<string, string>): Promise<CodeIndex> {
  const root = tempDir("triforge-repo-");
  mkdirSync(join(root, ".git"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return openIndex(root, { refresh: "now" });
}

/**
 * Two files that say the same about evicting entries: `lru.ts`, which three files import, and
 * `fifo.ts`, which nothing imports. Walk order puts fifo.ts first, so only the graph separates them.
 */
const TWINS: Record<string, string> = {
  "src/fifo.ts":
    "// evict the stale cache entries\nexport function evictStale(entries) { return entries; }\n",
  "src/lru.ts": "// evict the stale cache entries\nexport function evictStale(entries) { return entries; }\n",
  "src/api.ts": 'import { evictStale } from "./lru";\nexport const api = evictStale;\n',
  "src/jobs.ts": 'import { evictStale } from "./lru";\nexport const jobs = evictStale;\n',
  "src/admin.ts": 'import { evictStale } from "./lru";\nexport const admin = evictStale;\n',
};

let index: CodeIndex;
let twins: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
  index = await indexOf(FILES);
  twins = await indexOf(TWINS);
});
afterEach(() => setTuning({}));

const neighboursOf = (path: string) => {
  const graph = importGraph(index);
  const file = index.files.findIndex((f) => f.path === path);
  expect(file).toBeGreaterThanOrEqual(0);
  return [...graph.neighbours[file]].map((f) => index.files[f].path).sort();
};

describe("the import graph between files", () => {
  test("Go: a package path inside the module (go.mod) names that folder's files; the standard library nothing", () => {
    expect(neighboursOf("cart/cart.go")).toEqual(["money/money.go"]);
  });

  test("TypeScript: relative specifiers, with or without a .js extension", () => {
    expect(neighboursOf("web/app.ts")).toEqual(["shared/log.ts", "web/router.ts"]);
  });

  test("Python: relative and absolute `from … import`, a name imported from a package being its module", () => {
    expect(neighboursOf("pkg/server.py")).toEqual(["pkg/__init__.py", "pkg/codec.py", "pkg/handlers.py"]);
  });

  test("Rust: `mod x;` and `use crate::…` name the module files", () => {
    expect(neighboursOf("src/main.rs")).toEqual(["src/lexer.rs", "src/parser.rs"]);
  });

  test("Scala: a brace import names each listed file", () => {
    expect(neighboursOf("core/src/main/scala/shop/Checkout.scala")).toEqual([
      "core/src/main/scala/shop/pricing/Discount.scala",
      "core/src/main/scala/shop/pricing/Tax.scala",
    ]);
  });

  test("C: a quoted include names the header; a system include names no file", () => {
    expect(neighboursOf("lib/buffer.c")).toEqual(["lib/buffer.h"]);
    expect(neighboursOf("lib/stdio_wrap.c")).toEqual([]);
  });

  test("centrality is in-degree, log-scaled to 0..1: imported files above files nothing imports", () => {
    const { centrality } = importGraph(index);
    const of = (path: string) => centrality[index.files.findIndex((f) => f.path === path)];
    expect(Math.max(...centrality)).toBe(1);
    expect(of("money/money.go")).toBeGreaterThan(0);
    expect(of("web/app.ts")).toBe(0);
  });
});

describe("the import graph in ranking", () => {
  const firstFile = (query: string) => {
    const [top] = searchIndex(twins, query, undefined, { topK: 5, content: "code" });
    return twins.files[twins.chunkFile[top.chunk]].path;
  };

  test("of two files equal on the words, the one many files import ranks first for a sentence", () => {
    // Feedback off: the importers' `./lru` would otherwise expand the query towards lru.ts.
    setTuning({ feedbackWeight: 0 });
    expect(firstFile("how are stale cache entries evicted")).toBe("src/lru.ts");
    setTuning({ feedbackWeight: 0, centralityWeight: 0, neighbourWeight: 0 });
    expect(firstFile("how are stale cache entries evicted")).toBe("src/fifo.ts");
  });

  test("either signal alone separates them: in-degree, and the share from the files that import it", () => {
    setTuning({ feedbackWeight: 0, neighbourWeight: 0 });
    expect(firstFile("how are stale cache entries evicted")).toBe("src/lru.ts");
    setTuning({ feedbackWeight: 0, centralityWeight: 0 });
    expect(firstFile("how are stale cache entries evicted")).toBe("src/lru.ts");
  });
});
