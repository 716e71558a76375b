import { describe, expect, test } from "bun:test";
import type { StaticModel } from "../src/embed/model.ts";
import { dotAll, MemoryIndex } from "../src/memory/recall/snapshot.ts";
import { floatDotsModule, floatRows } from "../src/simd/float-dots.ts";
import type { StoreSnapshot } from "../src/store/types.ts";
import { seededRandom } from "./support/random.ts";

/** Rows of values in [-1, 1), with exact zeros, negative zeros and tiny values among them. */
function rowsOf(count: number, dim: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  const rows = new Float32Array(count * dim);
  for (let i = 0; i < rows.length; i++) {
    const pick = random();
    rows[i] = pick < 0.05 ? 0 : pick < 0.1 ? -0 : pick < 0.15 ? (random() - 0.5) * 1e-30 : random() * 2 - 1;
  }
  return rows;
}

/** Whether two arrays hold the same values bit for bit (-0 and 0 apart). */
function sameBits(a: Float64Array, b: Float64Array): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}

describe("float-dots kernel", () => {
  test("gives dotAll's scores bit for bit, for every row count and the model dimensions", () => {
    const { validate } = WebAssembly;
    expect(validate(floatDotsModule(64))).toBe(true);
    for (const dim of [4, 8, 64, 256])
      for (const count of [1, 3, 4, 5, 7, 8, 9, 103]) {
        const rows = rowsOf(count + 2, dim, dim * 1000 + count);
        const kernel = floatRows(rows, count, dim)!;
        for (let q = 0; q < 3; q++) {
          const query = rowsOf(1, dim, q + 7);
          const expected = dotAll(rows, query, count, dim);
          const found = kernel.dots(query);
          expect({ dim, count, q, same: sameBits(found, expected) }).toEqual({ dim, count, q, same: true });
        }
      }
  });

  test("scores are the rows' own: a later query does not change an earlier answer, a changed source row is not seen", () => {
    const rows = rowsOf(50, 64, 3);
    const kernel = floatRows(rows, 50, 64)!;
    const first = kernel.dots(rowsOf(1, 64, 4));
    const kept = Float64Array.from(first);
    kernel.dots(rowsOf(1, 64, 5));
    expect(sameBits(first, kept)).toBe(true);
    const before = dotAll(rows, rowsOf(1, 64, 6), 50, 64);
    rows.fill(0.5, 0, 64);
    // The kernel scans its own copy, made when it was built.
    expect(sameBits(kernel.dots(rowsOf(1, 64, 6)), before)).toBe(true);
  });

  test("dimensions the kernel does not take are left to JavaScript", () => {
    expect(floatRows(new Float32Array(60), 10, 6)).toBeUndefined();
    expect(floatRows(new Float32Array(0), 0, 0)).toBeUndefined();
    expect(floatRows(new Float32Array(2048 * 2), 2, 2048)).toBeUndefined();
    // More rows asked for than the array holds.
    expect(floatRows(new Float32Array(64), 2, 64)).toBeUndefined();
  });
});

describe("a memory index's dense scores", () => {
  test("are the same from its first scan (JavaScript) and its later ones (the kernel), at a size that uses it", async () => {
    const dim = 64;
    const count = 5003;
    const chunkVectors = rowsOf(count, dim, 11);
    const snapshot: StoreSnapshot = {
      generation: 1,
      dim,
      chunks: Array.from({ length: count }, (_, i) => ({
        id: i + 1,
        sessionId: `s${i % 17}`,
        ts: "2026-01-01T00:00:00Z",
        text: `chunk ${i}`,
        graphSource: "local",
        turns: [
          { uuid: `u${i}`, role: "user", ts: "2026-01-01T00:00:00Z", start: 0, end: `chunk ${i}`.length },
        ],
      })),
      chunkVectors,
      chunkModels: new Array(count).fill("fixture"),
      entities: [],
      facts: [],
      factVectors: new Float32Array(0),
      factModels: [],
      edges: {
        kind: new Uint8Array(0),
        a: new Int32Array(0),
        b: new Int32Array(0),
        weight: new Float64Array(0),
      },
    };
    const index = await MemoryIndex.build(snapshot, { id: "fixture", dim } as StaticModel);
    const queries = [rowsOf(1, dim, 12), rowsOf(1, dim, 13), rowsOf(1, dim, 12)];
    const scans = queries.map((query) => index.denseScores(query));
    for (const [i, query] of queries.entries())
      expect(sameBits(scans[i], dotAll(chunkVectors, query, count, dim))).toBe(true);
    expect(sameBits(scans[0], scans[2])).toBe(true);
  });
});
