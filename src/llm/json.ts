/**
 * Finding the JSON in a model's reply without ever evaluating it. Models wrap JSON in code fences, add
 * a sentence before or after, or stop mid-list when they hit the token limit; each candidate below is
 * tried in turn by the caller's schema.
 */
import { z } from "zod";
import { LlmOutputError } from "./errors.ts";

const CLOSER: Record<string, string> = { "{": "}", "[": "]" };

/** Candidate values in the reply, most likely first; lazy, so the caller stops at the first that fits. */
export function* jsonCandidates(reply: string): Generator<unknown> {
  const whole = tryParse(reply.trim());
  if (whole.ok) yield whole.value;
  for (const fence of reply.matchAll(/```[\w-]*[ \t]*\n?([\s\S]*?)```/g)) {
    const inner = tryParse(fence[1].trim());
    if (inner.ok) yield inner.value;
  }
  let repairedOnce = false;
  for (let start = 0; start < reply.length; start++) {
    if (!(reply[start] in CLOSER)) continue;
    const span = scan(reply, start);
    if (span.end >= 0) {
      const parsed = tryParse(reply.slice(start, span.end + 1));
      if (parsed.ok) yield parsed.value;
    } else if (span.end === TRUNCATED && !repairedOnce) {
      // The reply stops inside this value: keep its complete elements, as HippoRAG's
      // fix_broken_generated_json does for replies cut off by the token limit.
      repairedOnce = true;
      const repaired = repairTruncated(reply.slice(start));
      if (repaired !== undefined) yield repaired;
    }
  }
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === "") return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const TRUNCATED = -1;
const MISMATCHED = -2;

/** Index of the bracket closing the one at `start`, or why there is none. */
function scan(text: string, start: number): { end: number } {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c in CLOSER) stack.push(CLOSER[c]);
    else if (c === "}" || c === "]") {
      if (stack.pop() !== c) return { end: MISMATCHED };
      if (stack.length === 0) return { end: i };
    }
  }
  return { end: TRUNCATED };
}

/**
 * Cuts a value that stops mid-way back to its last complete element and closes what is still open:
 * `{"triples": [["a","b","c"], ["d","e` becomes `{"triples": [["a","b","c"]]}`.
 */
export function repairTruncated(fragment: string): unknown {
  const stack: string[] = [];
  let inString = false;
  let safe: { at: number; closers: string } | undefined;
  for (let i = 0; i < fragment.length; i++) {
    const c = fragment[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c in CLOSER) stack.push(CLOSER[c]);
    else if (c === "}" || c === "]") {
      if (stack.pop() !== c) return undefined;
      if (stack.length > 0) safe = { at: i + 1, closers: stack.toReversed().join("") };
    } else if (c === "," && stack.length > 0) safe = { at: i, closers: stack.toReversed().join("") };
  }
  if (!safe) return undefined;
  const parsed = tryParse(fragment.slice(0, safe.at) + safe.closers);
  return parsed.ok ? parsed.value : undefined;
}

/** The first JSON value in the reply that fits the schema; LlmOutputError when none does. */
export function parseModelJson<T>(reply: string, schema: z.ZodType<T>, what: string): T {
  let firstIssue: z.ZodError | undefined;
  for (const candidate of jsonCandidates(reply)) {
    const parsed = schema.safeParse(candidate);
    if (parsed.success) return parsed.data;
    firstIssue ??= parsed.error;
  }
  const excerpt = reply.slice(0, 300);
  const why = firstIssue
    ? `JSON of the wrong shape (${z.prettifyError(firstIssue).replaceAll("\n", " ")})`
    : "no JSON";
  throw new LlmOutputError(`the model's ${what} reply holds ${why}: ${JSON.stringify(excerpt)}`, excerpt);
}
