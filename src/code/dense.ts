/**
 * The dense and candidate stages of a code query, written for the scan over every chunk that they are:
 * at 100k chunks the dense scan reads 25 MB of vectors and the lexical candidates of a sentence can be
 * every chunk (feedback terms found in all of them), so these loops are most of a query's cost.
 */
import { type Int8DotKernel, int8DotKernel } from "../simd/int8-dots.ts";

/**
 * Cosine of every row of `vectors` (row-major, `dim` wide, L2-normalised) with the normalised `query`.
 * Eight running sums and the query in doubles: about 1.7× the speed of one sum per row, with the same
 * float32 scores (the doubles hold the sum exactly enough that its rounding to float32 does not change).
 */
export function cosineScores(vectors: Float32Array, dim: number, query: Float32Array): Float32Array {
  const rows = dim > 0 ? Math.floor(vectors.length / dim) : 0;
  const scores = new Float32Array(rows);
  const q = Float64Array.from(query);
  const wide = dim - (dim % 8);
  for (let row = 0, base = 0; row < rows; row++, base += dim) {
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let s4 = 0;
    let s5 = 0;
    let s6 = 0;
    let s7 = 0;
    for (let d = 0; d < wide; d += 8) {
      const at = base + d;
      s0 += vectors[at] * q[d];
      s1 += vectors[at + 1] * q[d + 1];
      s2 += vectors[at + 2] * q[d + 2];
      s3 += vectors[at + 3] * q[d + 3];
      s4 += vectors[at + 4] * q[d + 4];
      s5 += vectors[at + 5] * q[d + 5];
      s6 += vectors[at + 6] * q[d + 6];
      s7 += vectors[at + 7] * q[d + 7];
    }
    for (let d = wide; d < dim; d++) s0 += vectors[base + d] * q[d];
    scores[row] = s0 + s1 + (s2 + s3) + (s4 + s5 + (s6 + s7));
  }
  return scores;
}

/**
 * One row's cosine in cosineScores's arithmetic, operation for operation, so a rescored row gets the
 * very score the full scan would give it (a test holds them equal). The full scan keeps its own copy
 * of the loop: calling this per row cost it 15–25 %.
 */
function rowCosine(vectors: Float32Array, base: number, dim: number, q: Float64Array): number {
  const wide = dim - (dim % 8);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let s4 = 0;
  let s5 = 0;
  let s6 = 0;
  let s7 = 0;
  for (let d = 0; d < wide; d += 8) {
    const at = base + d;
    s0 += vectors[at] * q[d];
    s1 += vectors[at + 1] * q[d + 1];
    s2 += vectors[at + 2] * q[d + 2];
    s3 += vectors[at + 3] * q[d + 3];
    s4 += vectors[at + 4] * q[d + 4];
    s5 += vectors[at + 5] * q[d + 5];
    s6 += vectors[at + 6] * q[d + 6];
    s7 += vectors[at + 7] * q[d + 7];
  }
  for (let d = wide; d < dim; d++) s0 += vectors[base + d] * q[d];
  return s0 + s1 + (s2 + s3) + (s4 + s5 + (s6 + s7));
}

/**
 * The `count` best ids by `scores`, best first, among `ids` (every id of `scores`, ascending, when
 * undefined) whose file is allowed (`allowed[chunkFile[id]] === 1`; every file when `allowed` is
 * undefined). One pass with a small sorted buffer; once it is full, an id that does not beat its
 * weakest is passed over at once (so among equal scores the first met stays, the lower id within the
 * buffer).
 */
export function topScored(
  scores: Float32Array,
  count: number,
  ids?: Int32Array,
  allowed?: Uint8Array,
  chunkFile?: Int32Array,
): number[] {
  const held: number[] = [];
  if (count <= 0) return held;
  let floor = Number.NEGATIVE_INFINITY;
  const total = ids ? ids.length : scores.length;
  for (let k = 0; k < total; k++) {
    const id = ids ? ids[k] : k;
    const score = scores[id];
    if (held.length === count && score <= floor) continue;
    if (allowed && allowed[chunkFile![id]] !== 1) continue;
    let at = held.length;
    while (at > 0 && (scores[held[at - 1]] < score || (scores[held[at - 1]] === score && held[at - 1] > id)))
      at--;
    // Shifted by hand: splice cost 10–15 % of this loop.
    for (let k = held.length === count ? count - 1 : held.length; k > at; k--) held[k] = held[k - 1];
    held[at] = id;
    if (held.length === count) floor = scores[held[count - 1]];
  }
  return held;
}

/**
 * Indexes of fewer rows are scanned exactly in JavaScript: below ~4k rows of 64 dimensions the scan
 * costs tens of microseconds, less than the int8 pass's fixed work (the query's quantisation, the
 * first top-k, the rescoring), and no int8 copy is kept.
 */
export const INT8_SCAN_FROM_ROWS = 4096;

/**
 * An index's rows as int8 (each row scaled by its largest component / 127) in a WebAssembly SIMD
 * kernel's memory: the first, approximate pass of the dense scan reads a quarter of the float32 bytes.
 */
export interface Int8Rows {
  kernel: Int8DotKernel;
  rows: number;
  dim: number;
  /** `dim` rounded up to the kernel's 16-dimension block (the rows and the query padded with zeros). */
  padded: number;
  queryAt: number;
  scalesAt: number;
  approxAt: number;
  /** Where select writes the ids of the rows at or above a threshold. */
  idsAt: number;
  /** The int16 query and the approximate scores, views of the kernel's memory. */
  query: Int16Array;
  approx: Float32Array;
  /** Every FLOOR_SAMPLE_STRIDE-th row: the floor's threshold is taken among them. */
  sample: Int32Array;
  /** The largest ‖row − scale × int8 row‖₂: the int8 rounding's error per unit of query length. */
  residual: number;
  /** The largest ‖scale × int8 row‖₂: what the int16 query's rounding error is multiplied by. */
  norm: number;
  /** The exact scores of the rows just rescored (read only at their ids). */
  exact: Float32Array;
}

const int8Cache = new WeakMap<Float32Array, Int8Rows | null>();

/**
 * The first `rows` rows of `vectors` as int8 (computed once per vectors array: 27–42 ms for 100k × 64
 * on the shared development machine);
 * undefined below INT8_SCAN_FROM_ROWS rows (unless `from` says otherwise) or where WebAssembly SIMD is
 * unavailable, and the scan stays exact in JavaScript.
 */
export function int8Rows(
  vectors: Float32Array,
  dim: number,
  rows: number,
  from = INT8_SCAN_FROM_ROWS,
): Int8Rows | undefined {
  if (rows < from || dim <= 0) return undefined;
  let known = int8Cache.get(vectors);
  if (known === undefined || (known && (known.rows !== rows || known.dim !== dim))) {
    known = quantise(vectors, dim, rows) ?? null;
    int8Cache.set(vectors, known);
  }
  return known ?? undefined;
}

/**
 * The floor is the exact cosines' worst of `count` rows of high approximate score: any `count`
 * allowed rows' worst is under the true `count`-th best. They are found in two steps that read no
 * more than the select's pass: the approximate score of the (count × FLOOR_OVERSAMPLE /
 * FLOOR_SAMPLE_STRIDE)-th best of every FLOOR_SAMPLE_STRIDE-th row is a threshold about count ×
 * FLOOR_OVERSAMPLE rows reach; the best `count` of those are the floor's rows. It replaced the best
 * `count` of every 4th row (a 25,000-row top-k in JavaScript at 100k rows, and a floor near the 4 ×
 * count-th best): at 100k generated chunks the rows rescored fell from median 342 to 100 (10k: 286
 * to 77) and denseTop from 716 to 578 µs CPU (10k: 106 to 81), same process, rounds alternating.
 */
const FLOOR_SAMPLE_STRIDE = 16;
const FLOOR_OVERSAMPLE = 4;

const align16 = (n: number) => Math.ceil(n / 16) * 16;

function quantise(vectors: Float32Array, dim: number, rows: number): Int8Rows | undefined {
  const padded = align16(dim);
  const groups = Math.ceil(rows / 4);
  const scalesAt = rows * padded;
  const queryAt = align16(scalesAt + rows * 4);
  const approxAt = queryAt + padded * 2;
  const idsAt = approxAt + groups * 16;
  const kernel = int8DotKernel(padded / 16, idsAt + groups * 16);
  if (!kernel) return undefined;
  const { buffer } = kernel.memory;
  const int8 = new Int8Array(buffer, 0, rows * padded);
  const scales = new Float32Array(buffer, scalesAt, rows);
  let residual = 0;
  let norm = 0;
  for (let row = 0; row < rows; row++) {
    const base = row * dim;
    let largest = 0;
    for (let d = 0; d < dim; d++) {
      const value = Math.abs(vectors[base + d]);
      if (value > largest) largest = value;
    }
    const scale = Math.fround(largest / 127);
    scales[row] = scale;
    if (scale === 0) continue;
    const inverse = 1 / scale;
    let error = 0;
    let length = 0;
    for (let d = 0, at = row * padded; d < dim; d++, at++) {
      // |component| ≤ largest, so it rounds into [-127, 127]. Any rounding would do (the error bound
      // is of the values kept); this one ran 3× as fast as Math.round of a quotient.
      const value = Math.floor(vectors[base + d] * inverse + 0.5) | 0;
      int8[at] = value;
      const kept = scale * value;
      const lost = vectors[base + d] - kept;
      error += lost * lost;
      length += kept * kept;
    }
    if (error > residual) residual = error;
    if (length > norm) norm = length;
  }
  // The last group's unused scores are NaN, which no threshold selects.
  new Float32Array(buffer, approxAt + rows * 4, groups * 4 - rows).fill(Number.NaN);
  return {
    kernel,
    rows,
    dim,
    padded,
    queryAt,
    scalesAt,
    approxAt,
    idsAt,
    query: new Int16Array(buffer, queryAt, padded),
    approx: new Float32Array(buffer, approxAt, rows),
    sample: Int32Array.from(
      { length: Math.ceil(rows / FLOOR_SAMPLE_STRIDE) },
      (_, i) => i * FLOOR_SAMPLE_STRIDE,
    ),
    residual: Math.sqrt(residual),
    norm: Math.sqrt(norm),
    exact: new Float32Array(rows),
  };
}

/** The dense stage's answer: the best rows, best first, and their exact cosines. */
export interface DenseTop {
  ranked: number[];
  scores: number[];
}

/**
 * The `count` best rows of `vectors` (rows × dim, L2-normalised; `int8` made from them) by cosine with
 * `query` among those whose file is allowed (as for topScored), best first, exactly as topScored over
 * cosineScores ranks them (the same scores, the same order, ties included). With `int8` rows: an
 * approximate pass over all of them in WebAssembly; the exact cosines of `count` rows of high
 * approximate score (floorRows; their worst is a floor the true `count`-th best cannot be under); then the exact cosine of every row whose approximate score is within the int8
 * error bound of that floor. A row left out scores below the floor exactly, so it could be neither
 * in the top nor tied with it.
 */
export function denseTop(
  vectors: Float32Array,
  dim: number,
  query: Float32Array,
  count: number,
  int8?: Int8Rows,
  allowed?: Uint8Array,
  chunkFile?: Int32Array,
): DenseTop {
  let largest = 0;
  for (let d = 0; d < dim; d++) largest = Math.max(largest, Math.abs(query[d]));
  if (!int8 || largest === 0) {
    const scores = cosineScores(vectors, dim, query);
    const ranked = topScored(scores, count, undefined, allowed, chunkFile);
    return { ranked, scores: ranked.map((id) => scores[id]) };
  }
  const { rows, exact } = int8;
  const queryScale = Math.fround(largest / 32767);
  let queryLength = 0;
  let queryError = 0;
  for (let d = 0; d < dim; d++) {
    const value = Math.max(-32767, Math.min(32767, Math.round(query[d] / queryScale)));
    int8.query[d] = value;
    queryLength += query[d] ** 2;
    queryError += (query[d] - queryScale * value) ** 2;
  }
  int8.query.fill(0, dim);
  int8.kernel.scan(rows, 0, int8.queryAt, int8.scalesAt, int8.approxAt, queryScale);
  const q = Float64Array.from(query);
  // |exact − approximate| ≤ ‖int8 residual‖·‖query‖ + ‖int8 row‖·‖query residual‖, plus float32
  // rounding of both scores (relative 2^-24 each, on values below ~1): 1e-6 covers it many times over.
  const margin =
    (int8.residual * Math.sqrt(queryLength) + int8.norm * Math.sqrt(queryError)) * (1 + 1e-6) + 1e-6;
  let floor = Number.NEGATIVE_INFINITY;
  const first = floorRows(int8, count, allowed, chunkFile);
  if (first.best.length === count) {
    floor = Number.POSITIVE_INFINITY;
    for (const row of first.best) floor = Math.min(floor, Math.fround(rowCosine(vectors, row * dim, dim, q)));
  }
  // The threshold goes to WebAssembly as a float32: its rounding (2^-24 of a value below ~1.1) is
  // well inside the margin's 1e-6.
  const threshold = Math.fround(floor - margin);
  let selected: Int32Array;
  if (first.reached && threshold >= first.reachedFrom) {
    // Every row at or above the threshold is among those the floor's select found: filtering them
    // spares a second pass over every row's score.
    const { reached } = first;
    const { approx } = int8;
    let kept = 0;
    for (let k = 0; k < reached.length; k++)
      if (approx[reached[k]] >= threshold) reached[kept++] = reached[k];
    selected = reached.subarray(0, kept);
  } else {
    const found = int8.kernel.select(Math.ceil(rows / 4), int8.approxAt, threshold, int8.idsAt);
    selected = new Int32Array(int8.kernel.memory.buffer, int8.idsAt, found);
  }
  const candidates: number[] = [];
  for (const row of selected) {
    if (allowed && allowed[chunkFile![row]] !== 1) continue;
    exact[row] = rowCosine(vectors, row * dim, dim, q);
    candidates.push(row);
  }
  const ranked = topScored(exact, count, Int32Array.from(candidates));
  return { ranked, scores: ranked.map((id) => exact[id]) };
}

/**
 * `count` allowed rows of high approximate score (the last scan's), best first: the best `count`
 * of the rows at or above the threshold FLOOR_SAMPLE_STRIDE's sample gives, or where fewer reach it
 * (a filter allowing few rows), of every row. `reached`: the rows at or above `reachedFrom`,
 * ascending (a view of the kernel's memory, good until its next select), when the threshold served.
 */
function floorRows(
  int8: Int8Rows,
  count: number,
  allowed?: Uint8Array,
  chunkFile?: Int32Array,
): { best: number[]; reached?: Int32Array; reachedFrom: number } {
  const { approx, kernel } = int8;
  const pilotCount = Math.ceil((count * FLOOR_OVERSAMPLE) / FLOOR_SAMPLE_STRIDE);
  const pilot = topScored(approx, pilotCount, int8.sample, allowed, chunkFile);
  if (pilot.length === pilotCount) {
    // The threshold is a float32 score itself, so the select keeps that row and every one above it.
    const reachedFrom = approx[pilot[pilotCount - 1]];
    const found = kernel.select(Math.ceil(int8.rows / 4), int8.approxAt, reachedFrom, int8.idsAt);
    if (found >= count) {
      const reached = new Int32Array(kernel.memory.buffer, int8.idsAt, found);
      const best = topScored(approx, count, reached, allowed, chunkFile);
      if (best.length === count) return { best, reached, reachedFrom };
    }
  }
  return { best: topScored(approx, count, undefined, allowed, chunkFile), reachedFrom: Number.NaN };
}
