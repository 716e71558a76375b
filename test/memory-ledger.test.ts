/**
 * The hook and tool ledger (src/home/ledger.ts): what each run leaves, what `status` and `doctor` make
 * of it. The pure parts on crafted records; then the compiled binary's prelude, capture, index, status
 * and doctor on a real project.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  type LedgerRecord,
  ledgerLines,
  ledgerProblems,
  ledgerTotals,
  sessionLines,
} from "../src/home/ledger.ts";
import { compiledBinary, projectDataIn, runBinary, tempDir } from "./support/helpers.ts";

const at = (minute: number) => `2026-02-01T10:${String(minute).padStart(2, "0")}:00.000Z`;

describe("the ledger (pure)", () => {
  const records: LedgerRecord[] = [
    { ts: at(0), event: "prelude", outcome: "ok", ms: 6, tokens: 612 },
    { ts: at(1), event: "capture", outcome: "ok", session: "aaaa1111", turns: 6 },
    { ts: at(2), event: "rag_search", outcome: "ok", tokens: 300 },
    { ts: at(3), event: "code_search", outcome: "ok", tokens: 200, fileTokens: 5000 },
    { ts: at(4), event: "capture", outcome: "ok", session: "aaaa1111", turns: 8 },
    { ts: at(5), event: "index", outcome: "ok", ms: 420, chunks: 3, llm: null, llmFailures: 0 },
    { ts: at(9), event: "index", outcome: "ok", ms: 1500, chunks: 1, llm: null, llmFailures: 0 },
    { ts: at(10), event: "prelude", outcome: "started", run: "r2" },
    { ts: at(11), event: "capture", outcome: "failed", session: "bbbb2222", error: "disk full" },
    { ts: at(12), event: "index", outcome: "ok", ms: 900, chunks: 4, llm: "anthropic", llmFailures: 4 },
  ];

  test("the last sessions at a glance: a prelude belongs to the session after it, an index to the one before", () => {
    expect(sessionLines(records)).toEqual([
      "2026-02-01 10:00 aaaa1111: prelude 612 tokens · capture 14 turns · index ok in 1.5 s · rag_search 1× 300 tokens",
      "2026-02-01 10:10 bbbb2222: prelude started · capture 0 turns (1 failed) · index ok in 900 ms",
    ]);
  });

  test("running totals: tokens injected, and what code_search saved against the whole files", () => {
    expect(ledgerTotals(records)).toEqual({
      preludeTokens: 612,
      preludes: 1,
      ragTokens: 300,
      ragSearches: 1,
      codeTokens: 200,
      codeFileTokens: 5000,
      codeSearches: 1,
    });
    expect(ledgerLines(records)[1]).toBe(
      "code_search: 200 tokens of snippets in 1 call(s) instead of 5000 tokens of whole files (4800 saved)",
    );
  });

  test("problems: a run that never finished, a failed one, an index whose every LLM call failed", () => {
    expect(ledgerProblems(records)).toEqual([
      "prelude at 2026-02-01 10:10 never finished (killed or timed out)",
      "capture at 2026-02-01 10:11 failed: disk full",
      "index at 2026-02-01 10:12: every LLM call to anthropic failed (4); the graph was built by the local extractor",
    ]);
  });
});

describe("the ledger of a real project (compiled binary)", () => {
  const home = tempDir("triforge-ledger-");
  const dataHome = join(home, ".claude", "triforge");

  const dataDir = (root: string) => projectDataIn(dataHome, root);

  test("prelude, capture and index each leave a record; status shows the session and the ledger; doctor a killed run", async () => {
    const root = join(home, "project");
    mkdirSync(join(root, ".triforge"), { recursive: true });
    writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify({ llm: "none" }));
    const data = dataDir(root);
    mkdirSync(data, { recursive: true });
    writeFileSync(
      join(data, "summary.md"),
      "## 2026-01-20 · session old\nDiscussed: the parser.\nDecided:\n- We'll use a CSR matrix for the graph.\n",
    );

    expect((await runBinary(["prelude", `--project=${root}`], { home })).code).toBe(0);
    const pending = readdirSync(join(data, "hooks.pending"));
    expect(pending).toHaveLength(1);
    const prelude = JSON.parse(readFileSync(join(data, "hooks.pending", pending[0]), "utf8"));
    expect(prelude).toMatchObject({ event: "prelude", outcome: "ok" });
    expect(prelude.tokens).toBeGreaterThan(100);

    const transcript = join(home, "t.jsonl");
    const line = (type: string, uuid: string, text: string) =>
      `${JSON.stringify({
        type,
        uuid,
        isSidechain: false,
        sessionId: "sess-ledger",
        timestamp: "2026-02-01T10:00:00.000Z",
        message:
          type === "user"
            ? { role: "user", content: text }
            : { id: `m-${uuid}`, role: "assistant", content: [{ type: "text", text }] },
      })}\n`;
    writeFileSync(
      transcript,
      line("user", "u1", "Switch the cache to an LRU of 500 entries.") +
        line("assistant", "a1", "Done: the cache in src/cache.ts is now an LRU of 500 entries."),
    );
    const hook = JSON.stringify({
      session_id: "sess-ledger",
      transcript_path: transcript,
      cwd: root,
      hook_event_name: "Stop",
      stop_hook_active: false,
    });
    expect((await runBinary(["capture", `--project=${root}`], { home, stdin: hook })).code).toBe(0);
    // The capture folded the prelude's pending record into hooks.jsonl.
    expect(existsSync(join(data, "hooks.pending", pending[0]))).toBe(false);
    expect((await runBinary(["index", `--project=${root}`], { home })).code).toBe(0);

    const lines = readFileSync(join(data, "hooks.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((r) => `${r.event}:${r.outcome}`)).toEqual([
      "prelude:ok",
      "capture:started",
      "capture:ok",
      "index:ok",
    ]);
    expect(lines[2].turns).toBe(2);

    const status = await runBinary(["status", `--project=${root}`], { home });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      /Sessions {3}\S.* sess-led: prelude \d+ tokens · capture 2 turns · index ok in \d/,
    );
    expect(status.stdout).toMatch(/Ledger {5}injected by preludes: \d+ tokens in 1 session\(s\)/);

    // A prelude killed at its timeout leaves its `started` record alone: doctor says so.
    mkdirSync(join(data, "hooks.pending"), { recursive: true });
    writeFileSync(
      join(data, "hooks.pending", "1-2-prelude.json"),
      JSON.stringify({
        ts: "2026-02-02T09:00:00.000Z",
        event: "prelude",
        outcome: "started",
        run: "1-2-prelude",
      }),
    );
    const doctor = await runBinary(["doctor", `--project=${root}`], { home });
    expect(doctor.stdout).toContain(
      "FAIL  hook runs: prelude at 2026-02-02 09:00 never finished (killed or timed out)",
    );
  }, 60_000);

  test("rag_search and code_search over MCP leave their tokens; code_search the whole files' too", async () => {
    const root = join(home, "searched");
    mkdirSync(join(root, ".triforge"), { recursive: true });
    writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify({ llm: "none" }));
    mkdirSync(join(root, "src"), { recursive: true });
    const body = Array.from(
      { length: 200 },
      (_, i) => `export function helper${i}(x: number) { return x + ${i}; }`,
    );
    writeFileSync(
      join(root, "src", "retry.ts"),
      `export function scheduleRetry(delay: number) { return delay * 2; }\n${body.join("\n")}\n`,
    );
    const data = dataDir(root);
    mkdirSync(data, { recursive: true });
    const client = new Client({ name: "triforge-test", version: "0" }, { capabilities: {} });
    await client.connect(
      new StdioClientTransport({
        command: await compiledBinary(),
        args: ["serve"],
        cwd: root,
        env: { HOME: home, USERPROFILE: home, TRIFORGE_HOME: dataHome, PATH: process.env.PATH ?? "" },
        stderr: "pipe",
      }),
    );
    try {
      await client.callTool(
        { name: "code_search", arguments: { query: "scheduleRetry", top_k: 1 } },
        CallToolResultSchema,
      );
      await client.callTool({ name: "rag_search", arguments: { query: "anything" } }, CallToolResultSchema);
    } finally {
      await client.close();
    }
    const lines = readFileSync(join(data, "hooks.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const code = lines.find((r) => r.event === "code_search");
    expect(code.outcome).toBe("ok");
    expect(code.fileTokens).toBe(Math.ceil(readFileSync(join(root, "src", "retry.ts")).length / 4));
    expect(code.tokens).toBeGreaterThan(0);
    expect(code.tokens).toBeLessThan(code.fileTokens);
    expect(lines.find((r) => r.event === "rag_search")?.tokens).toBeGreaterThan(0);
    // One call, one record: the server's warm-up search after initialize is nobody's.
    expect(lines.filter((r) => r.event === "rag_search").length).toBe(1);
    const status = await runBinary(["status", `--project=${root}`], { home });
    expect(status.stdout).toMatch(
      /code_search: \d+ tokens of snippets in 1 call\(s\) instead of \d+ tokens of whole files \(\d+ saved\)/,
    );
  }, 60_000);
});
