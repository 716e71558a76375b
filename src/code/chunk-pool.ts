/**
 * Tree-sitter parsing is the largest cost of a cold index (WASM parses 3–7 MB/s) and needs nothing
 * but a file's text, so workers parse while the main thread redacts, chunks, tokenises and embeds.
 * Workers claim files in order from the front, ahead of the main thread, which then finds each
 * file's scores ready and never parses while a worker keeps up. When one does not (parsing is
 * slower than the main thread's other work), the main thread parses the files it reaches first
 * itself, and rather than wait for a file a worker is still parsing it parses files from the back
 * of the list. Each file is claimed once through a shared array, so neither side idles, and every
 * file's scores are the same whoever computes them. A worker is an extra entrypoint of the
 * compiled binary (build/build.ts).
 */
import { availableParallelism } from "node:os";
import { isCompiled } from "../home/runtime.ts";
import { fileBreakScores, splitLines } from "./chunk.ts";
import type { GrammarName } from "./languages.ts";

/** What a worker is given: every file to parse, and the claims it shares with the main thread. */
export interface ParseJob {
  texts: string[];
  grammars: GrammarName[];
  /** Int32 per file (0 unclaimed, CLAIMED_BY_MAIN, CLAIMED_BY_WORKER, SENT_BY_WORKER), then the workers' front cursor. */
  claims: SharedArrayBuffer;
}
export type ParseMessage = { file: number; scores: Int8Array } | { done: true };

export const CLAIMED_BY_MAIN = 1;
export const CLAIMED_BY_WORKER = 2;
/** A worker has sent the file's scores; the message may not have been handled yet. */
export const SENT_BY_WORKER = 3;

/** More workers than this stop paying: the main thread's tokenising and embedding become the limit. */
const MAX_WORKERS = 3;

/**
 * Below this many characters to parse no worker starts by default. A worker costs 100–250 ms to start
 * (its runtime and grammars are compiled again) and competes with whatever else runs: on the shared
 * 2-core development box one worker cut a 10,000-file cold index (60 M characters parsed) by 19–34 %
 * in 3 of 5 paired runs and cost 17–20 % in 2 (best of 2: 16.6 s → 11.0 s); on abseil-cpp (8 M) it
 * was as often slower as faster.
 */
export const WORKER_MIN_CHARS = 16_000_000;

/**
 * Workers that parse beside the main thread for a job of `chars` characters to parse: cores − 1, at
 * most 3, from WORKER_MIN_CHARS up. TRIFORGE_CODE_WORKERS sets the count for every job (0: none).
 */
export function parseWorkerCount(chars: number): number {
  const configured = process.env.TRIFORGE_CODE_WORKERS;
  if (configured !== undefined && configured !== "" && Number.isInteger(Number(configured)))
    return Math.max(0, Number(configured));
  if (chars < WORKER_MIN_CHARS) return 0;
  return Math.max(0, Math.min(MAX_WORKERS, availableParallelism() - 1));
}

/** Where the worker module is: beside this file from source, under the root of a compiled binary. */
export function workerUrl(): string {
  return isCompiled()
    ? new URL("./code/chunk-worker.ts", Bun.pathToFileURL(Bun.main)).href
    : new URL("./chunk-worker.ts", import.meta.url).href;
}

/**
 * Shares the parsing of `files` with `workerCount` workers. `scores(k, parse)` gives file k's break
 * scores: parsed here by `parse` when no worker has claimed it, otherwise the worker's. A worker
 * that fails leaves its files to `parse`.
 */
export class SharedParse {
  private readonly claims: Int32Array;
  private readonly results: (Promise<Int8Array> | undefined)[];
  private readonly settle: ({ resolve: (s: Int8Array) => void; reject: (e: unknown) => void } | undefined)[];
  /** 1 once a worker's scores for the file have arrived. */
  private readonly arrived: Uint8Array;
  /** Scores the main thread computed from the back while it waited, by file. */
  private readonly parsedAhead = new Map<number, Int8Array>();
  /** The main thread's next file to take from the back is the one before this. */
  private back: number;
  private readonly workers: Worker[] = [];
  private running = 0;
  /** Files whose scores a worker delivered. */
  delivered = 0;

  constructor(
    private readonly files: { text: string; grammar: GrammarName }[],
    workerCount: number,
  ) {
    const shared = new SharedArrayBuffer(4 * (files.length + 1));
    this.claims = new Int32Array(shared);
    this.results = new Array(files.length);
    this.settle = new Array(files.length);
    this.arrived = new Uint8Array(files.length);
    this.back = files.length;
    const job: ParseJob = {
      texts: files.map((f) => f.text),
      grammars: files.map((f) => f.grammar),
      claims: shared,
    };
    for (let w = 0; w < workerCount; w++) {
      let worker: Worker;
      try {
        worker = new Worker(workerUrl());
      } catch {
        continue;
      }
      this.running++;
      worker.onmessage = (event: MessageEvent<ParseMessage>) => {
        const message = event.data;
        if ("done" in message) return this.retire(worker);
        this.delivered++;
        this.arrived[message.file] = 1;
        this.pending(message.file).resolve(message.scores);
      };
      worker.onerror = () => this.retire(worker, true);
      worker.postMessage(job);
      this.workers.push(worker);
    }
  }

  async scores(k: number, parse: () => Promise<Int8Array>): Promise<Int8Array> {
    const ahead = this.parsedAhead.get(k);
    if (ahead) {
      this.parsedAhead.delete(k);
      return ahead;
    }
    if (Atomics.compareExchange(this.claims, k, 0, CLAIMED_BY_MAIN) === 0) return parse();
    this.pending(k);
    // A worker holds the file: until it has sent its scores, parse another one from the back.
    // (Its messages are handled only when this thread waits for a task, so ask shared memory.)
    while (Atomics.load(this.claims, k) === CLAIMED_BY_WORKER && this.running > 0) {
      const j = this.claimFromBack(k);
      if (j < 0) break;
      const { text, grammar } = this.files[j];
      this.parsedAhead.set(j, await fileBreakScores(text, splitLines(text), grammar));
    }
    try {
      return await this.results[k]!;
    } catch {
      return parse();
    }
  }

  close(): void {
    for (const worker of this.workers) worker.terminate();
    this.workers.length = 0;
    this.parsedAhead.clear();
  }

  /** The last unclaimed file after `k`, now the main thread's, or -1 when the workers' front has reached the back. */
  private claimFromBack(k: number): number {
    if (this.back <= k + 1) return -1;
    const j = --this.back;
    if (Atomics.compareExchange(this.claims, j, 0, CLAIMED_BY_MAIN) === 0) return j;
    // Workers claim in order, so every file before one they hold is claimed already.
    this.back = 0;
    return -1;
  }

  private pending(k: number): { resolve: (s: Int8Array) => void; reject: (e: unknown) => void } {
    if (!this.settle[k]) {
      this.results[k] = new Promise<Int8Array>((resolve, reject) => {
        this.settle[k] = { resolve, reject };
      });
      // A worker's result may arrive before anyone waits for it; a failure is handled by scores().
      this.results[k].catch(() => {});
    }
    return this.settle[k]!;
  }

  /** A worker finished (or failed): once none runs, files claimed by a worker but never delivered fail over. */
  private retire(worker: Worker, failed = false): void {
    worker.terminate();
    const index = this.workers.indexOf(worker);
    if (index >= 0) this.workers.splice(index, 1);
    this.running--;
    if (this.running > 0 && !failed) return;
    for (let k = 0; k < this.settle.length; k++) {
      const claim = Atomics.load(this.claims, k);
      if ((claim !== CLAIMED_BY_WORKER && claim !== SENT_BY_WORKER) || this.arrived[k]) continue;
      const entry = this.pending(k);
      entry.reject(new Error("parse worker stopped"));
    }
  }
}
