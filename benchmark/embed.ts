#!/usr/bin/env bun
/**
 * Embedding throughput over a fixed, generated corpus, next to tokenisation alone in the same run:
 * `bun run benchmark/embed.ts [--texts 5000] [--rounds 5]`. Uses the model the build would embed
 * (TRIFORGE_MODEL_DIR, else models/, else ../shared/models/potion-base-2M-int8).
 *
 * Static embeddings are a lookup and a mean, so the tokenizer should dominate; the ratio of embed time
 * to tokenize time shows what pooling adds. Memory: resident set before and after loading the model
 * and after embedding, and the process's peak.
 */
import { parseArgs } from "node:util";
import { MAX_TOKENS, StaticModel } from "../src/embed/model.ts";
import { readModelDir, resolveModelDir } from "../src/embed/source.ts";
import { seededRandom } from "../test/support/random.ts";

/** Texts per embedBatch call: the batch the CLI's --stdin and the indexers use. */
const BATCH = 256;

const { values } = parseArgs({ options: { texts: { type: "string" }, rounds: { type: "string" } } });
const textCount = Number(values.texts ?? 5000);
const rounds = Math.max(1, Number(values.rounds ?? 5));

const PROSE =
  "we decided to move the session store to sqlite because the index must survive restarts and the cache " +
  "was rebuilt on every deploy so latency spiked after each release the team agreed to keep redis only for " +
  "rate limits while the background indexer writes summaries embeddings and a knowledge graph to disk";
const CODE = [
  "getUserById",
  "parse_args(argv)",
  "const result = await fetch(url, { signal });",
  "SELECT id FROM chunks WHERE project = ?",
  "src/memory/indexer.ts:42",
  "HTTPServerError",
  "useEffect(() => {}, [])",
  "kubectl rollout restart deployment/api",
];
const RUSSIAN =
  "мы решили перенести хранилище сессий в sqlite потому что индекс должен переживать перезапуски".split(" ");

/** Chat-like texts of 5 to ~150 words: mostly English prose, some code and identifiers, some Russian. */
function corpus(n: number): string[] {
  // Deterministic, so every run embeds the same corpus.
  const next = seededRandom(42);
  const words = PROSE.split(" ");
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)];
  return Array.from({ length: n }, () => {
    const length = 5 + Math.floor(next() ** 2 * 145);
    const parts: string[] = [];
    for (let i = 0; i < length; i++) {
      const roll = next();
      parts.push(roll < 0.8 ? pick(words) : roll < 0.95 ? pick(CODE) : pick(RUSSIAN));
    }
    return parts.join(" ");
  });
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const rssStart = process.memoryUsage().rss;
const texts = corpus(textCount);
const modelDir = resolveModelDir();
const loadStarted = performance.now();
const model = await StaticModel.load(readModelDir(modelDir));
const loadMs = performance.now() - loadStarted;
const rssLoaded = process.memoryUsage().rss;

async function time(fn: (batch: string[]) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < texts.length; i += BATCH) await fn(texts.slice(i, i + BATCH));
  return performance.now() - started;
}

// Tokens the model pools (after dropping unknowns and truncating at MAX_TOKENS): the tokens/s base.
const tokens = (await model.tokenize(texts)).reduce((sum, ids) => sum + ids.length, 0);
await time((b) => model.embedBatch(b)); // warm-up: JIT and page-in of the weights
const tokenizeMs: number[] = [];
const embedMs: number[] = [];
for (let r = 0; r < rounds; r++) {
  // Alternate the order so that drift in the machine's load does not favour either side.
  if (r % 2) embedMs.push(await time((b) => model.embedBatch(b)));
  tokenizeMs.push(await time((b) => model.tokenize(b)));
  if (!(r % 2)) embedMs.push(await time((b) => model.embedBatch(b)));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tok = median(tokenizeMs);
const emb = median(embedMs);
const rssEnd = process.memoryUsage().rss;
const peak = process.resourceUsage().maxRSS * 1024;

console.log(`embedding throughput: ${model.id} (dimension ${model.dim}) from ${modelDir}`);
console.log(
  `corpus: ${texts.length} texts, ${tokens} tokens (mean ${(tokens / texts.length).toFixed(1)}, cap ${MAX_TOKENS}), batches of ${BATCH}, median of ${rounds} rounds`,
);
console.log(
  `${"".padEnd(26)}${"ms".padStart(9)}${"texts/s".padStart(12)}${"tokens/s".padStart(14)}${"ratio".padStart(8)}`,
);
for (const [name, ms] of [
  ["tokenize only (baseline)", tok],
  ["embed (tokenize + pool)", emb],
] as const) {
  console.log(
    `${name.padEnd(26)}${ms.toFixed(1).padStart(9)}${Math.round((texts.length / ms) * 1000)
      .toLocaleString("en")
      .padStart(12)}${Math.round((tokens / ms) * 1000)
      .toLocaleString("en")
      .padStart(14)}${(ms / tok).toFixed(2).padStart(8)}`,
  );
}
console.log(`model load: ${loadMs.toFixed(1)} ms`);
console.log(
  `memory (RSS): start ${mb(rssStart)}, model loaded ${mb(rssLoaded)} (+${mb(rssLoaded - rssStart)}), after embedding ${mb(rssEnd)}, peak ${mb(peak)}`,
);
