/**
 * Redacting a file costs a sixth of a cold index's main-thread time (code mode reads 80–90 MB/s: 1.25 s
 * of 6.8 s on the generated 99 MB repository) and needs nothing but the file's text, so on a job without
 * parse workers a worker redacts the files in order ahead of the main thread, on the core that would
 * otherwise be idle. A worker that fails, or a job too small to pay for starting one, is redacted on the
 * main thread: the result is the same.
 */
import { availableParallelism } from "node:os";
import { workerUrl } from "./chunk-pool.ts";
import { redactKeepingLines } from "./redact.ts";

export interface RedactJob {
  redact: string[];
  rules: string[];
}
export type RedactMessage = { file: number; text: string; redactions: number };
type Redacted = { text: string; redactions: number };

/** Below this many characters the worker's start (tens of ms) costs more than it saves. */
const REDACT_WORKER_MIN_CHARS = 1_000_000;

/** Whether a job of `chars` characters gets a redaction worker; TRIFORGE_CODE_REDACT_WORKER=0/1 decides for every job. */
export function useRedactWorker(chars: number, parseWorkers: number): boolean {
  const configured = process.env.TRIFORGE_CODE_REDACT_WORKER;
  if (configured === "0" || configured === "1") return configured === "1";
  return parseWorkers === 0 && chars >= REDACT_WORKER_MIN_CHARS && availableParallelism() > 1;
}

export class RedactAhead {
  private readonly results: Promise<Redacted>[];
  private readonly settle: { resolve: (r: Redacted) => void; reject: (e: unknown) => void }[];
  private worker: Worker | undefined;
  /** Files the worker redacted. */
  delivered = 0;

  constructor(
    private readonly texts: string[],
    private readonly rules: string[],
  ) {
    this.settle = new Array(texts.length);
    this.results = texts.map(
      (_, k) =>
        new Promise<Redacted>((resolve, reject) => {
          this.settle[k] = { resolve, reject };
        }),
    );
    // A failure is handled by text(); nobody may be waiting yet.
    for (const result of this.results) result.catch(() => {});
    try {
      this.worker = new Worker(workerUrl());
    } catch {
      this.fail();
      return;
    }
    this.worker.onmessage = (event: MessageEvent<RedactMessage>) => {
      const { file, text, redactions } = event.data;
      this.delivered++;
      this.settle[file].resolve({ text, redactions });
    };
    this.worker.onerror = () => this.fail();
    const job: RedactJob = { redact: texts, rules };
    this.worker.postMessage(job);
  }

  /** File k redacted, by the worker or (when it failed) here. */
  async text(k: number): Promise<Redacted> {
    try {
      return await this.results[k];
    } catch {
      return redactKeepingLines(this.texts[k], this.rules);
    }
  }

  close(): void {
    this.worker?.terminate();
    this.worker = undefined;
  }

  private fail(): void {
    this.close();
    for (const entry of this.settle) entry.reject(new Error("redaction worker stopped"));
  }
}
