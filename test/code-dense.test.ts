import { describe, expect, test } from "bun:test";
import { cosineScores, denseTop, int8Rows, topScored } from "../src/code/dense.ts";
import { int8DotKernel, int8DotsModule } from "../src/simd/int8-dots.ts";
import { seededRandom } from "./support/random.ts";

const random = seededRandom(10);

function normalised(dim: number): Float32Array {
  const v = Float32Array.from({ length: dim }, () => random() * 2 - 1);
  const length = Math.hypot(...v);
  return v.map((x) => x / length);
}

/** `rows` unit rows of `dim`, with some zero rows and some exact duplicates (ties). */
function rowsOf(rows: number, dim: number): Float32Array {
  const vectors = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    if (r % 17 === 5) continue;
    if (r % 11 === 3 && r > dim) vectors.copyWithin(r * dim, (r - 3) * dim, (r - 2) * dim);
    else vectors.set(normalised(dim), r * dim);
  }
  return vectors;
}

describe("the int8 SIMD kernel", () => {
  test("its assembled module is valid WebAssembly for every block count", () => {
    for (const blocks of [1, 4, 7, 96]) expect(WebAssembly.validate(int8DotsModule(blocks))).toBe(true);
  });

  test("rows past WebAssembly's memory limit get no kernel, so the JavaScript scan runs", () => {
    expect(int8DotKernel(4, 2 ** 33)).toBeUndefined();
  });

  test("its dot products equal the integer sums, times both scales, four rows a step and the rest", () => {
    for (const [blocks, rows] of [
      [1, 300],
      [4, 300],
      [4, 303],
      [4, 2],
      [5, 301],
    ]) {
      const padded = blocks * 16;
      const scalesAt = rows * padded;
      const queryAt = scalesAt + rows * 4;
      const outAt = queryAt + padded * 2;
      const kernel = int8DotKernel(blocks, outAt + (rows + 1) * 4);
      expect(kernel).toBeDefined();
      const { buffer } = kernel!.memory;
      const int8 = new Int8Array(buffer, 0, rows * padded);
      const scales = new Float32Array(buffer, scalesAt, rows);
      const query = new Int16Array(buffer, queryAt, padded);
      for (let i = 0; i < int8.length; i++) int8[i] = Math.floor(random() * 255) - 127;
      for (let r = 0; r < rows; r++) scales[r] = r % 7 === 0 ? 0 : random();
      for (let d = 0; d < padded; d++) query[d] = Math.floor(random() * 65535) - 32767;
      const out = new Float32Array(buffer, outAt, rows + 1);
      out[rows] = 12345;
      kernel!.scan(rows, 0, queryAt, scalesAt, outAt, 0.25);
      // Nothing is written past the last row.
      expect(out[rows]).toBe(12345);
      for (let r = 0; r < rows; r++) {
        let sum = 0;
        for (let d = 0; d < padded; d++) sum += int8[r * padded + d] * query[d];
        expect(out[r]).toBe(Math.fround(Math.fround(Math.fround(sum) * scales[r]) * 0.25));
      }
    }
  });
});

test("the kernel's select finds every score at or above a threshold, in order", () => {
  const kernel = int8DotKernel(1, 1 << 16)!;
  // 1,002 scores in 251 groups of four, the last two NaN (selected by no threshold).
  const scores = new Float32Array(kernel.memory.buffer, 0, 1004);
  for (let i = 0; i < 1002; i++) scores[i] = i % 97 === 0 ? 0.5 : random();
  scores.fill(Number.NaN, 1002);
  for (const threshold of [0.5, 0.9, 2, Number.NEGATIVE_INFINITY]) {
    const found = kernel.select(251, 0, threshold, 8192);
    const expected = [...scores.keys()].filter((i) => scores[i] >= threshold);
    expect([...new Int32Array(kernel.memory.buffer, 8192, found)]).toEqual(expected);
  }
});

describe("denseTop", () => {
  /** What the search ranked before the int8 pass: the exact scan and one top-k over it. */
  function exactTop(
    vectors: Float32Array,
    dim: number,
    query: Float32Array,
    count: number,
    allowed?: Uint8Array,
    chunkFile?: Int32Array,
  ) {
    const scores = cosineScores(vectors, dim, query);
    const ranked = topScored(scores, count, undefined, allowed, chunkFile);
    return { ranked, scores: ranked.map((id) => scores[id]) };
  }

  test("with int8 rows it ranks exactly as the exact scan, scores and ties included", () => {
    // Dimensions that are not a multiple of 4, 8 or 16, and the static model's 64.
    for (const dim of [3, 13, 64, 70]) {
      const rows = 2500;
      const vectors = rowsOf(rows, dim);
      const int8 = int8Rows(vectors, dim, rows, 0);
      expect(int8).toBeDefined();
      for (let q = 0; q < 8; q++) {
        // Some queries are a stored row itself (its duplicates tie at the top).
        const query = q % 3 === 0 ? vectors.slice(3 * dim, 4 * dim) : normalised(dim);
        for (const count of [1, 50, 400])
          expect(denseTop(vectors, dim, query, count, int8)).toEqual(exactTop(vectors, dim, query, count));
      }
    }
  });

  test("with a file filter, more wanted than allowed, a zero query, and without int8 rows", () => {
    const dim = 64;
    const rows = 1200;
    const vectors = rowsOf(rows, dim);
    const chunkFile = Int32Array.from({ length: rows }, (_, r) => Math.floor(r / 10));
    const allowed = Uint8Array.from({ length: rows / 10 }, (_, f) => (f % 3 === 0 ? 1 : 0));
    const int8 = int8Rows(vectors, dim, rows, 0);
    const query = normalised(dim);
    for (const count of [50, 500]) {
      const exact = exactTop(vectors, dim, query, count, allowed, chunkFile);
      expect(denseTop(vectors, dim, query, count, int8, allowed, chunkFile)).toEqual(exact);
      expect(denseTop(vectors, dim, query, count, undefined, allowed, chunkFile)).toEqual(exact);
    }
    expect(exactTop(vectors, dim, query, 500, allowed, chunkFile).ranked.length).toBe(400);
    const zero = new Float32Array(dim);
    expect(denseTop(vectors, dim, zero, 50, int8)).toEqual(exactTop(vectors, dim, zero, 50));
  });

  test("the floor's rows: a sample's threshold, or every row where too few allowed rows reach it", () => {
    // Rows near the query in a few places (their cosines crowd the floor) among random ones; filters
    // that leave the sample's threshold enough allowed rows and one that does not (one file in 50).
    const dim = 64;
    const rows = 6000;
    const vectors = rowsOf(rows, dim);
    const query = normalised(dim);
    const random = seededRandom(7);
    for (let r = 0; r < rows; r += 37) {
      const row = vectors.subarray(r * dim, (r + 1) * dim);
      let length = 0;
      for (let d = 0; d < dim; d++) length += (row[d] = query[d] + 0.3 * (random() - 0.5)) ** 2;
      for (let d = 0; d < dim; d++) row[d] /= Math.sqrt(length);
    }
    const int8 = int8Rows(vectors, dim, rows);
    expect(int8).toBeDefined();
    const chunkFile = Int32Array.from({ length: rows }, (_, r) => Math.floor(r / 10));
    for (const every of [1, 2, 50]) {
      const allowed = Uint8Array.from({ length: rows / 10 }, (_, f) => (f % every === 0 ? 1 : 0));
      for (const count of [1, 8, 50, 200]) {
        const filter = every === 1 ? undefined : allowed;
        expect(denseTop(vectors, dim, query, count, int8, filter, chunkFile)).toEqual(
          exactTop(vectors, dim, query, count, filter, chunkFile),
        );
      }
    }
  });

  test("rows the int8 copy holds exactly: every row at the floor is rescored, with the margin at its least", () => {
    // Integer rows with a 127 component are kept by int8 without rounding, and the query e0 by int16,
    // so the error bound is float32's alone. Cosines fall in levels ~0.003 apart, ~60 rows a level:
    // the top ties at its boundary, and the sample's threshold lies a few levels below the floor.
    const dim = 64;
    const rows = 8000;
    const vectors = new Float32Array(rows * dim);
    for (let r = 0; r < rows; r++) {
      const level = (r * 37) % 127;
      const length = Math.hypot(level, 127);
      vectors[r * dim] = level / length;
      vectors[r * dim + 1 + (r % (dim - 1))] = 127 / length;
    }
    const query = new Float32Array(dim);
    query[0] = 1;
    const int8 = int8Rows(vectors, dim, rows);
    expect(int8).toBeDefined();
    for (const count of [50, 100, 130])
      expect(denseTop(vectors, dim, query, count, int8)).toEqual(exactTop(vectors, dim, query, count));
  });
  test("small indexes keep the exact JavaScript scan; the int8 copy is made once per vectors array", () => {
    const vectors = rowsOf(100, 8);
    expect(int8Rows(vectors, 8, 100)).toBeUndefined();
    const first = int8Rows(vectors, 8, 100, 0);
    expect(int8Rows(vectors, 8, 100, 0)).toBe(first);
  });
});
