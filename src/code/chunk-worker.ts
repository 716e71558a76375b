/**
 * A parsing worker: claims files in order from the front of the shared list, ahead of the main
 * thread, and sends back each file's syntax break scores. See chunk-pool.ts. Given a redaction job
 * instead, redacts every file in order and sends each back (redact-ahead.ts).
 */
import { fileBreakScores, splitLines } from "./chunk.ts";
import { CLAIMED_BY_WORKER, type ParseJob, type ParseMessage, SENT_BY_WORKER } from "./chunk-pool.ts";
import { redactKeepingLines } from "./redact.ts";
import type { RedactJob, RedactMessage } from "./redact-ahead.ts";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<ParseJob | RedactJob>) => {
  if ("redact" in event.data) return redactAll(event.data);
  const { texts, grammars } = event.data;
  const claims = new Int32Array(event.data.claims);
  const cursor = texts.length;
  for (;;) {
    const k = Atomics.add(claims, cursor, 1);
    if (k >= texts.length) break;
    // The main thread took this one (it reached it first, or took it from the back).
    if (Atomics.compareExchange(claims, k, 0, CLAIMED_BY_WORKER) !== 0) continue;
    const scores = await fileBreakScores(texts[k], splitLines(texts[k]), grammars[k]);
    const message: ParseMessage = { file: k, scores };
    self.postMessage(message, [scores.buffer as ArrayBuffer]);
    Atomics.store(claims, k, SENT_BY_WORKER);
  }
  const done: ParseMessage = { done: true };
  self.postMessage(done);
};

/** Redacts the files in the order the main thread chunks them. */
function redactAll({ redact, rules }: RedactJob): void {
  for (let file = 0; file < redact.length; file++) {
    const message: RedactMessage = { file, ...redactKeepingLines(redact[file], rules) };
    self.postMessage(message);
  }
}
