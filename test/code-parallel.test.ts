import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { chunkSource } from "../src/code/chunk.ts";
import { ChunkEncoder, WordPieceSplitter } from "../src/code/chunk-encoder.ts";
import { parseWorkerCount, WORKER_MIN_CHARS } from "../src/code/chunk-pool.ts";
import { parserFor } from "../src/code/grammars.ts";
import { refreshIndex, resolveRepository } from "../src/code/refresh.ts";
import { loadModel } from "../src/embed/source.ts";
import { runBinary, tempDir } from "./support/helpers.ts";

beforeAll(() => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
});

/**
 * A repository with enough TypeScript and Python to parse (2 M characters) that the main thread
 * cannot finish before a worker (asked for with TRIFORGE_CODE_WORKERS) has started, plus files
 * without a grammar.
 */
function largeRepository(): string {
  const root = tempDir("triforge-large-");
  mkdirSync(join(root, ".git"));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  for (let f = 0; f < 150; f++) {
    const functions = Array.from(
      { length: 60 },
      (_, i) =>
        `/** Computes shipment ${f}.${i} totals. */\nexport function shipmentTotal${f}x${i}(items: number[]): number {\n  let sum = ${i};\n  for (const item of items) {\n    sum += item * ${f};\n  }\n  return sum;\n}\n`,
    );
    write(
      `src/module${f}/shipments.ts`,
      `${functions.join("\n")}\nexport class Ledger${f} {\n  total = 0;\n}\n`,
    );
    write(
      `py/pkg${f}/invoices.py`,
      Array.from(
        { length: 40 },
        (_, i) =>
          `def invoice_total_${f}_${i}(lines):\n    """Sums invoice ${i}."""\n    return sum(lines) * ${i}\n`,
      ).join("\n"),
    );
    write(`docs/notes${f}.md`, `# Notes ${f}\n\nShipments are grouped by ledger ${f}.\n`);
  }
  write(
    "src/special/payment_gateway.ts",
    "export function chargeCreditCard(amount: number) {\n  return amount;\n}\n",
  );
  return root;
}

describe("parallel parsing", () => {
  test("workers start by default only for large jobs, on more than one core; the setting overrides", () => {
    const saved = process.env.TRIFORGE_CODE_WORKERS;
    try {
      delete process.env.TRIFORGE_CODE_WORKERS;
      expect(parseWorkerCount(WORKER_MIN_CHARS - 1)).toBe(0);
      expect(parseWorkerCount(WORKER_MIN_CHARS)).toBe(Math.min(3, availableParallelism() - 1));
      process.env.TRIFORGE_CODE_WORKERS = "2";
      expect(parseWorkerCount(10)).toBe(2);
      process.env.TRIFORGE_CODE_WORKERS = "0";
      expect(parseWorkerCount(WORKER_MIN_CHARS * 10)).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.TRIFORGE_CODE_WORKERS;
      else process.env.TRIFORGE_CODE_WORKERS = saved;
    }
  });

  test("an index parsed with workers is exactly the index parsed on the main thread", async () => {
    const root = resolveRepository(largeRepository());
    let parallel: Awaited<ReturnType<typeof refreshIndex>>;
    let serial: Awaited<ReturnType<typeof refreshIndex>>;
    try {
      process.env.TRIFORGE_CODE_WORKERS = "1";
      parallel = await refreshIndex(root, { force: true });
      process.env.TRIFORGE_CODE_WORKERS = "0";
      serial = await refreshIndex(root, { force: true });
    } finally {
      delete process.env.TRIFORGE_CODE_WORKERS;
    }
    expect(parallel.report.parsedInWorkers).toBeGreaterThan(0);
    expect(serial.report.parsedInWorkers).toBe(0);
    expect(parallel.files).toEqual(serial.files);
    expect(parallel.texts).toEqual(serial.texts);
    expect(parallel.chunkStart).toEqual(serial.chunkStart);
    expect(parallel.chunkEnd).toEqual(serial.chunkEnd);
    expect(parallel.vectors).toEqual(serial.vectors);
    expect(parallel.bm25.terms).toEqual(serial.bm25.terms);
    expect(parallel.bm25.docs).toEqual(serial.bm25.docs);
    expect(parallel.bm25.freqs).toEqual(serial.bm25.freqs);
    // And the syntax chunker really ran: a function with its doc comment is one chunk's start.
    const file = parallel.files.find((f) => f.path === "src/module0/shipments.ts")!;
    const text = await Bun.file(join(root, file.path)).text();
    const expected = chunkSource(text, await parserFor("typescript"));
    expect(parallel.texts.slice(file.firstChunk, file.firstChunk + file.chunkCount)).toEqual(
      expected.map((c) => c.text),
    );
    expect(expected[1].text.startsWith("/** Computes shipment")).toBe(true);
  }, 60_000);

  test("the compiled binary starts its parse workers and the index answers", async () => {
    const root = largeRepository();
    const home = tempDir("triforge-binary-home-");
    const indexed = await runBinary(["code-index", root, "--json"], {
      home,
      env: { TRIFORGE_CODE_WORKERS: "1" },
    });
    expect(indexed.code).toBe(0);
    const report = JSON.parse(indexed.stdout);
    expect(report.files).toBe(451);
    expect(report.parsedInWorkers).toBeGreaterThan(0);
    const search = await runBinary(["search", "chargeCreditCard", root, "--json", "-k", "1"], { home });
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout).hits[0].file_path).toBe("src/special/payment_gateway.ts");
  }, 120_000);
});

describe("syntax budget", () => {
  test("past the budget, source files are parsed first and the rest chunked by indentation, and the report says how many", async () => {
    const root = tempDir("triforge-budget-");
    mkdirSync(join(root, ".git"));
    const functions = (name: string) =>
      Array.from(
        { length: 12 },
        (_, i) =>
          // Flush left and without blank lines: only the syntax tree sees where a function starts.
          `export function ${name}${i}(items: number[]): number {\nlet sum = ${i};\nfor (const item of items) {\nsum += item * ${i};\n}\nreturn sum;\n}\n`,
      ).join("");
    const files = {
      "src/ledger.ts": functions("ledgerTotal"),
      "src/tax.ts": functions("taxTotal"),
      // Sorts first by path, yet a test ranks lowest: it is the one left to the indentation chunker.
      "a_tests/ledger.test.ts": functions("ledgerCase"),
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const parser = await parserFor("typescript");
    const chunksOf = (index: Awaited<ReturnType<typeof refreshIndex>>, path: string) => {
      const file = index.files.find((f) => f.path === path)!;
      return index.texts.slice(file.firstChunk, file.firstChunk + file.chunkCount);
    };
    const saved = process.env.TRIFORGE_CODE_SYNTAX_BUDGET;
    try {
      const size = files["src/ledger.ts"].length;
      process.env.TRIFORGE_CODE_SYNTAX_BUDGET = String(2 * size + 10);
      const budgeted = await refreshIndex(resolveRepository(root), { force: true });
      expect(budgeted.report.overSyntaxBudget).toBe(1);
      for (const path of ["src/ledger.ts", "src/tax.ts"])
        expect(chunksOf(budgeted, path)).toEqual(
          chunkSource(files[path as keyof typeof files], parser).map((c) => c.text),
        );
      const test = files["a_tests/ledger.test.ts"];
      expect(chunksOf(budgeted, "a_tests/ledger.test.ts")).toEqual(
        chunkSource(test, undefined).map((c) => c.text),
      );
      // The two chunkers differ on this text, so the assertions above tell which one ran.
      expect(chunkSource(test, undefined).map((c) => c.text)).not.toEqual(
        chunkSource(test, parser).map((c) => c.text),
      );

      delete process.env.TRIFORGE_CODE_SYNTAX_BUDGET;
      const whole = await refreshIndex(resolveRepository(root), { force: true });
      expect(whole.report.overSyntaxBudget).toBe(0);
      expect(chunksOf(whole, "a_tests/ledger.test.ts")).toEqual(chunkSource(test, parser).map((c) => c.text));
    } finally {
      if (saved === undefined) delete process.env.TRIFORGE_CODE_SYNTAX_BUDGET;
      else process.env.TRIFORGE_CODE_SYNTAX_BUDGET = saved;
    }
  });
});

/**
 * The names a chunk defines as the encoder finds them, written as patterns: the identifier after a
 * definition keyword and blanks (a Go receiver in parentheses skipped), not a control-flow word;
 * and on a line where no keyword named one, a C-like signature's name (words of a type, the name,
 * `(`, no `;` after it on the line).
 */
const KEYWORD_DEFINITION =
  /\b(?:def|defp|defmodule|class|function|func|fn|struct|interface|trait|enum|type|module|object|impl|protocol|extension|record|namespace|macro)[ \t\n\r]+(?:\([^)]*\)[ \t\n\r]*)?([A-Za-z_][A-Za-z0-9_]*)/dg;
const SIGNATURE = /^[ \t]*(?:[A-Za-z_][\w<>,:*&[\]]*[ \t*&]+)+([A-Za-z_]\w*)[ \t]*\([^;]*$/;
const NOT_NAMES = new Set(["if", "for", "while", "switch", "return", "catch", "sizeof", "new", "else"]);
function definedNames(text: string): string[] {
  const lineOf = (at: number) => text.slice(0, at).split(/\r|\n/).length - 1;
  const byKeyword = [...text.matchAll(KEYWORD_DEFINITION)].filter((m) => !NOT_NAMES.has(m[1]));
  return text.split(/\r|\n/).flatMap((line, l) => {
    const named = byKeyword.filter((m) => lineOf(m.indices?.[1]?.[0] ?? 0) === l).map((m) => m[1]);
    if (named.length) return named;
    const signature = SIGNATURE.exec(line)?.[1];
    return signature && !NOT_NAMES.has(signature) ? [signature] : [];
  });
}

describe("chunk encoder", () => {
  test("a chunk's vector embeds `path\nits defined names\ntext`", async () => {
    const model = await loadModel();
    const text = [
      "class SessionStore(Base):",
      "    def verify_token(self, token):",
      "        return token",
      "func (s *Server) ServeHTTP(w ResponseWriter) {}",
      "pub fn parse_config() {} struct Router; type if = 1; class 9lives; fn(x) => x",
      "static const char *read_line(int fd,",
      "  std::vector<Token> Lexer::tokens() const;",
      "public Map<String, List<Item>> itemsByKind() {",
      "  } else if (ready) {",
      "  int total = sum(values)",
    ].join("\n");
    expect(definedNames(text)).toEqual([
      "SessionStore",
      "verify_token",
      "ServeHTTP",
      "parse_config",
      "Router",
      "read_line",
      "itemsByKind",
    ]);
    const encoder = new ChunkEncoder(model);
    encoder.add("src/auth/session.py", text);
    const actual = await encoder.embed();
    const header = await model.embed(
      `src/auth/session.py\nSessionStore verify_token ServeHTTP parse_config Router read_line itemsByKind\n${text}`,
    );
    const plain = await model.embed(`src/auth/session.py\n${text}`);
    let fromHeader = 0;
    let fromPlain = 0;
    for (let d = 0; d < model.dim; d++) {
      fromHeader = Math.max(fromHeader, Math.abs(actual[d] - header[d]));
      fromPlain = Math.max(fromPlain, Math.abs(actual[d] - plain[d]));
    }
    expect(fromHeader).toBeLessThan(1e-5);
    expect(fromPlain).toBeGreaterThan(1e-3);
  });

  test("the encoder's defined names are the patterns' on every chunk of this repository's source", async () => {
    const model = await loadModel();
    const chunks: [string, string][] = [];
    for (const file of readdirSync(join(import.meta.dir, "../src"), { recursive: true }).map(String)) {
      if (!file.endsWith(".ts")) continue;
      const lines = readFileSync(join(import.meta.dir, "../src", file), "utf8").split("\n");
      for (let at = 0; at < lines.length; at += 20) chunks.push([file, lines.slice(at, at + 20).join("\n")]);
    }
    // The tokenizer reads a special token's name in the text (`[UNK]`) as that token: the one known
    // difference from whole-text embedding (see the test below), not this one's subject.
    chunks.splice(0, chunks.length, ...chunks.filter(([, text]) => !/\[(CLS|SEP|MASK|UNK|PAD)\]/.test(text)));
    expect(chunks.length).toBeGreaterThan(500);
    const withNames = chunks.filter(([, text]) => definedNames(text).length > 0).length;
    expect(withNames).toBeGreaterThan(chunks.length / 4);
    const encoder = new ChunkEncoder(model, true);
    for (const [path, text] of chunks) encoder.add(path, text);
    const actual = await encoder.embed();
    const expected = await model.embedBatch(
      chunks.map(([path, text]) => `${path}\n${definedNames(text).join(" ")}\n${text}`),
    );
    let worst = 0;
    for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
    expect(worst).toBeLessThan(1e-5);
  }, 60_000);

  test("vectors match embedding `path\nnames\ntext` whole (float rounding aside)", async () => {
    const model = await loadModel();
    const chunks: [string, string][] = [
      [
        "src/auth/session.ts",
        "export function verifySessionToken(token: string) { return token.length > 0; }",
      ],
      ["src/auth/session.ts", "MAX_RETRY_COUNT = 0x1F; // retry_count++ |a|b| -> __init__ 42abc"],
      ["docs/日本/readme.md", "Ünïcödé naïve straße 東京 CamelCase_snake x\u00a0y"],
      // Symbols join words as BERT splits only at punctuation; control and zero-width characters are
      // deleted (joining what is around them); combining marks of NFD text stay with their letter.
      ["src/fmt.c", "10×3 x→y ©2024 ───── e\u0301te cafe\u0301 a\u200bb c\u0001d form\ffeed"],
      ["src/auth/session.ts", ""],
      ["a.py", "|||"],
      // Many distinct long words: more tokens than one tokenizer input may hold, so the encoder
      // must group new words by size, not by count, to keep every word's ids.
      ["gen/words.txt", Array.from({ length: 120 }, (_, i) => `zqxv${i}kfjw${i * 7919}plmq`).join(" ")],
      // Past MAX_TOKENS: the vector stops inside a run, at the token the model stops at.
      ["gen/long.c", Array.from({ length: 400 }, (_, i) => `alpha_beta${i % 7}(gamma);`).join("\n")],
      // Defined names go before the text, so they count inside the token limit too.
      ["gen/defs.py", Array.from({ length: 300 }, (_, i) => `def handler_${i % 5}(): pass`).join("\n")],
      ["src/unicode.go", "func (r *Räder) Drehen() {} // naïve\ntype Ünit struct {}"],
    ];
    const expected = await model.embedBatch(
      chunks.map(([path, text]) => `${path}\n${definedNames(text).join(" ")}\n${text}`),
    );
    // New words split by the tokenizer, and by the vocabulary in JavaScript; the second pass of each
    // answers from the word and run tables.
    for (const splitWords of [false, true]) {
      const encoder = new ChunkEncoder(model, splitWords);
      for (let round = 0; round < 2; round++) {
        for (const [path, text] of chunks) encoder.add(path, text);
        const actual = await encoder.embed();
        // Sums are taken per run, not per token: equal up to float rounding.
        expect(actual.length).toBe(expected.length);
        for (let i = 0; i < expected.length; i++)
          expect(Math.abs(actual[i] - expected[i])).toBeLessThan(1e-5);
      }
    }
  });

  test("ASCII words split by the vocabulary exactly as the model's tokenizer splits them", async () => {
    const model = await loadModel();
    const vocabulary = model.wordPieceVocabulary();
    expect(vocabulary).toBeDefined();
    // Every word of this repository's own source, plus the edges: the length limit, pieces outside
    // the vocabulary, every ASCII punctuation mark and control character.
    const source = readdirSync(join(import.meta.dir, "../src"), { recursive: true })
      .filter((f) => String(f).endsWith(".ts"))
      .map((f) => readFileSync(join(import.meta.dir, "../src", String(f)), "utf8"))
      .join("\n");
    const words = new Set(source.toLowerCase().match(/[a-z0-9]+|[^\sa-z0-9]/g));
    for (let c = 0; c < 128; c++) words.add(String.fromCharCode(c).toLowerCase());
    for (const edge of [
      "a".repeat(100),
      "a".repeat(101),
      "zqxvkfjw",
      "x1f",
      "0x1f",
      "unbelievableness",
      "9999999999",
    ])
      words.add(edge);
    const ascii = [...words].filter((w) => !/[^\x00-\x7f]/.test(w) && !/^\s$/.test(w));
    expect(ascii.length).toBeGreaterThan(1000);
    const expected = await model.tokenize(ascii);
    const splitter = new WordPieceSplitter(vocabulary!);
    expect(ascii.map((w) => splitter.ids(w))).toEqual(expected);
  });
});
