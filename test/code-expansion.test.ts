import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { scoreBm25 } from "../src/code/bm25.ts";
import { openIndex } from "../src/code/code-search.ts";
import { feedbackTerms } from "../src/code/rank/expansion.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
import { searchIndex } from "../src/code/search.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { queryTokens } from "../src/code/tokens.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

const QUERY = "when do we retry a request";

/** Four files where retrying goes with backoff and attempts, one that has those words but not "retry". */
const FILES: Record<string, string> = {
  "src/client.ts": "export function retryRequest(req) {\n  let attempt = 0;\n  backoffDelay(attempt);\n}\n",
  "src/upload.ts":
    "export function retryUpload(file) {\n  const attempt = nextAttempt();\n  return backoffDelay(attempt);\n}\n",
  "src/fetcher.ts":
    "export function retryFetch(url) {\n  for (let attempt = 0; attempt < 3; attempt++) backoffDelay(attempt);\n}\n",
  "src/poller.ts": "export function retryPoll() {\n  const attempt = 1;\n  backoffDelay(attempt);\n}\n",
  "src/scheduler.ts":
    "export function planNext(attempt) {\n  return backoffDelay(attempt) + jitterMs();\n}\n",
  "src/colors.ts":
    "export const palette = ['red', 'green', 'blue'];\nexport function shade(color) { return color; }\n",
  "src/strings.ts": "export function padLeft(text, width) { return text.padStart(width); }\n",
  "src/math.ts": "export function clamp(value, low, high) { return Math.min(high, Math.max(low, value)); }\n",
};

let index: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
  index = await openIndex(codeRepository(FILES), { refresh: "now" });
});
afterEach(() => setTuning({}));

const fileOf = (chunk: number) => index.files[index.chunkFile[chunk]].path;
const ranked = (query: string) => {
  const { scores, matched } = scoreBm25(index.bm25, queryTokens(query));
  return [...matched].sort((a, b) => scores[b] - scores[a] || a - b);
};

describe("pseudo-relevance feedback", () => {
  test("takes the rare terms several top chunks share, never the query's own nor a file's path words", () => {
    const added = feedbackTerms(index, queryTokens(QUERY), ranked(QUERY));
    expect(added).toContain("backoffdelay");
    expect(added).toContain("attempt");
    expect(added).not.toContain("retry");
    // Each feedback file's name is in its own postings only: it is never shared by three of them.
    for (const stem of ["client", "upload", "fetcher", "poller"]) expect(added).not.toContain(stem);
  });

  test("a chunk that shares no word with the query is found through the feedback terms, and only with them", () => {
    const files = () =>
      searchIndex(index, QUERY, undefined, { topK: 10, content: "code" }).map(({ chunk }) => fileOf(chunk));
    expect(files()).toContain("src/scheduler.ts");
    expect(
      files()
        .slice(0, 4)
        .every((path) => path !== "src/scheduler.ts"),
    ).toBe(true);
    setTuning({ feedbackWeight: 0 });
    expect(files()).not.toContain("src/scheduler.ts");
  });

  test("a bare identifier query is not expanded", () => {
    const files = searchIndex(index, "retryRequest", undefined, { topK: 10, content: "code" }).map(
      ({ chunk }) => fileOf(chunk),
    );
    expect(files).not.toContain("src/scheduler.ts");
  });
});
