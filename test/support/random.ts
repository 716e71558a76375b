/**
 * A small deterministic generator (mulberry32): tests and benchmarks that make their own data from a
 * seed get the same data on every run, so a failure can be replayed. No test-runner import, so
 * benchmarks can use it too.
 */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
