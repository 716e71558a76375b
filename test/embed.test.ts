import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cosine, MAX_TOKENS, StaticModel } from "../src/embed/model.ts";
import { readSafetensors } from "../src/embed/safetensors.ts";
import { readModelDir } from "../src/embed/source.ts";
import { runBinary, SHARED, tempDir } from "./support/helpers.ts";

// The CLI tests build the binary on first use; bunfig has no test timeout setting.
setDefaultTimeout(60_000);

const FIXTURES = join(SHARED, "models/fixtures");
const INT8 = join(SHARED, "models/potion-base-2M-int8");
const F16 = join(SHARED, "models/potion-base-2M-f16");

const load = (dir: string) => StaticModel.load(readModelDir(dir));
const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const row = (m: Float32Array, i: number, dim: number) => m.subarray(i * dim, (i + 1) * dim);

/** Text in several scripts and shapes: prose, Russian, Chinese, code and identifiers. */
const VARIED = [
  "We decided to move the session store from Redis to SQLite last week.",
  "Привет! Мы обсуждали миграцию базы данных и решили оставить SQLite.",
  "我们今天讨论了数据库迁移。北京 上海 中国 人 大 学 日本",
  "function parseArgs(argv: string[]) { return argv.map((a) => a.trim()); }",
  "SELECT id, name FROM users WHERE created_at > now() - interval '7 days';",
  "getUserById",
  "snake_case_identifier",
  "HTTPServerError",
  "src/embed/model.ts:42",
  "kubectl rollout restart deployment/api-gateway --namespace=prod",
];

/** Emoji and private-use characters are not in the vocabulary: every token is [UNK]. */
const ALL_UNKNOWN = "\u{1F9FF}\u{1FAE0} \uE000\uE001";

describe.each(readdirSync(FIXTURES).sort())("fixture model %s", (name) => {
  const dir = join(FIXTURES, name);

  test("loads with the dimension its safetensors file declares", async () => {
    const model = await load(dir);
    const declared = readSafetensors(readFileSync(join(dir, "model.safetensors"))).get("embeddings")!
      .shape[1];
    expect(model.dim).toBe(declared);
    expect(model.id).toBe(name);
  });

  test("embeds text into a unit vector", async () => {
    const model = await load(dir);
    for (const text of VARIED.slice(0, 4)) {
      const v = await model.embed(text);
      expect(v.length).toBe(model.dim);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  test("empty and all-unknown input give a zero vector", async () => {
    const model = await load(dir);
    for (const text of ["", "   ", ALL_UNKNOWN]) {
      expect(Array.from(await model.embed(text)).every((x) => x === 0)).toBe(true);
    }
  });

  test("a batch gives the same rows as single calls", async () => {
    const model = await load(dir);
    const texts = [...VARIED, "", ALL_UNKNOWN];
    const batch = await model.embedBatch(texts);
    expect(batch.length).toBe(texts.length * model.dim);
    for (let i = 0; i < texts.length; i++) {
      expect(Array.from(row(batch, i, model.dim))).toEqual(Array.from(await model.embed(texts[i])));
    }
  });

  test("different texts give different vectors", async () => {
    const model = await load(dir);
    const a = await model.embed("database migration");
    const b = await model.embed("chocolate cake recipe");
    expect(cosine(a, b)).toBeLessThan(0.9999);
  });
});

describe("potion-base-2M", () => {
  test("the int8 and f16 copies agree (cosine >= 0.999) on varied text", async () => {
    const [int8, f16] = await Promise.all([load(INT8), load(F16)]);
    expect(int8.dim).toBe(64);
    const a = await int8.embedBatch(VARIED);
    const b = await f16.embedBatch(VARIED);
    for (let i = 0; i < VARIED.length; i++) {
      const va = row(a, i, 64);
      // A zero vector would make the comparison meaningless: every text must have known tokens.
      expect(norm(va)).toBeCloseTo(1, 5);
      expect(cosine(va, row(b, i, 64))).toBeGreaterThanOrEqual(0.999);
    }
  });

  test(`input is truncated at MAX_TOKENS (${MAX_TOKENS}) tokens`, async () => {
    const model = await load(INT8);
    const words = ["river", "house", "green", "music", "table", "paper", "light", "water"];
    const lengths = await model.tokenize(words);
    expect(lengths.every((ids) => ids.length === 1)).toBe(true);
    const head = Array.from({ length: MAX_TOKENS }, (_, i) => words[i % words.length]);
    const tail = Array.from({ length: 200 }, () => "database");
    const long = [...head, ...tail].join(" ");
    expect((await model.tokenize([long]))[0].length).toBe(MAX_TOKENS);
    // The tail past the cap changes nothing, though it would dominate the mean if it were kept.
    expect(Array.from(await model.embed(long))).toEqual(Array.from(await model.embed(head.join(" "))));
    expect(cosine(await model.embed(long), await model.embed(tail.join(" ")))).toBeLessThan(0.9);
  });

  test("similar meanings score higher than unrelated ones", async () => {
    const model = await load(INT8);
    const [q, near, far] = await Promise.all(
      [
        "database migration failed",
        "the schema migration of the database broke",
        "a recipe for chocolate cake",
      ].map((t) => model.embed(t)),
    );
    expect(cosine(q, near)).toBeGreaterThan(cosine(q, far));
  });
});

/** A copy of a small fixture model in a temp folder, so that a test can break one file of it. */
function modelCopy(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const f of ["config.json", "tokenizer.json", "model.safetensors"]) {
    copyFileSync(join(FIXTURES, "test-model-float32", f), join(dir, f));
  }
  return dir;
}

/** A safetensors file with the given header and `dataBytes` zero bytes of data. */
function safetensors(header: unknown, dataBytes: number): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const bytes = new Uint8Array(8 + json.length + dataBytes);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  return bytes;
}

const VOCAB = 29528; // the fixtures' WordPiece vocabulary

describe("bad model folders", () => {
  const root = tempDir();
  const home = tempDir();
  const cases: { name: string; breakIt: (dir: string) => void; file: string; says: RegExp }[] = [
    {
      name: "missing tokenizer",
      breakIt: (dir) => rmSync(join(dir, "tokenizer.json")),
      file: "tokenizer.json",
      says: /missing/,
    },
    {
      name: "missing weights",
      breakIt: (dir) => rmSync(join(dir, "model.safetensors")),
      file: "model.safetensors",
      says: /missing/,
    },
    {
      name: "header length past the end",
      breakIt: (dir) => {
        const bytes = new Uint8Array(readFileSync(join(dir, "model.safetensors")));
        new DataView(bytes.buffer).setBigUint64(0, 1n << 40n, true);
        writeFileSync(join(dir, "model.safetensors"), bytes);
      },
      file: "model.safetensors",
      says: /header length/,
    },
    {
      name: "header not JSON",
      breakIt: (dir) => {
        const bytes = new Uint8Array(readFileSync(join(dir, "model.safetensors")));
        bytes.set(new TextEncoder().encode("}}garbage"), 8);
        writeFileSync(join(dir, "model.safetensors"), bytes);
      },
      file: "model.safetensors",
      says: /not valid JSON/,
    },
    {
      name: "header a JSON null",
      breakIt: (dir) => writeFileSync(join(dir, "model.safetensors"), safetensors(null, 0)),
      file: "model.safetensors",
      says: /not a JSON object/,
    },
    {
      name: "truncated file",
      breakIt: (dir) => {
        const bytes = readFileSync(join(dir, "model.safetensors"));
        writeFileSync(join(dir, "model.safetensors"), bytes.subarray(0, bytes.length - 1000));
      },
      file: "model.safetensors",
      says: /does not match its byte range/,
    },
    {
      name: "unknown dtype",
      breakIt: (dir) =>
        writeFileSync(
          join(dir, "model.safetensors"),
          safetensors(
            { embeddings: { dtype: "BF16", shape: [VOCAB, 2], data_offsets: [0, VOCAB * 4] } },
            VOCAB * 4,
          ),
        ),
      file: "model.safetensors",
      says: /unsupported dtype BF16/,
    },
    {
      name: "dtype not usable for embeddings",
      breakIt: (dir) =>
        writeFileSync(
          join(dir, "model.safetensors"),
          safetensors(
            { embeddings: { dtype: "I64", shape: [VOCAB, 2], data_offsets: [0, VOCAB * 16] } },
            VOCAB * 16,
          ),
        ),
      file: "model.safetensors",
      says: /unsupported embeddings dtype I64/,
    },
    {
      name: "fewer rows than the vocabulary",
      breakIt: (dir) =>
        writeFileSync(
          join(dir, "model.safetensors"),
          safetensors({ embeddings: { dtype: "F32", shape: [100, 2], data_offsets: [0, 800] } }, 800),
        ),
      file: "model.safetensors",
      says: new RegExp(`100 rows for a vocabulary of ${VOCAB}`),
    },
    {
      name: "mapping pointing outside the embeddings",
      breakIt: (dir) =>
        writeFileSync(
          join(dir, "model.safetensors"),
          safetensors(
            {
              embeddings: { dtype: "F32", shape: [4, 2], data_offsets: [0, 32] },
              mappings: { dtype: "I32", shape: [VOCAB], data_offsets: [32, 32 + VOCAB * 4] },
            },
            32 + VOCAB * 4,
          ).map((b, i, all) => (i === all.length - 1 ? 0x7f : b)),
        ),
      file: "model.safetensors",
      says: /mapping points outside embeddings/,
    },
    {
      name: "corrupt tokenizer",
      breakIt: (dir) => writeFileSync(join(dir, "tokenizer.json"), '{"model": {"type": "WordPiece"'),
      file: "tokenizer.json",
      says: /cannot load tokenizer/,
    },
    {
      name: "corrupt config",
      breakIt: (dir) => writeFileSync(join(dir, "config.json"), "normalize: yes"),
      file: "config.json",
      says: /not valid JSON/,
    },
  ];

  test.each(cases)("$name: a clear error naming the file", async ({ name, breakIt, file, says }) => {
    const dir = modelCopy(root, name.replaceAll(" ", "-"));
    breakIt(dir);
    let message = "";
    try {
      await load(dir);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(join(dir, file));
    expect(message).toMatch(says);
  });

  test.each(cases)(
    "$name: `triforge embed` exits 1 without a stack trace",
    async ({ name, breakIt, file }) => {
      const dir = modelCopy(root, `cli-${name.replaceAll(" ", "-")}`);
      breakIt(dir);
      const { code, stdout, stderr } = await runBinary(["embed", "hello"], {
        home,
        env: { TRIFORGE_MODEL_DIR: dir },
      });
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toContain(join(dir, file));
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).not.toMatch(/^\s+at /m);
    },
  );

  test("an intact copy of the same fixture loads (the breakage, not the copy, causes the errors)", async () => {
    const model = await load(modelCopy(root, "intact"));
    expect(norm(await model.embed("hello"))).toBeCloseTo(1, 5);
  });
});

describe("triforge embed (compiled binary)", () => {
  const home = tempDir();

  test("prints the embedded default model's vector, equal to the engine's in-process", async () => {
    const { code, stdout } = await runBinary(["embed", "database migration"], { home });
    expect(code).toBe(0);
    const printed = JSON.parse(stdout) as number[];
    expect(printed).toHaveLength(64);
    expect(printed).toEqual(Array.from(await (await load(INT8)).embed("database migration")));
  });

  test("--verbose names the model and its dimension on stderr", async () => {
    const { code, stderr } = await runBinary(["embed", "--verbose", "x"], { home });
    expect(code).toBe(0);
    expect(stderr).toBe("model potion-base-2M-int8, dimension 64\n");
    const other = await runBinary(["embed", "--verbose", "x"], {
      home,
      env: { TRIFORGE_MODEL_DIR: join(FIXTURES, "test-model-float32") },
    });
    expect(other.stderr).toBe("model test-model-float32, dimension 2\n");
    expect(JSON.parse(other.stdout)).toHaveLength(2);
  });

  test("--stdin reads JSONL and writes one vector a line, in order, across batches", async () => {
    // 300 lines: more than one internal batch of 256.
    const texts = Array.from({ length: 300 }, (_, i) => `${VARIED[i % VARIED.length]} #${i}`);
    texts[7] = "";
    const input = `${texts.map((text) => JSON.stringify({ text })).join("\n")}\n\n`;
    const { code, stdout, stderr } = await runBinary(["embed", "--stdin"], { home, stdin: input });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(texts.length);
    const expected = await (await load(INT8)).embedBatch(texts);
    for (const i of [0, 7, 255, 256, 299]) {
      expect(JSON.parse(lines[i])).toEqual(Array.from(row(expected, i, 64)));
    }
  });

  test("--stdin names a bad line by its number on stderr and exits 1 at the end", async () => {
    const notJson = await runBinary(["embed", "--stdin"], { home, stdin: '{"text":"ok"}\nnot json\n' });
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain("line 2: not valid JSON");
    const noText = await runBinary(["embed", "--stdin"], {
      home,
      stdin: '{"text":"ok"}\n{"text":"ok"}\n{"body":1}\n',
    });
    expect(noText.code).toBe(1);
    expect(noText.stderr).toContain('line 3: expected {"text": "..."}');
  });

  test("text and --stdin together, or neither, are usage errors (exit 2)", async () => {
    expect((await runBinary(["embed"], { home })).code).toBe(2);
    expect((await runBinary(["embed", "--stdin", "x"], { home, stdin: "" })).code).toBe(2);
  });
});
