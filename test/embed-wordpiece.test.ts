import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StaticModel } from "../src/embed/model.ts";
import { readModelDir } from "../src/embed/source.ts";
import { WordPieceTable, WordPieceTableError } from "../src/embed/wordpiece.ts";
import { SHARED, tempDir } from "./support/helpers.ts";

const MODEL_DIR = join(SHARED, "models/potion-base-2M-int8");
const files = readModelDir(MODEL_DIR);
const table = WordPieceTable.fromTokenizerJson(files.tokenizer)!;
const model = await StaticModel.load(files);

/** What the native tokenizer makes of each text: a batch, which the model never splits with its table. */
async function nativeIds(texts: string[]): Promise<number[][]> {
  return (await model.tokenize([...texts, "."])).slice(0, texts.length);
}

/** The model's ids for one text: the table's where it reproduces the text. */
async function ourIds(text: string): Promise<number[]> {
  return (await model.tokenize([text]))[0];
}

/** Edges of the normaliser, pre-tokenizer and WordPiece, all inside what the table reproduces. */
const EDGES = [
  "[CLS] hello [MASK]world[SEP][UNK] [PAD]x",
  "Café naïve résumé — Ångström, Øre, Œuvre, İstanbul, ß, Ǆ, ŉ, µ, ×÷",
  "tabs\tand\nnewlines\r\nand\u00a0no-break\u2003em\u2009thin\u202fspaces",
  "zero\u200bwidth\u200djoin\u2060word, soft\u00adhyphen, bell\u0007, del\u007f, nul\u0000",
  "“quoted” ‘single’ «guillemets» ‹angle› … ‰ ′ ″ ‐ ‑ ‒ – — ― ‖ † ‡ • ⁄ ⁒",
  "a".repeat(100),
  "a".repeat(101),
  `${"b".repeat(99)}é`,
  "unbelievableness zqxvkfjw 0x1f x1f 9999999999 getUserById snake_case_name HTTPServerError",
  "src/embed/model.ts:42 https://example.com/a?b=c&d=e#f user@example.com $HOME ~/x `code` <tag/> {a:[1,2]}",
  "!!!???...,,,;;;:::---___+++===|||\\\\///***&&&^^^%%%$$$###@@@~~~",
  "MIXED case WORDS and CamelCaseWords, ALLCAPS, lowercase",
  "",
  "   ",
];

describe("WordPieceTable reproduces the native tokenizer", () => {
  test("the default model's tokenizer is one it reproduces", () => {
    expect(table).toBeDefined();
    expect(table.size).toBeGreaterThan(20_000);
    expect(table.idOf("[UNK]")).toBe(table.settings.unk);
    expect(table.idOf("##ing")).toBeGreaterThan(0);
    expect(table.idOf("not a piece")).toBe(-1);
  });

  test("edges: added tokens, accents, white space, control and format characters, punctuation, long words", async () => {
    for (const text of EDGES) expect(table.canEncode(text)).toBe(true);
    const expected = await nativeIds(EDGES);
    for (const [i, text] of EDGES.entries()) expect(await ourIds(text)).toEqual(expected[i]);
  });

  test("every line of this repository's docs and source: the same ids", async () => {
    const lines: string[] = [];
    for (const folder of ["docs", "src"]) {
      const dir = join(import.meta.dir, "..", folder);
      for (const file of readdirSync(dir, { recursive: true }).map(String))
        if (/\.(md|ts|txt)$/.test(file)) lines.push(...readFileSync(join(dir, file), "utf8").split("\n"));
    }
    const encodable = [...new Set(lines)].filter((line) => line.trim() && table.canEncode(line));
    expect(encodable.length).toBeGreaterThan(5_000);
    const expected = await nativeIds(encodable);
    const differing = [];
    for (const [i, line] of encodable.entries())
      if ((await ourIds(line)).join() !== expected[i].join()) differing.push(line);
    expect(differing).toEqual([]);
  });

  test("text outside what it reproduces goes to the native tokenizer", async () => {
    const other = ["Привет, мир", "北京 上海", "emoji \u{1F9FF} here", "Ελληνικά ΣΟΦΙΑ"];
    for (const text of other) expect(table.canEncode(text)).toBe(false);
    const expected = await nativeIds(other);
    for (const [i, text] of other.entries()) expect(await ourIds(text)).toEqual(expected[i]);
  });

  test("a model loaded with a kept table embeds as one that derived it", async () => {
    const kept = WordPieceTable.fromBytes(table.toBytes());
    const withKept = await StaticModel.load({ ...files, vocabulary: kept });
    expect(withKept.vocabulary).toBe(kept);
    const query = "What did Caroline research about adoption agencies?";
    expect([...(await withKept.embed(query))]).toEqual([
      ...(await model.embedBatch([query, "."])).slice(0, model.dim),
    ]);
  });
});

describe("the table as bytes", () => {
  test("round-trips, and a damaged or truncated copy is refused", () => {
    const bytes = table.toBytes();
    const again = WordPieceTable.fromBytes(bytes);
    expect(again.size).toBe(table.size);
    expect(again.encode("Unbelievable parsing of src/app.ts")).toEqual(
      table.encode("Unbelievable parsing of src/app.ts"),
    );
    const damaged = bytes.slice();
    damaged[damaged.length - 100] ^= 0xff;
    expect(() => WordPieceTable.fromBytes(damaged)).toThrow(WordPieceTableError);
    expect(() => WordPieceTable.fromBytes(bytes.subarray(0, bytes.length - 8))).toThrow(WordPieceTableError);
    expect(() => WordPieceTable.fromBytes(new Uint8Array(64))).toThrow(WordPieceTableError);
  });

  test("a tokenizer it does not reproduce gets no table", () => {
    const config = JSON.parse(files.tokenizer);
    const unigram = { ...config, model: { ...config.model, type: "Unigram" } };
    expect(WordPieceTable.fromTokenizerJson(JSON.stringify(unigram))).toBeUndefined();
    const metaspace = { ...config, pre_tokenizer: { type: "Metaspace" } };
    expect(WordPieceTable.fromTokenizerJson(JSON.stringify(metaspace))).toBeUndefined();
    const normalisedAdded = { ...config, added_tokens: [{ id: 0, content: "[PAD]", normalized: true }] };
    expect(WordPieceTable.fromTokenizerJson(JSON.stringify(normalisedAdded))).toBeUndefined();
  });
});

describe("the kept table in the cache", () => {
  test("written by the first load, read by the next, written again when damaged", () => {
    const home = tempDir("wordpiece-cache");
    const env = { ...process.env, TRIFORGE_HOME: home, TRIFORGE_MODEL_DIR: MODEL_DIR };
    const script = `const { loadModel } = await import(${JSON.stringify(join(import.meta.dir, "../src/embed/source.ts"))});
      const m = await loadModel(); console.log(JSON.stringify([...(await m.embed("kept vocabulary table"))].slice(0, 4)));`;
    const run = () => {
      const proc = Bun.spawnSync([process.execPath, "-e", script], { env, stdout: "pipe", stderr: "pipe" });
      expect(proc.stderr.toString()).toBe("");
      return proc.stdout.toString();
    };
    const first = run();
    const dir = join(home, "cache", "models");
    const kept = readdirSync(dir).filter((f) => f.startsWith("vocabulary-") && f.endsWith(".bin"));
    expect(kept.length).toBe(1);
    const path = join(dir, kept[0]);
    const written = readFileSync(path);
    expect(run()).toBe(first);
    writeFileSync(path, written.subarray(0, 1000));
    expect(run()).toBe(first);
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path).equals(written)).toBe(true);
  });
});
