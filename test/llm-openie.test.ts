/**
 * OpenIE and summaries: the two-step extraction and the summary prompt run against the fake Anthropic
 * server; the JSON tolerance, validation and stored-format loading are tested on their own.
 */
import { afterAll, describe, expect, test } from "bun:test";
import {
  cacheKey,
  extractOpenIE,
  InMemoryResultCache,
  InMemoryUsageSink,
  type Llm,
  LlmOutputError,
  parseOpenIEOutput,
  parseOpenIEResultsFile,
  resolveLlm,
  SUMMARY_MAX_WORDS,
  summarizeChunk,
  toStoredOpenIE,
} from "../src/llm/index.ts";
import { jsonCandidates, repairTruncated } from "../src/llm/json.ts";
import { capWords } from "../src/llm/summarize.ts";
import { startFakeAnthropic, textReply } from "./support/fakes/anthropic.ts";
import { failure } from "./support/helpers.ts";

const fake = startFakeAnthropic({ fallback: null });
afterAll(() => fake.stop());

const usage = new InMemoryUsageSink();
const llm = (await resolveLlm(
  { llm: "anthropic" },
  { env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url }, usage, retry: { sleep: async () => {} } },
)) as Llm;

const CHUNK =
  "user: The release build of triforge fails on Windows: build/build.ts cannot find tokenizers.node.\n" +
  "assistant: The addon for win32-x64 was not installed. I added `bun install --os='*' --cpu='*'` to the CI step and the build passes.";

describe("extractOpenIE", () => {
  test("asks for named entities, then for triples that use them", async () => {
    const before = fake.messageRequests().length;
    fake.enqueue(
      textReply(
        '```json\n{"named_entities": ["triforge", "Windows", "build/build.ts", "tokenizers.node", "win32-x64", "CI"]}\n```',
      ),
      textReply(
        'Here is the graph:\n{"triples": [["build/build.ts", "cannot find", "tokenizers.node"], ["triforge", "release build fails on", "Windows"], ' +
          '["CI step", "installs", "addon for win32-x64"], ["tokenizers.node", "missing for"], ["triforge", "release build fails on", "Windows"]]}\nHope this helps.',
      ),
    );
    const result = await extractOpenIE(llm, CHUNK);
    const [ner, triples] = fake.messageRequests().slice(before);
    expect(fake.messageRequests().length - before).toBe(2);
    expect(ner.body.messages[0].content).toContain(CHUNK);
    expect(ner.body.system).toContain("named_entities");
    expect(triples.body.messages[0].content).toContain(CHUNK);
    expect(triples.body.messages[0].content).toContain('"build/build.ts"');
    expect(triples.body.system).toContain("triples");

    // The 2-term triple and the duplicate are dropped, as HippoRAG's filter_invalid_triples does.
    expect(result.triples).toEqual([
      ["build/build.ts", "cannot find", "tokenizers.node"],
      ["triforge", "release build fails on", "Windows"],
      ["CI step", "installs", "addon for win32-x64"],
    ]);
    // Terms the entity step did not list still become entities (HippoRAG 2 makes them phrase nodes).
    expect(result.entities).toEqual([
      "triforge",
      "Windows",
      "build/build.ts",
      "tokenizers.node",
      "win32-x64",
      "CI",
      "CI step",
      "addon for win32-x64",
    ]);
  });

  test("a passage with no named entities costs one call and yields an empty graph", async () => {
    const before = fake.messageRequests().length;
    fake.enqueue(textReply('{"named_entities": []}'));
    expect(await extractOpenIE(llm, "user: thanks!\nassistant: You're welcome.")).toEqual({
      entities: [],
      triples: [],
    });
    expect(fake.messageRequests().length - before).toBe(1);
  });

  test("a reply with no usable JSON is an LlmOutputError that quotes it", async () => {
    fake.enqueue(textReply("I could not find any entities, sorry."));
    const error = await failure(() => extractOpenIE(llm, CHUNK));
    expect(error).toBeInstanceOf(LlmOutputError);
    expect(error.message).toContain("named-entity reply holds no JSON");
    expect(error.message).toContain("I could not find any entities");

    fake.enqueue(textReply('{"named_entities": ["a"]}'), textReply('{"triples": "none"}'));
    const shaped = await failure(() => extractOpenIE(llm, CHUNK));
    expect(shaped).toBeInstanceOf(LlmOutputError);
    expect(shaped.message).toContain("triple reply holds JSON of the wrong shape");
  });

  test("a reply cut off by the token limit keeps its complete triples", async () => {
    fake.enqueue(
      textReply('{"named_entities": ["zod", "parseUser"]}'),
      textReply('{"triples": [["parseUser", "uses", "zod"], ["parseUser", "throws", "Zod', {
        stopReason: "max_tokens",
      }),
    );
    expect((await extractOpenIE(llm, CHUNK)).triples).toEqual([["parseUser", "uses", "zod"]]);
  });

  test("with a cache, the second extraction of a chunk makes no call; failures are not cached", async () => {
    const cache = new InMemoryResultCache();
    const slot = { cache, chunkHash: "abc123" };
    fake.enqueue(textReply("not json"));
    await failure(() => extractOpenIE(llm, CHUNK, { cache: slot }));
    expect(cache.entries.size).toBe(0);

    fake.enqueue(
      textReply('{"named_entities": ["Windows"]}'),
      textReply('{"triples": [["build", "fails on", "Windows"]]}'),
    );
    const first = await extractOpenIE(llm, CHUNK, { cache: slot });
    const calls = fake.messageRequests().length;
    const second = await extractOpenIE(llm, CHUNK, { cache: slot });
    expect(second).toEqual(first);
    expect(fake.messageRequests().length).toBe(calls);
    // The cache holds HippoRAG's stored format, keyed by kind, version and chunk hash.
    expect(JSON.parse(cache.get(cacheKey("openie", "abc123"))!)).toEqual(toStoredOpenIE(first));
  });

  test("a damaged cache entry is a miss and is overwritten", async () => {
    const cache = new InMemoryResultCache();
    cache.set(cacheKey("openie", "h1"), '{"extracted_triples": 42}');
    fake.enqueue(
      textReply('{"named_entities": ["Windows"]}'),
      textReply('{"triples": [["build", "fails on", "Windows"]]}'),
    );
    const result = await extractOpenIE(llm, CHUNK, { cache: { cache, chunkHash: "h1" } });
    expect(result.triples).toEqual([["build", "fails on", "Windows"]]);
    expect(parseOpenIEOutput(cache.get(cacheKey("openie", "h1")))).toEqual(result);
  });

  test("calls are counted in the usage sink", () => {
    expect(usage.totals()[0].calls).toBe(fake.messageRequests().length);
  });
});

describe("parseOpenIEOutput (HippoRAG's stored format)", () => {
  test("loads a stored record through the same validation as live output", () => {
    const record = {
      title: "Some passage",
      passage: "…",
      extracted_entities: ["Kyiv", " Kyiv ", 1963, null, "", "Dnipro"],
      extracted_triples: [
        ["Kyiv", "lies on", "Dnipro"],
        ["Kyiv", "founded in", 482],
        ["Kyiv", "capital of"],
        ["a", "b", "c", "d"],
        ["Kyiv", "lies on", "Dnipro"],
        ["", "empty", "subject"],
        "not a triple",
      ],
    };
    expect(parseOpenIEOutput(record)).toEqual({
      entities: ["Kyiv", "1963", "Dnipro", "482"],
      triples: [
        ["Kyiv", "lies on", "Dnipro"],
        ["Kyiv", "founded in", "482"],
      ],
    });
  });

  test("keeps identifiers and non-Latin text exactly", () => {
    const result = parseOpenIEOutput({
      extracted_entities: ["foo_bar", "C++", "user.id", "Київ"],
      extracted_triples: [["user.id", "стоїть у", "Київ"]],
    });
    expect(result.entities).toEqual(["foo_bar", "C++", "user.id", "Київ"]);
    expect(result.triples).toEqual([["user.id", "стоїть у", "Київ"]]);
  });

  test("accepts the record as JSON text, and round-trips toStoredOpenIE", () => {
    const result = { entities: ["A", "B"], triples: [["A", "r", "B"]] as [string, string, string][] };
    expect(parseOpenIEOutput(JSON.stringify(toStoredOpenIE(result)))).toEqual(result);
    expect(parseOpenIEOutput({})).toEqual({ entities: [], triples: [] });
  });

  test("reads a whole results file, Python's NaN included, through the same validation", () => {
    const file =
      '{"docs": [{"title": "A", "passage": "A\\nabout NaN", "extracted_entities": ["NaN", "B"], "extracted_triples": [["NaN", "r", "B"], ["x"]]},' +
      ' {"title": "C", "text": "only text", "extracted_entities": [], "extracted_triples": []}], "avg_ent_chars": NaN, "avg_ent_words": -Infinity}';
    expect(parseOpenIEResultsFile(file)).toEqual([
      { title: "A", passage: "A\nabout NaN", entities: ["NaN", "B"], triples: [["NaN", "r", "B"]] },
      { title: "C", passage: "only text", entities: [], triples: [] },
    ]);
    expect(() => parseOpenIEResultsFile('{"docs": [{"extracted_triples": {}}]}')).toThrow(
      /docs\[0\]: .*extracted_triples/,
    );
    expect(() => parseOpenIEResultsFile('{"passages": []}')).toThrow(/not an OpenIE results file/);
    expect(() => parseOpenIEResultsFile("{")).toThrow(/not an OpenIE results file/);
  });

  test("a record of the wrong shape is an error that names the field", () => {
    expect(() => parseOpenIEOutput({ extracted_entities: "Kyiv", extracted_triples: [] })).toThrow(
      /extracted_entities/,
    );
    expect(() => parseOpenIEOutput(null)).toThrow(/not an OpenIE record/);
    expect(() => parseOpenIEOutput("no json here")).toThrow(/no JSON/);
  });
});

describe("finding JSON in a reply", () => {
  const all = (text: string) => [...jsonCandidates(text)];

  test("bare, fenced, or wrapped in prose", () => {
    expect(all('{"a": 1}')[0]).toEqual({ a: 1 });
    expect(all('Sure!\n```json\n{"a": [1, 2]}\n```\nDone.')[0]).toEqual({ a: [1, 2] });
    expect(all('The answer is {"a": "}"} — see above.')[0]).toEqual({ a: "}" });
    expect(all('[["x", "y", "z"]] trailing')[0]).toEqual([["x", "y", "z"]]);
  });

  test("nothing parseable yields nothing, and nothing is ever evaluated", () => {
    expect(all("no braces at all")).toEqual([]);
    expect(all("{not: json, (() => globalThis.pwned = 1)()}")).toEqual([]);
    expect((globalThis as Record<string, unknown>).pwned).toBeUndefined();
  });

  test("a truncated value is cut back to its last complete element", () => {
    expect(repairTruncated('{"named_entities": ["a", "b", "c')).toEqual({ named_entities: ["a", "b"] });
    // The unfinished triple keeps its finished terms; triple validation drops it (see the max_tokens test).
    expect(repairTruncated('{"triples": [["a", "r", "b"], ["c", "r')).toEqual({
      triples: [["a", "r", "b"], ["c"]],
    });
    expect(repairTruncated('{"named_entities": ["a')).toBeUndefined();
    expect(repairTruncated('{"a": [1}')).toBeUndefined();
  });
});

describe("summarizeChunk", () => {
  test("sends the chunk with the three-part instruction and returns the reply", async () => {
    const reply =
      "Discussed: the Windows release build failing.\nDecided: install all tokenizers addons in CI.\nFiles: build/build.ts";
    fake.enqueue(textReply(reply));
    expect(await summarizeChunk(llm, CHUNK)).toBe(reply);
    const request = fake.messageRequests().at(-1)!;
    expect(request.body.messages[0].content).toContain(CHUNK);
    expect(request.body.system).toContain("Discussed:");
    expect(request.body.system).toContain("Decided:");
    expect(request.body.system).toContain("Files:");
  });

  test(`a reply longer than ${SUMMARY_MAX_WORDS} words is cut; a fenced reply is unwrapped`, async () => {
    fake.enqueue(textReply(`\`\`\`\n${Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ")}\n\`\`\``));
    const summary = await summarizeChunk(llm, CHUNK);
    expect(summary.startsWith("w0 w1")).toBe(true);
    expect(summary.split(/\s+/).filter((w) => w.startsWith("w"))).toHaveLength(SUMMARY_MAX_WORDS);
    expect(summary.endsWith("…")).toBe(true);
  });

  test("an empty reply is an error, and a cached summary makes no call", async () => {
    fake.enqueue(textReply("   "));
    expect(await failure(() => summarizeChunk(llm, CHUNK))).toBeInstanceOf(LlmOutputError);
    const cache = new InMemoryResultCache();
    fake.enqueue(textReply("Discussed: x.\nDecided: nothing decided.\nFiles: none"));
    const first = await summarizeChunk(llm, CHUNK, { cache: { cache, chunkHash: "s1" } });
    const calls = fake.messageRequests().length;
    expect(await summarizeChunk(llm, CHUNK, { cache: { cache, chunkHash: "s1" } })).toBe(first);
    expect(fake.messageRequests().length).toBe(calls);
  });

  test("a very long chunk is sent as head and tail", async () => {
    fake.enqueue(textReply("Discussed: a long log."));
    const long = `HEAD ${"x".repeat(50_000)} TAIL`;
    await summarizeChunk(llm, long);
    const sent = fake.messageRequests().at(-1)!.body.messages[0].content as string;
    expect(sent.length).toBeLessThan(20_000);
    expect(sent).toContain("HEAD");
    expect(sent).toContain("TAIL");
    expect(sent).toContain("characters left out");
  });

  test("capWords keeps line breaks and short texts whole", () => {
    expect(capWords("a b\nc", 3)).toBe("a b\nc");
    expect(capWords("a b\nc d", 3)).toBe("a b\nc …");
  });
});
