/**
 * triforge as a Claude Code plugin, with the real CLI and no network: the repository is a local
 * marketplace (`.claude-plugin/marketplace.json` → `plugin/`). Added and installed with `claude plugin`,
 * the plugin brings the hooks and the MCP server with no per-project settings file: `/triforge:rag`
 * turns memory on, session 1's decision is captured by the plugin's Stop hook and indexed at
 * SessionEnd, session 2 gets it in the prelude and from rag_search, and `claude plugin uninstall` takes
 * it all out again. The plugin finds the binary as a user's machine has it: `triforge` on PATH.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectKey } from "../../src/home/paths.ts";
import {
  answers,
  claudeEnv,
  installClaudeCode,
  isConversation,
  resultText,
  startsTurn,
  toolResult,
} from "../support/claude-cli.ts";
import {
  type FakeAnthropic,
  startFakeAnthropic,
  textReply,
  toolUseReply,
} from "../support/fakes/anthropic.ts";
import { compiledBinary, ROOT, runBinary, spawnCollect, tempDir } from "../support/helpers.ts";

const CLAUDE_CODE_VERSION = process.env.TRIFORGE_E2E_PLUGIN_CLAUDE_VERSION ?? "2.1.332";
const claude = await installClaudeCode(CLAUDE_CODE_VERSION);
if (claude.skip) console.warn(`\n!! SKIPPING test/e2e/plugin.test.ts: ${claude.skip}\n`);

const DECISION = "We decided: invoices are numbered per tenant, starting at 1000, never reused.";
const REPLY = "Noted: per-tenant invoice numbers from 1000, never reused.";

describe.skipIf(!claude.binary)(`the triforge plugin in Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  const root = tempDir("triforge-plugin-");
  const home = join(root, "home");
  const bin = join(root, "bin");
  const project = join(root, "billing");
  let fake: FakeAnthropic;
  const runs: { name: string; stdout: string; stderr: string; code: number }[] = [];

  beforeAll(async () => {
    fake = startFakeAnthropic();
    mkdirSync(home, { recursive: true });
    mkdirSync(join(project, "src"), { recursive: true });
    writeFileSync(
      join(project, "src", "invoice.ts"),
      "/** Per-tenant invoice numbers start at 1000 and are never reused. */\nexport function nextInvoiceNumber(last: number | undefined): number {\n  return last === undefined ? 1000 : last + 1;\n}\n",
    );
    // The installed binary, as install.sh leaves it: `triforge` on PATH.
    mkdirSync(bin, { recursive: true });
    symlinkSync(await compiledBinary(), join(bin, "triforge"));
  });

  afterAll(async () => {
    await fake?.stop();
    for (const r of runs)
      if (r.code !== 0) console.error(`[${r.name}] exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  });

  const env = () =>
    claudeEnv({ home, apiUrl: fake.url, path: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` });
  async function run(name: string, args: string[]) {
    const result = await spawnCollect([claude.binary!, ...args], { cwd: project, env: env() });
    runs.push({ name, ...result });
    return result;
  }
  const dataDir = () => join(home, ".claude", "triforge", projectKey(project));

  test("the repository is a marketplace: claude plugin validate passes, add and install enable it", async () => {
    expect((await run("validate", ["plugin", "validate", join(ROOT, "plugin")])).code).toBe(0);
    expect((await run("marketplace add", ["plugin", "marketplace", "add", ROOT])).code).toBe(0);
    expect((await run("install", ["plugin", "install", "triforge@triforge"])).code).toBe(0);
    const list = await run("list", ["plugin", "list"]);
    expect(list.stdout).toMatch(/triforge@triforge[\s\S]*?enabled/);
  }, 60_000);

  test("/triforge:rag turns memory on with no hooks file: the plugin has the hooks", async () => {
    fake.enqueue(textReply("Memory is on for this project.", { when: startsTurn }));
    const rag = await run("/triforge:rag", ["-p", "/triforge:rag", "--output-format", "json"]);
    expect(rag.code).toBe(0);
    const request = JSON.stringify(fake.messageRequests().find(isConversation)?.body.messages);
    expect(request).toContain("Memory activated in");
    expect(existsSync(join(project, ".triforge", "config.json"))).toBe(true);
    expect(existsSync(join(project, ".claude", "settings.local.json"))).toBe(false);
  }, 60_000);

  test("session 1: the plugin's Stop hook captures the decision and SessionEnd indexes it", async () => {
    fake.enqueue(textReply(REPLY, { when: startsTurn }));
    const session = await run("session 1", ["-p", DECISION, "--output-format", "json"]);
    expect(session.code).toBe(0);
    const chats = readFileSync(join(dataDir(), "chats.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    // The plugin's hooks were loaded when the /rag session started, so its reply after activation is
    // memory too; session 1 adds its own two turns.
    expect(chats.slice(-2).map((c) => [c.role, c.text])).toEqual([
      ["user", DECISION],
      ["assistant", REPLY],
    ]);
    expect(chats.filter((c) => c.text === DECISION)).toHaveLength(1);
    let status: { lastIndexed: string | null; indexing: boolean; chunks: number } | undefined;
    for (const started = Date.now(); Date.now() - started < 45_000; await Bun.sleep(250)) {
      const result = await runBinary(["status", "--json"], {
        home,
        cwd: project,
        env: { TRIFORGE_LLM: "none" },
      });
      if (result.code !== 0) continue;
      status = JSON.parse(result.stdout);
      if (status?.lastIndexed && !status.indexing) break;
    }
    expect(status?.chunks).toBeGreaterThan(0);
  }, 60_000);

  test("session 2: the prelude and the plugin's rag_search bring the decision back", async () => {
    const before = fake.messageRequests().length;
    // The plugin's tools are namespaced by Claude Code; take the name it announces.
    fake.enqueue(textReply("(tool names read)", { when: startsTurn }));
    await run("tool names", ["-p", "Which tools do you have?", "--output-format", "json"]);
    const announced = JSON.stringify(
      fake.messageRequests().slice(before).filter(isConversation)[0]?.body ?? {},
    );
    const ragTool = announced.match(/mcp__[A-Za-z0-9_-]*triforge[A-Za-z0-9_-]*__rag_search/)?.[0];
    expect(ragTool).toBeDefined();

    const start = fake.messageRequests().length;
    fake.enqueue(
      toolUseReply(
        ragTool!,
        { query: "how are invoices numbered" },
        { id: "toolu_e2e_prag", when: startsTurn },
      ),
      textReply("Per tenant, from 1000, never reused.", { when: answers("toolu_e2e_prag") }),
    );
    const session = await run("session 2", [
      "-p",
      "How do we number invoices?",
      "--output-format",
      "json",
      "--allowedTools",
      ragTool!,
    ]);
    expect(session.code).toBe(0);
    const requests = fake.messageRequests().slice(start).filter(isConversation);
    const first = JSON.stringify(requests[0].body.messages);
    expect(first).toContain("<triforge-memory");
    expect(first).toContain("1000");
    const rag = toolResult(requests[1], "toolu_e2e_prag");
    expect({ tool: ragTool, error: rag?.is_error ?? false, text: resultText(rag) }).toMatchObject({
      error: false,
      text: expect.stringContaining("never reused"),
    });
  }, 90_000);

  test("claude plugin uninstall takes the hooks and the server out", async () => {
    expect((await run("uninstall", ["plugin", "uninstall", "triforge@triforge"])).code).toBe(0);
    expect((await run("list after", ["plugin", "list"])).stdout).not.toContain("triforge@triforge");
    const before = fake.messageRequests().length;
    const lines = readFileSync(join(dataDir(), "chats.jsonl"), "utf8").trim().split("\n").length;
    fake.enqueue(textReply("Plain session.", { when: startsTurn }));
    expect((await run("after uninstall", ["-p", "Anything?", "--output-format", "json"])).code).toBe(0);
    const body = fake.messageRequests().slice(before).filter(isConversation)[0]?.body ?? {};
    expect(JSON.stringify(body.messages)).not.toContain("<triforge-memory");
    expect(JSON.stringify(body.messages)).not.toMatch(/mcp__\w*triforge\w*__rag_search/);
    expect(JSON.stringify(body.tools)).not.toMatch(/mcp__\w*triforge/);
    // No Stop hook any more: nothing new was captured.
    expect(readFileSync(join(dataDir(), "chats.jsonl"), "utf8").trim().split("\n").length).toBe(lines);
  }, 60_000);
});
