/**
 * The real Codex CLI (npm `@openai/codex`) with the hooks `triforge install` writes: `codex exec`, then
 * `codex exec resume --last`, headless in an isolated HOME and CODEX_HOME, against a fake OpenAI
 * Responses API (streaming SSE) on 127.0.0.1. Nothing here talks to the internet except npm's registry,
 * once, to install Codex into a cache folder outside the repository (TRIFORGE_E2E_DIR).
 *
 * Done when each turn's words are in chats.jsonl once (the Stop hook), an import afterwards adds
 * nothing, `recall` finds the decision, and Codex reports both SessionStart hooks and Stop completed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectKey } from "../src/home/paths.ts";
import { runBinary, spawnCollect, tempDir } from "./support/helpers.ts";
import { installNpmCli, warnSkipped } from "./support/npm-cli.ts";

const VERSION = process.env.TRIFORGE_E2E_CODEX_VERSION ?? "0.171.0";

/** Answers every Responses API request with one assistant message, the next of `replies`. */
function startFakeResponses(replies: string[]) {
  let served = 0;
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method === "POST") await request.text();
      if (url.pathname.endsWith("/models")) return Response.json({ object: "list", data: [], models: [] });
      if (!url.pathname.endsWith("/responses")) return new Response("not found", { status: 404 });
      const text = replies[Math.min(served++, replies.length - 1)];
      const id = `resp_${served}`;
      const item = {
        id: `msg_${served}`,
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      };
      const usage = {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 15,
      };
      const response = { id, object: "response", created_at: 1, model: "gpt-fake" };
      const events: [string, object][] = [
        ["response.created", { response: { ...response, status: "in_progress", output: [] } }],
        [
          "response.output_item.added",
          { output_index: 0, item: { ...item, status: "in_progress", content: [] } },
        ],
        ["response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: text }],
        ["response.output_item.done", { output_index: 0, item }],
        ["response.completed", { response: { ...response, status: "completed", output: [item], usage } }],
      ];
      const body = events
        .map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
        .join("");
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
}

const installed = await installNpmCli("@openai/codex", VERSION, "codex");
if (installed.skip) warnSkipped("test/memory-import-codex-cli.test.ts", installed.skip);

const DECISION = "Decision: we keep money as integer cents and round only for display.";

describe.skipIf(!installed.binary)(`Codex CLI ${VERSION} with triforge's hooks`, () => {
  const root = tempDir("triforge-codex-cli-");
  const home = join(root, "home");
  const project = join(root, "shop");
  const codexHome = join(home, ".codex");
  let fake: ReturnType<typeof startFakeResponses>;
  const env = () => ({
    CODEX_HOME: codexHome,
    CLAUDE_CONFIG_DIR: "",
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    FAKE_KEY: "test",
  });
  const codex = (args: string[]) =>
    spawnCollect(
      [
        installed.binary as string,
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-hook-trust",
        ...args,
      ],
      {
        cwd: project,
        env: { ...process.env, ...env(), HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") },
      },
    );
  const chatLog = () => {
    const file = join(home, ".claude", "triforge", projectKey(project), "chats.jsonl");
    return existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { uuid: string; role: string; text: string })
      : [];
  };

  beforeAll(async () => {
    fake = startFakeResponses([DECISION, "Tax is rounded half to even, per line."]);
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(codexHome, "config.toml"),
      `model = "gpt-fake"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\nbase_url = "http://127.0.0.1:${fake.port}/v1"\nwire_api = "responses"\nenv_key = "FAKE_KEY"\n`,
    );
    const install = await runBinary(["install", "--agents", "codex", "--without", "insforge"], {
      home,
      env: env(),
    });
    expect(install.code).toBe(0);
    const activate = await runBinary(["activate", "--no-import"], { home, env: env(), cwd: project });
    expect(activate.code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    // The Stop hook may have started the background indexer: let it finish before the folder goes.
    const lock = join(home, ".claude", "triforge", projectKey(project), "index.lock");
    for (let i = 0; i < 200 && existsSync(lock); i++) await Bun.sleep(50);
    fake?.stop(true);
  });

  test("two turns, each stored once by the Stop hook; import adds nothing; recall finds the decision", async () => {
    const first = await codex(["How should we store money in the cart?"]);
    expect(first.code).toBe(0);
    const second = await codex(["resume", "--last", "And the tax line?"]);
    expect(second.code).toBe(0);
    for (const run of [first, second]) {
      expect(run.stderr).toContain("hook: Stop Completed");
      expect(run.stderr.match(/hook: SessionStart Completed/g)?.length).toBe(2);
      expect(run.stderr).not.toMatch(/hook: \w+ Failed/);
    }
    const stored = chatLog();
    expect(stored.map((r) => [r.role, r.text])).toEqual([
      ["user", "How should we store money in the cart?"],
      ["assistant", DECISION],
      ["user", "And the tax line?"],
      ["assistant", "Tax is rounded half to even, per line."],
    ]);
    const imported = await runBinary(["import"], { home, env: env(), cwd: project });
    expect(imported.stdout).toContain("0 new record(s), 4 already in memory");
    expect(chatLog()).toEqual(stored);
    const recalled = await runBinary(["recall", "how is money stored", "--json"], {
      home,
      env: env(),
      cwd: project,
    });
    const hits = JSON.parse(recalled.stdout).hits as { text: string }[];
    expect(hits.some((h) => h.text.includes("integer cents"))).toBe(true);
  }, 180_000);
});
