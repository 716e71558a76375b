/**
 * End to end with the real Claude Code CLI (npm `@anthropic-ai/claude-code`) at two versions, run
 * headless (`claude -p … --output-format json`) in an isolated HOME against a scripted fake of the
 * Anthropic Messages API (streaming SSE) on 127.0.0.1. Nothing here talks to the internet except npm's
 * registry, once per version, to install Claude Code into a cache folder outside the repository
 * (TRIFORGE_E2E_DIR).
 *
 * 2.1.197 runs the Stop hook before it has written the transcript (a fast hook finds no file), so its
 * session 1 is captured from the Stop payload and the SessionEnd catch-up; 2.1.332 writes the
 * transcript first. Both must remember the decision in session 2.
 *
 * Session 0: `triforge install`, then `/rag` (the slash command runs `triforge activate`).
 * Session 1: the user states a decision; the hooks capture it, SessionEnd indexes it.
 * Session 2: the prelude reaches the model; the model calls rag_search (gets the decision) and
 * code_search (gets the project's code); `claude mcp list` shows triforge connected;
 * `triforge uninstall` takes everything back out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
import { compiledBinary, runBinary, spawnCollect, tempDir } from "../support/helpers.ts";

/**
 * The versions tried: 2.1.197 (Stop before the transcript is written) and the newest on the registry
 * when this was written (also the version the transcript fixtures in ../shared were generated with).
 * TRIFORGE_E2E_CLAUDE_VERSIONS (comma-separated) overrides.
 */
const VERSIONS = (process.env.TRIFORGE_E2E_CLAUDE_VERSIONS ?? "2.1.197,2.1.332")
  .split(",")
  .map((v) => v.trim());

const installed = await Promise.all(
  VERSIONS.map(async (version) => ({ version, ...(await installClaudeCode(version)) })),
);
for (const { version, skip } of installed)
  if (skip)
    console.warn(
      `\n${"!".repeat(78)}\n!! SKIPPING test/e2e/claude-code.test.ts for ${version}: ${skip}\n${"!".repeat(78)}\n`,
    );

// ---- the user's world -------------------------------------------------------------------------------

const DECISION =
  "We decided: production deploys use blue-green with a 10-minute soak before switching traffic.";
const USER_RULES = "# My global rules\n\nAnswer briefly.\n";

for (const claude of installed)
  describe.skipIf(!claude.binary)(`Claude Code ${claude.version} end to end`, () => {
    const root = tempDir("triforge-e2e-");
    const home = join(root, "home");
    const project = join(root, "shop api");
    let fake: FakeAnthropic;
    let triforge: string;
    const sessions: { name: string; stdout: string; stderr: string; code: number }[] = [];

    beforeAll(async () => {
      triforge = await compiledBinary();
      fake = startFakeAnthropic();
      mkdirSync(join(home, ".claude"), { recursive: true });
      writeFileSync(join(home, ".claude", "CLAUDE.md"), USER_RULES);
      mkdirSync(join(project, "src"), { recursive: true });
      writeFileSync(
        join(project, "src", "deploy.ts"),
        [
          "/** Blue-green rollout: start the idle colour, soak, then move traffic over. */",
          "export async function rolloutBlueGreen(cluster: Cluster, release: string): Promise<void> {",
          "  const idle = cluster.active === 'blue' ? 'green' : 'blue';",
          "  await cluster.deploy(idle, release);",
          "  await cluster.soak(idle, { minutes: 10 });",
          "  await cluster.switchTraffic(idle);",
          "}",
          "",
          "interface Cluster {",
          "  active: 'blue' | 'green';",
          "  deploy(colour: string, release: string): Promise<void>;",
          "  soak(colour: string, options: { minutes: number }): Promise<void>;",
          "  switchTraffic(colour: string): Promise<void>;",
          "}",
          "",
        ].join("\n"),
      );
      writeFileSync(
        join(project, "src", "cart.ts"),
        "export function cartTotal(prices: number[]): number {\n  return prices.reduce((a, b) => a + b, 0);\n}\n",
      );
    });

    afterAll(async () => {
      await fake?.stop();
      // On failure, what Claude Code printed is the first thing to read.
      for (const s of sessions)
        if (s.code !== 0) console.error(`[${s.name}] exit ${s.code}\n${s.stdout}\n${s.stderr}`);
    });

    async function runClaude(name: string, args: string[]) {
      const { stdout, stderr, code } = await spawnCollect([claude.binary!, ...args], {
        cwd: project,
        env: claudeEnv({ home, apiUrl: fake.url }),
      });
      sessions.push({ name, stdout, stderr, code });
      return { stdout, stderr, code };
    }

    const triforgeRun = (args: string[]) =>
      runBinary(args, { home, cwd: project, env: { TRIFORGE_BINARY: undefined, TRIFORGE_LLM: "none" } });

    test("session 0: triforge install, then /rag in Claude Code runs triforge activate", async () => {
      const install = await triforgeRun(["install", "--no-insforge"]);
      expect(install.code).toBe(0);
      expect(JSON.parse(readFileSync(join(home, ".claude.json"), "utf8")).mcpServers.triforge).toEqual({
        type: "stdio",
        command: triforge,
        args: ["serve"],
      });

      fake.enqueue(textReply("Memory is on for this project.", { when: startsTurn }));
      const rag = await runClaude("/rag", ["-p", "/rag", "--output-format", "json"]);
      expect(rag.code).toBe(0);
      // The command's `!` line ran before the prompt was sent: its output is in the request.
      const request = JSON.stringify(fake.messageRequests().find(isConversation)?.body.messages);
      expect(request).toContain("Memory activated in");
      // Our global instructions reach the model too.
      expect(request).toContain("## triforge: long-term memory and code search");
      expect(existsSync(join(project, ".triforge", "config.json"))).toBe(true);
      const hooks = JSON.parse(readFileSync(join(project, ".claude", "settings.local.json"), "utf8")).hooks;
      expect(Object.keys(hooks).sort()).toEqual(["SessionEnd", "SessionStart", "Stop"]);
    });

    test("session 1: the decision is captured by the Stop hook and indexed after SessionEnd", async () => {
      fake.enqueue(textReply("Noted: blue-green deploys with a 10-minute soak.", { when: startsTurn }));
      const session = await runClaude("session 1", ["-p", DECISION, "--output-format", "json"]);
      expect(session.code).toBe(0);
      // toMatchObject shows Claude Code's whole report when it differs (e.g. a hook that failed).
      expect(JSON.parse(session.stdout)).toMatchObject({
        is_error: false,
        result: "Noted: blue-green deploys with a 10-minute soak.",
      });

      const data = join(home, ".claude", "triforge", projectKey(project));
      // Session 0's reply may be there too: a CLI that reloads its settings runs the Stop hook /rag added.
      const { session_id } = JSON.parse(session.stdout);
      const chats = readFileSync(join(data, "chats.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .filter((record) => record.session_id === session_id);
      // Each once. 2.1.197's reply comes from the Stop payload before its prompt comes from the
      // transcript at SessionEnd, so the order is not asserted.
      expect(chats.map((c) => [c.role, c.text]).sort()).toEqual([
        ["assistant", "Noted: blue-green deploys with a 10-minute soak."],
        ["user", DECISION],
      ]);
      expect(existsSync(join(data, "errors.log")) ? readFileSync(join(data, "errors.log"), "utf8") : "").toBe(
        "",
      );

      // The SessionEnd hook started a detached indexer; wait for it as a user would (status).
      // Every status call must answer, even while the indexer writes; a failure is kept with its stderr.
      let status: { chunks: number; lastIndexed: string | null; indexing: boolean } | undefined;
      const failedStatus: string[] = [];
      for (const started = Date.now(); Date.now() - started < 45_000; await Bun.sleep(250)) {
        const run = await triforgeRun(["status", "--json"]);
        if (run.code !== 0) {
          failedStatus.push(`exit ${run.code}: ${run.stderr}`);
          continue;
        }
        status = JSON.parse(run.stdout);
        if (status?.lastIndexed && !status.indexing) break;
      }
      expect(failedStatus).toEqual([]);
      expect(status?.lastIndexed).not.toBeNull();
      expect(status?.chunks).toBeGreaterThan(0);
      expect(readFileSync(join(data, "summary.md"), "utf8")).toContain("blue-green");
    }, 60_000);

    test("session 2: the prelude reaches the model; rag_search returns the decision; code_search returns the code", async () => {
      const before = fake.messageRequests().length;
      fake.enqueue(
        toolUseReply(
          "mcp__triforge__rag_search",
          { query: "how do we deploy to production" },
          { id: "toolu_e2e_rag", when: startsTurn },
        ),
        toolUseReply(
          "mcp__triforge__code_search",
          { query: "blue-green rollout soak" },
          { id: "toolu_e2e_code", when: answers("toolu_e2e_rag") },
        ),
        textReply("We deploy blue-green with a 10-minute soak; see rolloutBlueGreen in src/deploy.ts.", {
          when: answers("toolu_e2e_code"),
        }),
      );
      const session = await runClaude("session 2", [
        "-p",
        "How do we deploy to production here?",
        "--output-format",
        "json",
        "--allowedTools",
        "mcp__triforge__rag_search,mcp__triforge__code_search",
      ]);
      expect(session.code).toBe(0);
      expect(JSON.parse(session.stdout)).toMatchObject({
        is_error: false,
        result: expect.stringContaining("rolloutBlueGreen"),
      });
      expect(fake.pending()).toBe(0);

      const requests = fake.messageRequests().slice(before).filter(isConversation);
      // 1. The SessionStart prelude: last session's summary, wrapped as recalled data.
      const first = JSON.stringify(requests[0].body.messages);
      expect(first).toContain("<triforge-memory");
      expect(first).toContain("blue-green");
      // Claude Code announced our tools to the model (2.1.332 as deferred tools in the messages,
      // loaded on first use; 2.1.197 in the request's tool list).
      const announced = JSON.stringify(requests[0].body);
      expect(announced).toContain("mcp__triforge__rag_search");
      expect(announced).toContain("mcp__triforge__code_search");
      // 2. rag_search's result, as the model receives it, holds the decision.
      const rag = toolResult(requests[1], "toolu_e2e_rag");
      expect(rag?.is_error ?? false).toBe(false);
      expect(resultText(rag)).toContain("10-minute soak");
      // 3. code_search's result holds the project's code, with its file.
      const code = toolResult(requests[2], "toolu_e2e_code");
      expect(code?.is_error ?? false).toBe(false);
      expect(resultText(code)).toContain("src/deploy.ts");
      expect(resultText(code)).toContain("rolloutBlueGreen");
    }, 60_000);

    test("claude mcp list shows triforge connected", async () => {
      const list = await runClaude("mcp list", ["mcp", "list"]);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/triforge: .*serve - .*Connected/);
    }, 60_000);

    test("triforge uninstall takes out exactly what install put in", async () => {
      const result = await triforgeRun(["uninstall"]);
      expect(result.code).toBe(0);
      // The project's hooks are the project's files: uninstall names them rather than touching them.
      expect(result.stdout).toContain(
        `Memory is still active in 1 project(s); their hooks call this binary:\n  triforge deactivate --project '${project}'`,
      );
      // Claude Code rewrote ~/.claude.json while it ran: its own keys stay, ours go.
      const config = JSON.parse(readFileSync(join(home, ".claude.json"), "utf8"));
      expect(config.mcpServers?.triforge).toBeUndefined();
      expect(Object.keys(config).length).toBeGreaterThan(0);
      expect(readFileSync(join(home, ".claude", "CLAUDE.md"), "utf8")).toBe(USER_RULES);
      expect(existsSync(join(home, ".claude", "commands", "rag.md"))).toBe(false);
    });
  });
