/**
 * What the static model embeds for a chunk, measured without changing the index: each variant
 * re-embeds a loaded index's chunks (and the queries) from their path and text, and code-cv.ts /
 * code-localise.ts score the ranking with those vectors in place of the index's own.
 *
 * A chunk's vector is the pooled token rows of `path\ntext` (chunk-encoder.ts); the variants change
 * what is pooled and with what weight:
 * - `split`: identifiers are split at camelCase and letter/digit boundaries before WordPiece
 *   (`parseHTTPResponse` → `parse http response`, where WordPiece alone makes `par ##se ##ht …`);
 * - `path` w: the path's tokens count w times (1 as shipped);
 * - `defs` w: the names the chunk defines (after a definition keyword, or a C-like signature) are
 *   prepended as a header counted w times (a contextual chunk header);
 * - `idf` / `sif`: each token is weighted by the index's own statistics (IDF over chunks, or
 *   a / (a + p) of its share of all tokens), on the chunk side and, with `q`, the query side too.
 * The plain variant reproduces the index's vectors (checked: `check()`).
 */
import { WordPieceSplitter } from "../src/code/chunk-encoder.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { MAX_TOKENS, type StaticModel } from "../src/embed/model.ts";

export interface EmbedVariant {
  split?: boolean;
  pathWeight?: number;
  defsWeight?: number;
  /** Which definitions make the header: both kinds (default), keyword ones, C-like signatures. */
  defs?: "keyword" | "signature";
  /** Also the names of the definitions enclosing the chunk (lines above it, less indented). */
  enclosing?: boolean;
  weighting?: "idf" | "sif" | "common";
  /** Weight the query's tokens as the chunks' (idf/sif/common). */
  queryWeighting?: boolean;
  /** Split identifiers in the query (defaults to `split`). */
  querySplit?: boolean;
}

/** Named variants for `--embed` (code-cv.ts) and `embed:` columns (code-localise.ts). */
export const EMBED_VARIANTS: Record<string, EmbedVariant> = {
  plain: {},
  split: { split: true },
  "split-query-only": { querySplit: true },
  "split-chunks-only": { split: true, querySplit: false },
  "path-0": { pathWeight: 0 },
  "path-2": { pathWeight: 2 },
  "path-3": { pathWeight: 3 },
  "defs-1": { defsWeight: 1 },
  "defs-2": { defsWeight: 2 },
  "defs-0.5": { defsWeight: 0.5 },
  "defs-1-path-2": { defsWeight: 1, pathWeight: 2 },
  "defs-1-sif": { defsWeight: 1, weighting: "sif" },
  "defs-kw": { defsWeight: 1, defs: "keyword" },
  "defs-sig": { defsWeight: 1, defs: "signature" },
  "scope-1": { defsWeight: 1, enclosing: true },
  "split-defs-1": { split: true, defsWeight: 1 },
  "split-path-2": { split: true, pathWeight: 2 },
  idf: { weighting: "idf" },
  "idf-q": { weighting: "idf", queryWeighting: true },
  sif: { weighting: "sif" },
  "sif-q": { weighting: "sif", queryWeighting: true },
  common: { weighting: "common" },
  "common-q": { weighting: "common", queryWeighting: true },
  "split-idf-q": { split: true, weighting: "idf", queryWeighting: true },
};

const WORD = /[^\s\p{P}!-/:-@[-`{-~]+|[\p{P}!-/:-@[-`{-~]/gu;
const DELETED = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\p{Cf}\p{Co}\p{Cn}\ufffd]/gu;
const ASCII_IDENTIFIER = /^[A-Za-z0-9]+$/;
const PIECES = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
/** A name after a definition keyword, or a C-like signature's name (a line that does not end in `;`). */
const DEFINITION =
  /\b(?:def|defp|defmodule|class|function|func|fn|struct|interface|trait|enum|type|module|object|impl|protocol|extension|record|namespace|macro)\s+(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)|^[ \t]*(?:[A-Za-z_][\w<>,:*&[\]]*[ \t*&]+)+([A-Za-z_]\w*)[ \t]*\([^;\n]*$/gm;
const KEYWORDS = new Set(["if", "for", "while", "switch", "return", "catch", "sizeof", "new", "else"]);

/** The model's words of `text`: BERT's pre-tokenizer split, lower-cased; with `split`, identifiers split further. */
function words(text: string, split: boolean): string[] {
  const out: string[] = [];
  for (const word of text.replace(DELETED, "").match(WORD) ?? []) {
    if (split && word.length > 1 && ASCII_IDENTIFIER.test(word)) {
      for (const piece of word.match(PIECES) ?? [word]) out.push(piece.toLowerCase());
    } else out.push(word.toLowerCase());
  }
  return out;
}

function definitions(text: string, kind?: "keyword" | "signature"): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(DEFINITION)) {
    const name = kind === "keyword" ? m[1] : kind === "signature" ? m[2] : (m[1] ?? m[2]);
    if (name && !KEYWORDS.has(name)) names.push(name);
  }
  return names;
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * Names of the definitions enclosing `c`: going up from its first line through the file's earlier
 * chunks (at most 400 lines), each definition line indented less than everything below it so far.
 */
function enclosingNames(index: CodeIndex, c: number): string[] {
  const lines = index.texts[c].split("\n");
  let indent = Math.min(...lines.filter((l) => l.trim()).map(indentOf), Number.MAX_SAFE_INTEGER);
  const names: string[] = [];
  let seen = 0;
  for (let p = c - 1; p >= 0 && index.chunkFile[p] === index.chunkFile[c] && seen < 400 && indent > 0; p--) {
    const above = index.texts[p].split("\n");
    for (let i = above.length - 1; i >= 0 && indent > 0; i--, seen++) {
      const line = above[i];
      if (!line.trim() || indentOf(line) >= indent) continue;
      indent = indentOf(line);
      names.unshift(...definitions(line));
    }
  }
  return names;
}

/** A chunk or query as token ids with a weight each (its part's weight), in text order. */
interface Bag {
  ids: Int32Array;
  weights: Float32Array;
  /** Its vector, kept when no statistics of the index weight it (the same in every commit's index). */
  vector?: Float32Array;
}

export class VariantEmbedder {
  private readonly wordIds = new Map<string, Int32Array>();
  private readonly splitter: WordPieceSplitter | undefined;
  private readonly rows: Float32Array;
  private readonly rowKnown: Uint8Array;
  private readonly dim: number;
  /** Bags of chunks by variant tokenisation and key (path, text): code-localise re-embeds an index per commit. */
  private readonly bags = new Map<string, Bag>();

  constructor(private readonly model: StaticModel) {
    const vocabulary = model.wordPieceVocabulary();
    this.splitter = vocabulary ? new WordPieceSplitter(vocabulary) : undefined;
    this.dim = model.dim;
    const size = 1 << 17;
    this.rows = new Float32Array(size * this.dim);
    this.rowKnown = new Uint8Array(size);
  }

  /** Forgets the chunks' bags (between repositories). */
  clear(): void {
    this.bags.clear();
  }

  private async learn(all: string[]): Promise<void> {
    const rest: string[] = [];
    for (const word of new Set(all)) {
      if (this.wordIds.has(word)) continue;
      if (this.splitter && /^[\x20-\x7e]+$/.test(word))
        this.wordIds.set(word, Int32Array.from(this.splitter.ids(word)));
      else rest.push(word);
    }
    for (let i = 0; i < rest.length; i += 2000) {
      const group = rest.slice(i, i + 2000);
      const ids = await this.model.tokenize(group);
      group.forEach((word, k) => {
        this.wordIds.set(word, Int32Array.from(ids[k]));
      });
    }
  }

  private row(id: number): Float32Array {
    const at = id * this.dim;
    if (!this.rowKnown[id]) {
      this.model.addRows([id], this.rows.subarray(at, at + this.dim));
      this.rowKnown[id] = 1;
    }
    return this.rows.subarray(at, at + this.dim);
  }

  /** Parts (text, weight) → bag, cut at MAX_TOKENS tokens like the index. */
  private bag(parts: [string[], number][]): Bag {
    const ids: number[] = [];
    const weights: number[] = [];
    outer: for (const [list, weight] of parts)
      for (const word of list)
        for (const id of this.wordIds.get(word)!) {
          if (ids.length === MAX_TOKENS) break outer;
          ids.push(id);
          weights.push(weight);
        }
    return { ids: Int32Array.from(ids), weights: Float32Array.from(weights) };
  }

  private chunkParts(index: CodeIndex, c: number, v: EmbedVariant): [string[], number][] {
    const split = v.split ?? false;
    const path = index.files[index.chunkFile[c]].path;
    const text = index.texts[c];
    const parts: [string[], number][] = [[words(`${path}\n`, split), v.pathWeight ?? 1]];
    if (v.defsWeight) {
      const names = [...(v.enclosing ? enclosingNames(index, c) : []), ...definitions(text, v.defs)];
      parts.push([words(`${names.join(" ")}\n`, split), v.defsWeight]);
    }
    parts.push([words(text, split), 1]);
    return parts;
  }

  /** Bags of every chunk of `index` under `v`'s tokenisation. */
  async chunkBags(index: CodeIndex, v: EmbedVariant): Promise<Bag[]> {
    const tag = `${v.split ? 1 : 0}|${v.pathWeight ?? 1}|${v.defsWeight ?? 0}|${v.defs ?? ""}|${v.weighting ?? ""}|`;
    const out: (Bag | undefined)[] = [];
    const pending: { c: number; key: string; parts: [string[], number][] }[] = [];
    for (let c = 0; c < index.texts.length; c++) {
      const path = index.files[index.chunkFile[c]].path;
      const scope = v.enclosing ? `${enclosingNames(index, c).join(" ")}\0` : "";
      const key = `${tag}${scope}${path}\0${index.texts[c]}`;
      const known = this.bags.get(key);
      out.push(known);
      if (!known) pending.push({ c, key, parts: this.chunkParts(index, c, v) });
    }
    await this.learn(pending.flatMap((p) => p.parts.flatMap(([list]) => list)));
    for (const p of pending) {
      const bag = this.bag(p.parts);
      this.bags.set(p.key, bag);
      out[p.c] = bag;
    }
    return out as Bag[];
  }

  /** Per-token weights from the bags' statistics (undefined: all 1). */
  tokenWeights(bags: Bag[], v: EmbedVariant): Float32Array | undefined {
    if (!v.weighting) return undefined;
    const df = new Float64Array(this.rowKnown.length);
    const tf = new Float64Array(this.rowKnown.length);
    const seen = new Int32Array(this.rowKnown.length).fill(-1);
    let total = 0;
    bags.forEach((bag, c) => {
      for (const id of bag.ids) {
        tf[id]++;
        total++;
        if (seen[id] !== c) {
          seen[id] = c;
          df[id]++;
        }
      }
    });
    const n = bags.length;
    const weights = new Float32Array(this.rowKnown.length).fill(1);
    for (let id = 0; id < weights.length; id++) {
      if (v.weighting === "idf") weights[id] = Math.log((n + 1) / (df[id] + 0.5));
      else if (v.weighting === "sif") weights[id] = 1e-3 / (1e-3 + tf[id] / Math.max(1, total));
      // Down-weights only what most chunks hold (boilerplate): full weight up to 10 % of chunks.
      else weights[id] = df[id] <= 0.1 * n ? 1 : Math.max(0.1, Math.log(n / df[id]) / Math.log(10));
    }
    return weights;
  }

  pool(bag: Bag, tokenWeights: Float32Array | undefined, out: Float32Array): void {
    const dim = this.dim;
    const sum = new Float64Array(dim);
    for (let i = 0; i < bag.ids.length; i++) {
      const id = bag.ids[i];
      const w = bag.weights[i] * (tokenWeights ? tokenWeights[id] : 1);
      if (w === 0) continue;
      const row = this.row(id);
      for (let d = 0; d < dim; d++) sum[d] += w * row[d];
    }
    this.model.finishPool(sum, bag.ids.length, out);
  }

  /** The variant's vectors of every chunk of `index`, and its per-token weights for the queries. */
  async embedIndex(
    index: CodeIndex,
    v: EmbedVariant,
  ): Promise<{ vectors: Float32Array; weights?: Float32Array }> {
    const bags = await this.chunkBags(index, v);
    const weights = this.tokenWeights(bags, v);
    const vectors = new Float32Array(bags.length * this.dim);
    bags.forEach((bag, c) => {
      const row = vectors.subarray(c * this.dim, (c + 1) * this.dim);
      if (bag.vector) row.set(bag.vector);
      else {
        this.pool(bag, weights, row);
        if (!weights) bag.vector = row.slice();
      }
    });
    return { vectors, weights };
  }

  async embedQuery(query: string, v: EmbedVariant, weights: Float32Array | undefined): Promise<Float32Array> {
    const list = words(query, v.querySplit ?? v.split ?? false);
    await this.learn(list);
    const out = new Float32Array(this.dim);
    this.pool(this.bag([[list, 1]]), v.queryWeighting ? weights : undefined, out);
    return out;
  }
}

/** Largest |difference| between `a` and `b`: the plain variant against the index's own vectors. */
export function maxDifference(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

interface CvRepo {
  name: string;
  index: CodeIndex;
  queries: { query: string; category: string }[];
  vectors: Float32Array[];
}

const average = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * code-cv.ts's `--embed`: NDCG@10 of each variant (the ranking weights at their constants), and
 * leave-one-repository-out over the choice of variant: each alone against the index's own vectors,
 * and among all of them. `score` ranks a repository with whatever vectors it holds.
 */
export async function compareEmbeddings<R extends CvRepo>(
  model: StaticModel,
  repos: R[],
  names: string[],
  score: (repo: R) => number[],
  shipped: number[][],
): Promise<void> {
  for (const name of names) if (!EMBED_VARIANTS[name]) throw new Error(`unknown embedding variant ${name}`);
  const embedder = new VariantEmbedder(model);
  /** table[v][repo][query]; v = 0 is the index's own vectors. */
  const table: number[][][] = [shipped];
  for (const name of names) {
    const variant = EMBED_VARIANTS[name];
    const started = process.cpuUsage();
    let worst = 0;
    const perRepo: number[][] = [];
    for (const repo of repos) {
      const { vectors, weights } = await embedder.embedIndex(repo.index, variant);
      if (name === "plain") worst = Math.max(worst, maxDifference(vectors, repo.index.vectors));
      const queryVectors = await Promise.all(
        repo.queries.map((q) => embedder.embedQuery(q.query.trim(), variant, weights)),
      );
      const own = { vectors: repo.index.vectors, queries: repo.vectors };
      repo.index.vectors = vectors;
      repo.vectors = queryVectors;
      try {
        perRepo.push(score(repo));
      } finally {
        repo.index.vectors = own.vectors;
        repo.vectors = own.queries;
      }
    }
    embedder.clear();
    table.push(perRepo);
    const cpu = process.cpuUsage(started);
    console.error(
      `embedding ${name}: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU${name === "plain" ? `, max |vector difference| from the index's ${worst.toExponential(1)}` : ""}`,
    );
  }
  const all = repos.map((_, r) => r);
  const categories = [...new Set(repos.flatMap((r) => r.queries.map((q) => q.category)))].sort();
  const overall = (scores: number[][], among = all, category?: string) =>
    average(
      among
        .map((r) => scores[r].filter((_, q) => !category || repos[r].queries[q].category === category))
        .filter((xs) => xs.length)
        .map(average),
    );
  /** Best of `options` on `among` (ties keep the first). */
  const choose = (options: number[], among: number[]) => {
    let best = options[0];
    for (const o of options) if (overall(table[o], among) > overall(table[best], among) + 1e-9) best = o;
    return best;
  };
  const loo = (options: number[]) =>
    all.map(
      (held) =>
        table[
          choose(
            options,
            all.filter((r) => r !== held),
          )
        ][held],
    );
  const label = (v: number) => (v === 0 ? "(index)" : names[v - 1]);
  console.log(
    `\nembedding variants, ranking at its constants: NDCG@10 in-sample / leave-one-out (the variant or the index's vectors, chosen per fold)`,
  );
  console.log(
    `${"".padEnd(20)}${["overall", ...categories].map((c) => c.padStart(16)).join("")}   repos up / down`,
  );
  table.forEach((scores, v) => {
    const held = v === 0 ? scores : loo([0, v]);
    const cells = [undefined, ...categories].map((c) =>
      `${overall(scores, all, c).toFixed(3)} / ${overall(held, all, c).toFixed(3)}`.padStart(16),
    );
    const deltas = all.map((r) => average(scores[r]) - average(shipped[r]));
    const up = deltas.filter((d) => d > 0.0005).length;
    const down = deltas.filter((d) => d < -0.0005).length;
    console.log(`${label(v).padEnd(20)}${cells.join("")}   ${up} / ${down}`);
  });
  const every = table.map((_, v) => v);
  const folds = all.map((held) =>
    label(
      choose(
        every,
        all.filter((r) => r !== held),
      ),
    ),
  );
  console.log(
    `all variants, chosen per fold: LOO ${overall(loo(every)).toFixed(3)} (in-sample choice ${label(choose(every, all))}; folds: ${[...new Set(folds)].join(", ")})`,
  );
  console.log("queries each variant moves by more than 0.1 (index → variant):");
  table.forEach((scores, v) => {
    if (v === 0) return;
    const moved = all.flatMap((r) =>
      scores[r]
        .map((score, q) => ({ r, q, from: shipped[r][q], to: score }))
        .filter(({ from, to }) => Math.abs(to - from) > 0.1),
    );
    const gained = moved.filter(({ from, to }) => to > from).length;
    console.log(`  ${label(v)}: ${gained} up, ${moved.length - gained} down`);
    for (const { r, q, from, to } of moved)
      console.log(`    ${repos[r].name} ${from.toFixed(2)} → ${to.toFixed(2)}  ${repos[r].queries[q].query}`);
  });
  console.log("per repository (index, then each variant):");
  for (const r of all)
    console.log(
      `  ${repos[r].name.padEnd(14)}${table.map((scores) => average(scores[r]).toFixed(3).padStart(7)).join("")}`,
    );
}
