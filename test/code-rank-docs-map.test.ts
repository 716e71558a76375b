import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openIndex } from "../src/code/code-search.ts";
import { filesNamedByDocs } from "../src/code/rank/docs-map.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
import { searchIndex } from "../src/code/search.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { tempDir } from "./support/helpers.ts";

/**
 * A README says where throttling lives (`limiter.ts`); that file's code never says "throttled" (it
 * names a client once), and two other files say all the query's words, in passing. Only candidates move: limiter.ts is one. Short names (`app`) and names many files share (`index`) are prose.
 */
const FILES: Record<string, string> = {
  "README.md":
    "# Gateway\n\nRequests are throttled per client: the token bucket in limiter.ts refills every second.\nThe app and every index page are served by the gateway.\n",
  "src/limiter.ts":
    "export function takeToken(client, bucket) {\n  bucket.tokens -= 1;\n  return bucket.tokens >= 0;\n}\n",
  "src/proxy.ts":
    "// requests are never throttled per client here: a plain pass-through\nexport function forward(req) { return req; }\n",
  "src/logger.ts":
    "// log lines are not throttled per client: that would hide errors\nexport function log(line) { console.log(line); }\n",
  "src/app.ts": "export const app = {};\n",
  "src/a/index.ts": "export const a = 1;\n",
  "src/b/index.ts": "export const b = 2;\n",
  "src/c/index.ts": "export const c = 3;\n",
  "src/d/index.ts": "export const d = 4;\n",
};
const QUERY = "how are requests throttled per client";

let index: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
  const root = tempDir("triforge-repo-");
  mkdirSync(join(root, ".git"));
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  index = await openIndex(root, { refresh: "now" });
});
afterEach(() => setTuning({}));

const pathOf = (file: number) => index.files[file].path;

describe("README/docs mapping of concepts to files", () => {
  test("the prose matching a sentence names the file it mentions, not short or shared names", () => {
    const named = [...filesNamedByDocs(index, QUERY).keys()].map(pathOf);
    expect(named).toContain("src/limiter.ts");
    expect(named).not.toContain("src/app.ts");
    expect(named.some((path) => path.endsWith("index.ts"))).toBe(false);
  });

  test("a query no prose matches names nothing", () => {
    expect(filesNamedByDocs(index, "forward log line").size).toBe(0);
  });

  test("the file the README names moves up only with the mechanism's weight on", () => {
    const rankOf = () =>
      searchIndex(index, QUERY, undefined, { topK: 10, content: "code" })
        .map(({ chunk }) => pathOf(index.chunkFile[chunk]))
        .indexOf("src/limiter.ts");
    setTuning({ docsMapWeight: 0 });
    const without = rankOf();
    setTuning({ docsMapWeight: 1 });
    const withIt = rankOf();
    expect(withIt).toBe(0);
    expect(without === -1 || without > withIt).toBe(true);
  });
});
