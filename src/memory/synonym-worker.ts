/**
 * Synonym edges on the second core. Comparing each new phrase with every stored one is the largest
 * single cost of a big indexing run (LoCoMo: 32 M pairs, ~0.5 s), and it needs only vectors, so a
 * worker computes batch k's pairs while the main thread extracts batch k+1 and writes batch k-1.
 *
 * The worker runs `synonymPairs`' own source text from a Blob URL, so it needs no entrypoint of its
 * own in the compiled binary, and its pairs are exactly what the main thread would compute. It keeps a
 * copy of the known phrase vectors and appends each job's fresh rows after answering it, so jobs must
 * be sent in the order the main thread registers phrases.
 */
import { BOUND_DIMS, SYNONYM_THRESHOLD, synonymPairs } from "./graph.ts";

/** Below this many phrase pairs a job costs less than handing it over (~30 ms of comparisons). */
export const WORKER_MIN_PAIRS = 2_000_000;

/** The worker's side, as plain JavaScript around the kernel's source. */
function workerSource(): string {
  return `
const synonymPairs = ${synonymPairs.toString()};
let known = new Float32Array(0);
let count = 0;
let settings;
self.onmessage = (event) => {
  const message = event.data;
  if (message.init) {
    settings = message.init;
    known = message.init.vectors;
    count = message.init.count;
    return;
  }
  const { dim, head, threshold } = settings;
  const pairs = synonymPairs(known, count, message.fresh, message.count, dim, head, threshold);
  const grown = new Float32Array((count + message.count) * dim);
  grown.set(known.subarray(0, count * dim));
  grown.set(message.fresh.subarray(0, message.count * dim), count * dim);
  known = grown;
  count += message.count;
  self.postMessage({ id: message.id, pairs: Float64Array.from(pairs) });
};`;
}

export class SynonymWorker {
  private readonly worker: Worker;
  private readonly url: string;
  private readonly waiting = new Map<
    number,
    { resolve: (p: Float64Array) => void; reject: (e: Error) => void }
  >();
  private nextId = 0;
  private failed: Error | undefined;

  /** Starts a worker that knows `count` phrase vectors (rows of `dim`); throws when workers are unavailable. */
  constructor(vectors: Float32Array, count: number, dim: number) {
    this.url = URL.createObjectURL(new Blob([workerSource()], { type: "application/javascript" }));
    this.worker = new Worker(this.url);
    this.worker.onmessage = (event: MessageEvent<{ id: number; pairs: Float64Array }>) => {
      const job = this.waiting.get(event.data.id);
      this.waiting.delete(event.data.id);
      job?.resolve(event.data.pairs);
    };
    this.worker.onerror = (event) => this.fail(new Error(`synonym worker failed: ${event.message}`));
    this.worker.postMessage({
      init: {
        vectors: vectors.slice(0, count * dim),
        count,
        dim,
        head: Math.min(BOUND_DIMS, dim),
        threshold: SYNONYM_THRESHOLD,
      },
    });
  }

  /** synonymPairs of `count` fresh rows against everything sent before them. */
  pairs(fresh: Float32Array, count: number): Promise<Float64Array> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    const answer = new Promise<Float64Array>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
    });
    this.worker.postMessage({ id, fresh: fresh.slice(), count });
    return answer;
  }

  private fail(error: Error): void {
    this.failed = error;
    for (const job of this.waiting.values()) job.reject(error);
    this.waiting.clear();
  }

  close(): void {
    this.fail(new Error("synonym worker closed"));
    this.worker.terminate();
    URL.revokeObjectURL(this.url);
  }
}
