/**
 * Memory checked against the project: a remembered file that was deleted, a decision a later session
 * replaced. Through the real indexer (no LLM), summary.md, the prelude hook and `rag_search` over the
 * SDK's MCP client, all from the compiled binary.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { compiledBinary, projectDataIn, runBinary, serveHttp, tempDir } from "./support/helpers.ts";

const home = tempDir("triforge-checks-");
const dataHome = join(home, ".claude", "triforge");

const dataDir = (root: string) => projectDataIn(dataHome, root);

/** A project whose memory has an old decision (Redis) replaced by a later one (signed cookies). */
async function rememberedProject(): Promise<string> {
  const root = join(home, `project-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(join(root, ".triforge"), { recursive: true });
  writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify({ llm: "none" }));
  mkdirSync(join(root, "src", "auth"), { recursive: true });
  writeFileSync(join(root, "src", "auth", "session.ts"), "export const session = 1;\n");
  const turns: [string, string, string, string][] = [
    ["2025-02-03", "first", "user", "How should we store sessions for the API?"],
    [
      "2025-02-03",
      "first",
      "assistant",
      "We'll store sessions in Redis, keyed by the session id, in `src/auth/session.ts`. The old cookie parser in `src/auth/legacy.ts` goes.",
    ],
    ["2025-02-10", "second", "user", "Let's go with signed cookies (HMAC) for sessions instead, no Redis."],
    [
      "2025-02-10",
      "second",
      "assistant",
      "Agreed: sessions will be signed cookies (HMAC-SHA256) in `src/auth/session.ts`, no Redis.",
    ],
  ];
  const lines = turns.map(([day, session, role, text], i) =>
    JSON.stringify({ ts: `${day}T10:0${i}:00.000Z`, session_id: session, role, text, uuid: `c${i}` }),
  );
  const data = dataDir(root);
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, "chats.jsonl"), `${lines.join("\n")}\n`);
  const indexed = await runBinary(["index", `--project=${root}`], { home });
  expect(indexed.code).toBe(0);
  return root;
}

describe("memory checked against the project (compiled binary)", () => {
  test("summary.md keeps both decisions; the prelude shows only the new one and marks the deleted file gone", async () => {
    const root = await rememberedProject();
    const summary = readFileSync(join(dataDir(root), "summary.md"), "utf8");
    expect(summary).toContain("store sessions in Redis");
    expect(summary).toContain("signed cookies (HMAC-SHA256)");
    const { code, stdout } = await runBinary(["prelude", `--project=${root}`], { home });
    expect(code).toBe(0);
    const context = JSON.parse(stdout).hookSpecificOutput.additionalContext as string;
    expect(context).toContain("signed cookies (HMAC-SHA256)");
    expect(context).not.toContain("store sessions in Redis");
    expect(context).toContain("replaced by later ones are left out");
    expect(context).toContain("src/auth/legacy.ts [gone]");
    expect(context).toContain("src/auth/session.ts` [changed since, today]");
  });

  test("rag_search returns the old decision marked as replaced, with the date and the new words", async () => {
    const root = await rememberedProject();
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
      const result = await client.callTool(
        { name: "rag_search", arguments: { query: "store sessions in Redis", top_k: 5 } },
        CallToolResultSchema,
      );
      const hits = (result.structuredContent as { hits: { text: string; check?: string }[] }).hits;
      const old = hits.find((h) => h.text.includes("store sessions in Redis"));
      expect(old).toBeDefined();
      expect(old?.check).toContain('replaced on 2025-02-10 by: "Sessions will be signed cookies');
      expect(old?.check).toContain("src/auth/legacy.ts gone");
      const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
      expect(text).toContain("[checked against the project now: a decision here was replaced on 2025-02-10");
      const current = hits.find(
        (h) => h.text.includes("signed cookies (HMAC-SHA256)") && !h.text.includes("Redis, keyed"),
      );
      expect(current?.check ?? "").not.toContain("replaced");
    } finally {
      await client.close();
    }
  });

  test("POST /v1/memory/query of `serve --http` marks the old decision and the gone file as rag_search does", async () => {
    const root = await rememberedProject();
    const { proc, url } = await serveHttp(["--workspace", root], { cwd: root, home });
    try {
      const response = await fetch(`${url}/v1/memory/query`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "store sessions in Redis", top_k: 5 }),
      });
      expect(response.status).toBe(200);
      const { hits } = (await response.json()) as { hits: { text: string; check?: string }[] };
      const old = hits.find((h) => h.text.includes("store sessions in Redis"));
      expect(old?.check).toContain('replaced on 2025-02-10 by: "Sessions will be signed cookies');
      expect(old?.check).toContain("src/auth/legacy.ts gone");
      const current = hits.find(
        (h) => h.text.includes("signed cookies (HMAC-SHA256)") && !h.text.includes("Redis, keyed"),
      );
      expect(current?.check ?? "").not.toContain("replaced");
    } finally {
      proc.kill("SIGKILL");
    }
  });

  test("a name the excerpt places in a file that no longer holds it is said; one still there is not", async () => {
    const { checkHits } = await import("../src/memory/hit-checks.ts");
    const root = join(home, "symbols");
    mkdirSync(join(root, "src"), { recursive: true });
    writeFileSync(join(root, "src", "settings.ts"), "export function loadSettings() { return {}; }\n");
    const ts = new Date().toISOString();
    const [renamed, kept, twoFiles] = await checkHits(root, [
      { ts, text: "Renamed it: `loadConfig` is now `loadSettings` in src/settings.ts." },
      { ts, text: "The entry point is `loadSettings` in src/settings.ts." },
      { ts, text: "Moved `parseUser` from src/settings.ts to src/user.ts." },
    ]);
    expect(renamed).toContain("`loadConfig` is no longer in src/settings.ts");
    expect(renamed).not.toContain("`loadSettings` is no longer");
    expect(kept).toBeUndefined();
    expect(twoFiles).toBe("[checked against the project now: src/user.ts gone]");
  });

  test("a long-lived process that checked hits once sees a summary.md rewritten since", async () => {
    const { checkHits } = await import("../src/memory/hit-checks.ts");
    const { summaryPath } = await import("../src/home/paths.ts");
    const root = join(home, "rewritten");
    mkdirSync(root, { recursive: true });
    const previous = process.env.TRIFORGE_HOME;
    process.env.TRIFORGE_HOME = join(home, "rewritten-data");
    try {
      const path = summaryPath(root);
      mkdirSync(join(path, ".."), { recursive: true });
      const entry = (day: string, session: string, decided: string) =>
        `## 2025-03-${day} · session ${session}\nDecided:\n- ${decided}\n`;
      const old = "We'll keep the job queue in Redis for the billing retries.";
      const hit = [{ ts: "2025-03-01T10:00:00.000Z", text: old }];
      writeFileSync(path, `# Memory\n\n${entry("01", "a", old)}`);
      expect((await checkHits(root, hit))[0]).toBeUndefined();
      writeFileSync(
        path,
        `# Memory\n\n${entry("01", "a", old)}\n${entry("09", "b", "The job queue for the billing retries moves to Postgres, no Redis.")}`,
      );
      expect((await checkHits(root, hit))[0]).toContain("a decision here was replaced on 2025-03-09");
    } finally {
      process.env.TRIFORGE_HOME = previous;
    }
  });
});
