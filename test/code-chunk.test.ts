import { describe, expect, test } from "bun:test";
import {
  type Chunk,
  chunkByLines,
  chunkFile,
  fileBreakScores,
  lineBreakScores,
  splitLines,
  TARGET_CHUNK_CHARS,
} from "../src/code/chunk.ts";
import { SharedParse } from "../src/code/chunk-pool.ts";
import { parserFor } from "../src/code/grammars.ts";
import { type GrammarName, languageOf } from "../src/code/languages.ts";

/** Every chunk's text is exactly its lines of the file, and chunks come in order without overlap. */
function expectFaithful(text: string, chunks: Chunk[]): void {
  const lines = text.split(/\r?\n/);
  let previousEnd = 0;
  for (const chunk of chunks) {
    expect(chunk.startLine).toBeGreaterThan(previousEnd);
    expect(chunk.endLine).toBeGreaterThanOrEqual(chunk.startLine);
    expect(chunk.text).toBe(lines.slice(chunk.startLine - 1, chunk.endLine).join("\n"));
    previousEnd = chunk.endLine;
  }
}

/** Every non-blank line of the file is in some chunk. */
function expectComplete(text: string, chunks: Chunk[]): void {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim()) continue;
    expect(chunks.some((c) => c.startLine <= i + 1 && i + 1 <= c.endLine)).toBe(true);
  }
}

const pythonFunction = (name: string, body: number) =>
  `def ${name}(value):\n    """Docstring of ${name}."""\n${Array.from({ length: body }, (_, i) => `    value = value + ${i}  # step ${i} of ${name}`).join("\n")}\n    return value\n`;

describe("chunking at syntax boundaries", () => {
  test("grammars loaded at the same time each parse their own language", async () => {
    const typescript = Array.from(
      { length: 12 },
      (_, i) =>
        `/** Sums order ${i}. */\nexport function orderTotal${i}(items: number[]): number {\n  let sum = ${i};\n  for (const item of items) sum += item;\n  return sum;\n}\n`,
    ).join("\n");
    const python = Array.from({ length: 12 }, (_, i) => pythonFunction(`total_${i}`, 3)).join("\n");
    const texts: [string, GrammarName][] = [
      [typescript, "typescript"],
      [python, "python"],
      [typescript, "javascript"],
      [python, "ruby"],
    ];
    const together = await Promise.all(texts.map(([text, grammar]) => chunkFile(text, grammar)));
    for (let i = 0; i < texts.length; i++) expect(together[i]).toEqual(await chunkFile(...texts[i]));
    // A doc comment stays with its function, so every TypeScript chunk starts at one.
    for (const chunk of together[0]) expect(chunk.text.startsWith("/** Sums order")).toBe(true);
  });

  test("Python: functions of a few hundred characters each start their own chunk at their def line", async () => {
    const text = [
      "import os",
      "",
      "",
      pythonFunction("alpha", 12),
      "",
      pythonFunction("beta", 12),
      "",
      pythonFunction("gamma", 12),
    ].join("\n");
    const chunks = await chunkFile(text, "python");
    expectFaithful(text, chunks);
    expectComplete(text, chunks);
    for (const name of ["beta", "gamma"]) {
      const line = text.split("\n").findIndex((l) => l.startsWith(`def ${name}(`)) + 1;
      expect(chunks.some((c) => c.startLine === line)).toBe(true);
    }
  });

  test("TypeScript: a comment above a function stays in the function's chunk", async () => {
    const method = (name: string) =>
      `/** Explains ${name}. */\nexport function ${name}(input: string): string {\n${Array.from({ length: 14 }, (_, i) => `  input = input.replace("${i}", "${name}-${i}");`).join("\n")}\n  return input;\n}\n`;
    const text = [method("first"), method("second"), method("third")].join("\n");
    const chunks = await chunkFile(text, "typescript");
    expectFaithful(text, chunks);
    const second = chunks.find((c) => c.text.includes("function second"));
    expect(second?.text.startsWith("/** Explains second. */")).toBe(true);
  });

  test("a long function is split inside, and no chunk is far above the target size", async () => {
    const text = pythonFunction("huge", 120);
    const chunks = await chunkFile(text, "python");
    expectFaithful(text, chunks);
    expectComplete(text, chunks);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(TARGET_CHUNK_CHARS * 1.6 + 80);
  });

  test("line numbers stay right with CRLF line ends, blank runs and non-ASCII text", async () => {
    const text = [
      "// 日本語のコメント",
      "",
      "",
      "fn main() {",
      '    println!("héllo");',
      "}",
      "",
      "fn other() {}",
      "",
    ].join("\r\n");
    const chunks = await chunkFile(text, "rust");
    expectFaithful(text, chunks);
    const main = chunks.find((c) => c.text.includes("fn main"));
    expect(main && main.startLine <= 4 && main.endLine >= 6).toBe(true);
    expect(chunks[0].startLine).toBe(1);
  });

  test("a file within the target size is one chunk of its non-blank lines, however many definitions it holds", async () => {
    const text = `\n// helpers\n${pythonFunction("small", 2).replace(/^/gm, "")}\n\nclass Tiny:\n    pass\n\n\n`;
    expect(text.length).toBeLessThanOrEqual(TARGET_CHUNK_CHARS);
    const lines = text.split("\n");
    const last = lines.findLastIndex((l) => l.trim() !== "");
    expect(await chunkFile(text, "python")).toEqual([
      { startLine: 2, endLine: last + 1, text: lines.slice(1, last + 1).join("\n") },
    ]);
  });

  test("a file that does not parse still chunks (tree-sitter recovers or the line chunker takes over)", async () => {
    const text = `def broken(:\n${"    x = (((\n".repeat(60)}`;
    const chunks = await chunkFile(text, "python");
    expectFaithful(text, chunks);
    expectComplete(text, chunks);
  });
});

describe("the line chunker (languages without a grammar)", () => {
  test("cuts at top-level definitions rather than inside indented blocks", () => {
    const fn = (name: string) =>
      `fun ${name}(x: Int): Int {\n${Array.from({ length: 10 }, (_, i) => `    val v${i} = x * ${i} + ${name.length}`).join("\n")}\n    return x\n}\n`;
    const text = ["package demo", "", fn("one"), fn("two"), fn("three")].join("\n");
    const chunks = chunkByLines(text);
    expectFaithful(text, chunks);
    expectComplete(text, chunks);
    for (const chunk of chunks.slice(1)) expect(chunk.text).toMatch(/^fun /);
  });

  test("line scores are the indentation rules' (blank, indented, closing lines, any white space)", () => {
    // The rules as regular expressions, the way they read: lineBreakScores scans character codes.
    const reference = (lines: string[]) => {
      let previousBlank = true;
      return Int8Array.from(lines, (line) => {
        const blank = line.trim() === "";
        let score = 0;
        if (!blank && !/^\s*([}\])]|end\b|fi\b|done\b|esac\b)/.test(line))
          score = /^\s/.test(line) ? (previousBlank ? 2 : 0) : previousBlank ? 4 : 3;
        previousBlank = blank;
        return score;
      });
    };
    const pieces = [
      " ",
      "\t",
      "\u00a0",
      "\u3000",
      "\ufeff",
      "\u2028",
      "}",
      "]",
      ")",
      "end",
      "fi",
      "done",
      "esac",
      "endif",
      "fine",
      "done_",
      "esac2",
      "(",
      "x",
      "é",
      ";",
      "end;",
      "fi\u00a0",
    ];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const lines = Array.from({ length: 5000 }, () =>
      Array.from({ length: random(5) }, () => pieces[random(pieces.length)]).join(""),
    );
    expect(lineBreakScores(lines)).toEqual(reference(lines));
  });

  test("a minified single line becomes one chunk, and blank-only text none", () => {
    const line = `var a=${"1+".repeat(5000)}1;`;
    expect(chunkByLines(line)).toEqual([{ startLine: 1, endLine: 1, text: line }]);
    expect(chunkByLines("\n\n   \n")).toEqual([]);
    expect(chunkByLines("")).toEqual([]);
  });
});

describe("parsing shared with a worker", () => {
  test("every file's scores are the ones the main thread computes alone, whichever side parsed it", async () => {
    const files = Array.from({ length: 120 }, (_, f) => ({
      grammar: (f % 2 ? "python" : "typescript") as GrammarName,
      text:
        f % 2
          ? Array.from({ length: 40 }, (_, i) => pythonFunction(`total_${f}_${i}`, 3)).join("\n")
          : Array.from(
              { length: 40 },
              (_, i) =>
                `/** Sums order ${f}.${i}. */\nexport function orderTotal${f}x${i}(items: number[]): number {\n  let sum = ${i};\n  for (const item of items) sum += item;\n  return sum;\n}\n`,
            ).join("\n"),
    }));
    const alone = await Promise.all(files.map((f) => fileBreakScores(f.text, splitLines(f.text), f.grammar)));
    const shared = new SharedParse(files, 1);
    try {
      // Let the worker start and run ahead, then ask for every file in order as the indexer does.
      for (let waited = 0; shared.delivered === 0 && waited < 20_000; waited += 10) await Bun.sleep(10);
      expect(shared.delivered).toBeGreaterThan(0);
      for (let k = 0; k < files.length; k++) {
        const { text, grammar } = files[k];
        const scores = await shared.scores(k, () => fileBreakScores(text, splitLines(text), grammar));
        expect(scores).toEqual(alone[k]);
      }
    } finally {
      shared.close();
    }
  }, 30_000);
});

/**
 * One generated file per grammar that the VS Code package does not ship: definitions nested in a
 * type or module where the language has one, each under its doc comment (and attribute), with a
 * blank line inside each body, where indentation alone would see as good a break as the definition.
 */
const NESTED_DEFINITIONS: {
  grammar: GrammarName;
  extension: string;
  doc: string;
  file: (defs: string[]) => string;
  definition: (i: number) => string;
}[] = [
  {
    grammar: "elixir",
    extension: "ex",
    doc: '@doc "Sums order',
    // No blank lines between definitions: only the grammar knows `@spec` belongs to the `def` below.
    file: (defs) => `defmodule Orders do\n${defs.join("")}end\n`,
    definition: (i) =>
      `  @doc "Sums order ${i}."\n  @spec total${i}([integer]) :: integer\n  def total${i}(items) do\n    sum = Enum.sum(Enum.map(items, &(&1 * ${i})))\n${"    sum = sum + 1\n".repeat(i % 4)}\n    scaled = sum * 2 + length(items)\n    scaled + ${i}\n  end\n`,
  },
  {
    grammar: "c",
    extension: "c",
    doc: "/* Sums order",
    file: (defs) => `#include <stddef.h>\n\n${defs.join("\n")}`,
    // `new` is a name in C and a keyword in C++: only the C grammar reads this without an error.
    definition: (i) =>
      `/* Sums order ${i}. */\nstatic int total${i}(const int *items, size_t n)\n{\n    int new = ${i};\n    for (size_t k = 0; k < n; k++) new += items[k] * ${i};\n\n    int scaled = new * 2 + (int)n;\n    return scaled + ${i};\n}\n`,
  },
];

describe("grammars beyond VS Code's", () => {
  for (const { grammar, extension, doc, file, definition } of NESTED_DEFINITIONS) {
    test(`${grammar}: .${extension} files parse without errors and chunk at their definitions, doc comments included`, async () => {
      expect(languageOf(`orders.${extension}`)?.grammar).toBe(grammar);
      const text = file(Array.from({ length: 16 }, (_, i) => definition(i)));
      const parser = await parserFor(grammar);
      const tree = parser?.parse(text);
      expect(tree?.rootNode.hasError).toBe(false);
      tree?.delete();

      const chunks = await chunkFile(text, grammar);
      expectFaithful(text, chunks);
      expectComplete(text, chunks);
      expect(chunks.length).toBeGreaterThan(2);
      // Each chunk after the file's head starts at a definition's doc comment.
      for (const chunk of chunks.slice(1)) expect(chunk.text.trimStart().startsWith(doc)).toBe(true);
    });
  }
});
