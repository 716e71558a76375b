#!/usr/bin/env bun
/**
 * How well the synonym rule's LSH candidates find each phrase's true nearest, and what they cost:
 *
 *   bun benchmark/synonym-candidates.ts --db <memory.db> [--sample 1500] [--weak 3,4,6,9]
 *
 * Reads every phrase of a store (a kept `memory-scale.ts --synthetic 100000 --keep` store is the
 * case the rule is bounded by), buckets them as store/synonyms.ts does (LSH_BANDS bands of LSH_BITS
 * sign bits, a bucket's BUCKET_LIMIT heads of lowest rank), and for a sample of phrases compares
 * their true SYNONYM_NEIGHBOURS nearest at cosine ≥ SYNONYM_THRESHOLD (an exact scan of every
 * phrase) with their candidates: recall (the share of those true nearest among the candidates) and
 * meetings (candidates compared, what the upkeep reads per phrase that probes). Rows: the rule
 * (its own bucket and the LSH_BITS keys one bit away, in every band it heads) and query-directed
 * probes: a pair one bit apart counts only when that bit is among the `--weak` bits of least
 * |projection| of either end, still symmetric and a function of the set of phrases.
 */
import { Database } from "bun:sqlite";
import { parseArgs } from "node:util";
import { denseTop, int8Rows } from "../src/code/dense.ts";
import {
  BUCKET_LIMIT,
  bandProjections,
  keysOfProjections,
  LSH_BANDS,
  LSH_BITS,
  phraseRank,
  SYNONYM_NEIGHBOURS,
  SYNONYM_THRESHOLD,
} from "../src/store/synonyms.ts";

const { values } = parseArgs({
  options: { db: { type: "string" }, sample: { type: "string" }, weak: { type: "string" } },
});
if (!values.db) {
  console.error(
    "usage: bun benchmark/synonym-candidates.ts --db <memory.db> [--sample 1500] [--weak 3,4,6,9]",
  );
  process.exit(2);
}
const SAMPLE = Number(values.sample ?? 1500);
const WEAK = (values.weak ?? "3,4,6,9").split(",").map(Number);
const KEPT_WEAK = Math.max(...WEAK);

const started = performance.now();
const db = new Database(values.db, { readonly: true });
const rows = db.query("SELECT phrase, vector FROM entities ORDER BY id").values() as [string, Uint8Array][];
const count = rows.length;
const dim = rows.length ? rows[0][1].byteLength / 4 : 0;
const vectors = new Float32Array(count * dim);
const names: string[] = new Array(count);
const ranks = new Float64Array(count);
rows.forEach(([phrase, blob], i) => {
  vectors.set(new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + dim * 4)), i * dim);
  names[i] = phrase;
  ranks[i] = phraseRank(phrase);
});
db.close();

// Each phrase's key per band and its KEPT_WEAK key bits of least |projection| per band.
const keys = new Int32Array(count * LSH_BANDS);
const weak = new Uint8Array(count * LSH_BANDS * KEPT_WEAK);
const order = Array.from({ length: LSH_BITS }, (_, k) => k);
for (let i = 0; i < count; i++) {
  const projections = bandProjections(vectors.subarray(i * dim, (i + 1) * dim), dim);
  // Band-prefixed keys, as the store keeps them: a probe flips one of their low LSH_BITS bits.
  keys.set(keysOfProjections(projections), i * LSH_BANDS);
  for (let band = 0; band < LSH_BANDS; band++) {
    const strength = (k: number) => Math.abs(projections[band * LSH_BITS + LSH_BITS - 1 - k]);
    order.sort((a, b) => strength(a) - strength(b));
    for (let k = 0; k < KEPT_WEAK; k++) weak[(i * LSH_BANDS + band) * KEPT_WEAK + k] = order[k];
  }
}
// Each band's buckets, cut to their heads: the BUCKET_LIMIT of lowest (rank, text).
const heads = Array.from({ length: LSH_BANDS }, (_, band) => {
  const buckets = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const key = keys[i * LSH_BANDS + band];
    let bucket = buckets.get(key);
    if (!bucket) buckets.set(key, (bucket = []));
    bucket.push(i);
  }
  for (const bucket of buckets.values()) {
    bucket.sort((x, y) => ranks[x] - ranks[y] || (names[x] < names[y] ? -1 : names[x] > names[y] ? 1 : 0));
    bucket.length = Math.min(bucket.length, BUCKET_LIMIT);
  }
  return buckets;
});
const heading = heads.map((buckets) => {
  const is = new Uint8Array(count);
  for (const bucket of buckets.values()) for (const i of bucket) is[i] = 1;
  return is;
});
console.log(
  `${count} phrases of ${dim} dimensions read and bucketed in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);

const isWeak = (i: number, band: number, bit: number, m: number) => {
  const at = (i * LSH_BANDS + band) * KEPT_WEAK;
  for (let k = 0; k < m; k++) if (weak[at + k] === bit) return true;
  return false;
};
/** Phrase x's candidates and meetings: with `m` weak bits, or the rule's every bit when m is undefined. */
function candidatesOf(x: number, m?: number): { candidates: Set<number>; meetings: number } {
  const candidates = new Set<number>();
  let meetings = 0;
  for (let band = 0; band < LSH_BANDS; band++) {
    if (!heading[band][x]) continue;
    const own = keys[x * LSH_BANDS + band];
    for (let probe = -1; probe < LSH_BITS; probe++) {
      const bucket = heads[band].get(probe < 0 ? own : own ^ (1 << probe));
      if (!bucket) continue;
      const open = probe < 0 || m === undefined || isWeak(x, band, probe, m);
      for (const y of bucket) {
        if (y === x || !(open || isWeak(y, band, probe, m!))) continue;
        meetings++;
        candidates.add(y);
      }
    }
  }
  return { candidates, meetings };
}

const int8 = int8Rows(vectors, dim, count, 1);
let seed = 20261204;
const next = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};
const variants: (number | undefined)[] = [undefined, ...WEAK];
const found = variants.map(() => 0);
const met = variants.map(() => 0);
let truth = 0;
for (let s = 0; s < SAMPLE; s++) {
  const x = Math.floor(next() * count);
  const top = denseTop(vectors, dim, vectors.subarray(x * dim, (x + 1) * dim), SYNONYM_NEIGHBOURS + 1, int8);
  const nearest = top.ranked
    .filter((j, k) => j !== x && top.scores[k] >= SYNONYM_THRESHOLD)
    .slice(0, SYNONYM_NEIGHBOURS);
  truth += nearest.length;
  variants.forEach((m, v) => {
    const { candidates, meetings } = candidatesOf(x, m);
    found[v] += nearest.filter((j) => candidates.has(j)).length;
    met[v] += meetings;
  });
}
console.log(
  `${SAMPLE} sampled phrases, ${truth} true nearest (up to ${SYNONYM_NEIGHBOURS} each at cosine ≥ ${SYNONYM_THRESHOLD})`,
);
console.log(
  "| candidates | recall of the true nearest | meetings a phrase | × the rule's |\n|---|---|---|---|",
);
for (const [v, m] of variants.entries()) {
  const name =
    m === undefined ? `the rule (all ${LSH_BITS} bits)` : `directed, ${m} weakest bits of either end`;
  console.log(
    `| ${name} | ${((100 * found[v]) / truth).toFixed(1)} % | ${(met[v] / SAMPLE).toFixed(0)} | ${(met[v] / met[0]).toFixed(2)} |`,
  );
}
