/**
 * `GET /v1/memory/prelude` is built as the SessionStart hook builds it: with the project's
 * `prelude.tokens` (memory/prelude-project.ts, the one function both call), not the default budget.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { summaryPath } from "../src/home/paths.ts";
import { type RunningServer, startHttpServer } from "../src/http/server.ts";
import { CHARS_PER_TOKEN, PRELUDE_TOKENS, preludeContext } from "../src/memory/prelude.ts";
import { preludeTokens, projectPreludeOptions } from "../src/memory/prelude-project.ts";
import { projectPresent } from "../src/memory/present.ts";
import { RagService } from "../src/rag/service.ts";
import { memoryHome } from "./support/memory-helpers.ts";

const { home, project } = memoryHome();
const app = project("app", { llm: "none", prelude: { tokens: 120 } });

/** Twelve sessions' entries of about 250 characters each: far more than 120 tokens hold. */
const summary = Array.from({ length: 12 }, (_, i) => {
  const day = String(i + 1).padStart(2, "0");
  return [
    `## 2025-03-${day} · session s${i}`,
    `- Decided: the exporter number ${i} writes its ledger rows in batches of ${100 + i} and retries twice.`,
    `- Decided: module ${i} keeps its cache for ${i + 2} minutes; the invalidation runs on every deploy.`,
    "",
  ].join("\n");
}).join("\n");

let server: RunningServer;
beforeAll(() => {
  mkdirSync(dirname(summaryPath(app)), { recursive: true });
  writeFileSync(summaryPath(app), summary);
  server = startHttpServer({
    host: "127.0.0.1",
    port: 0,
    token: "prelude-test-token-0123",
    rag: new RagService([app], { catalogPath: join(home, "catalog.db") }),
  });
});
afterAll(() => server?.stop());

const writeConfig = (config: object) =>
  writeFileSync(join(app, ".triforge", "config.json"), JSON.stringify(config));
const httpPrelude = async (): Promise<{ context: string | null }> =>
  (await fetch(`${server.url}/v1/memory/prelude`)).json() as Promise<{ context: string | null }>;

describe("the prelude's budget", () => {
  test("prelude.tokens is read from the config; anything but a positive integer falls back to the default", async () => {
    expect(await preludeTokens(app)).toBe(120);
    for (const tokens of [0, -5, 1.5, "300", null]) {
      writeConfig({ llm: "none", prelude: { tokens } });
      expect(await preludeTokens(app)).toBe(PRELUDE_TOKENS);
    }
    writeFileSync(join(app, ".triforge", "config.json"), "{ not json");
    expect(await preludeTokens(app)).toBe(PRELUDE_TOKENS);
    expect(await preludeTokens(join(home, "no-such-project"))).toBe(PRELUDE_TOKENS);
    writeConfig({ llm: "none", prelude: { tokens: 120 } });
    expect((await projectPreludeOptions(app)).budget).toBe(120 * CHARS_PER_TOKEN);
  });

  test("GET /v1/memory/prelude honours prelude.tokens, as the hook does", async () => {
    writeConfig({ llm: "none", prelude: { tokens: 120 } });
    const small = (await httpPrelude()).context;
    const present = await projectPresent(app);
    expect(small).toBe(preludeContext(summary, { budget: 120 * CHARS_PER_TOKEN, present, pinned: "" })!);
    writeConfig({ llm: "none" });
    const full = (await httpPrelude()).context;
    expect(full).toBe(
      preludeContext(summary, { budget: PRELUDE_TOKENS * CHARS_PER_TOKEN, present, pinned: "" })!,
    );
    // The budget decides how many sessions' entries are carried.
    const sessions = (text: string | null) => (text?.match(/· session s\d+/g) ?? []).length;
    expect(sessions(small)).toBeGreaterThan(0);
    expect(sessions(small)).toBeLessThan(sessions(full));
    writeConfig({ llm: "none", prelude: { tokens: 120 } });
  });
});
