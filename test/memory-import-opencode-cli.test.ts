/**
 * The real OpenCode CLI (npm `opencode-ai`) with the plugin `triforge install` writes: `opencode run`
 * in an isolated HOME against a fake OpenAI-compatible Chat Completions API (streaming SSE) on
 * 127.0.0.1. Nothing here talks to the internet except npm's registry, once, to install OpenCode into
 * a cache folder outside the repository (TRIFORGE_E2E_DIR); OpenCode's own fetch of its model catalogue
 * fails here and it goes on without it.
 *
 * Done when the plugin hands the session to triforge when the reply ends and its words are in
 * chats.jsonl once, an import afterwards adds nothing, and `recall` finds the decision.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectKey } from "../src/home/paths.ts";
import { runBinary, spawnCollect, tempDir } from "./support/helpers.ts";
import { installNpmCli, warnSkipped } from "./support/npm-cli.ts";

const VERSION = process.env.TRIFORGE_E2E_OPENCODE_VERSION ?? "1.18.33";
const DECISION = "Decision: the admin app lives in apps/admin of this repository.";

/** Answers every chat completion with DECISION, streamed the way OpenAI's API streams. */
function startFakeChat() {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = (request.method === "POST" ? await request.json() : {}) as { stream?: boolean };
      if (!url.pathname.endsWith("/chat/completions")) return new Response("not found", { status: 404 });
      const chunk = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "fake-model" };
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      if (!body.stream)
        return Response.json({
          ...chunk,
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: DECISION }, finish_reason: "stop" }],
          usage,
        });
      const chunks = [
        {
          ...chunk,
          choices: [{ index: 0, delta: { role: "assistant", content: DECISION }, finish_reason: null }],
        },
        { ...chunk, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage },
      ];
      const sse = `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
      return new Response(sse, { headers: { "content-type": "text/event-stream" } });
    },
  });
}

const installed = await installNpmCli("opencode-ai", VERSION, "opencode");
if (installed.skip) warnSkipped("test/memory-import-opencode-cli.test.ts", installed.skip);

describe.skipIf(!installed.binary)(`OpenCode ${VERSION} with triforge's plugin`, () => {
  const root = tempDir("triforge-opencode-cli-");
  const home = join(root, "home");
  const project = join(root, "shop");
  let fake: ReturnType<typeof startFakeChat>;
  const env = {
    CLAUDE_CONFIG_DIR: "",
    CODEX_HOME: join(home, ".codex"),
    XDG_CONFIG_HOME: "",
    XDG_DATA_HOME: "",
  };
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
    fake = startFakeChat();
    mkdirSync(join(home, ".config", "opencode"), { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(home, ".config", "opencode", "opencode.json"),
      JSON.stringify({
        $schema: "https://opencode.ai/config.json",
        provider: {
          fake: {
            npm: "@ai-sdk/openai-compatible",
            name: "Fake",
            options: { baseURL: `http://127.0.0.1:${fake.port}/v1`, apiKey: "test" },
            models: { "fake-model": { name: "Fake model" } },
          },
        },
        model: "fake/fake-model",
      }),
    );
    const install = await runBinary(["install", "--agents", "opencode", "--without", "insforge"], {
      home,
      env,
    });
    expect(install.code).toBe(0);
    const activate = await runBinary(["activate", "--no-import"], { home, env, cwd: project });
    expect(activate.code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    // The capture may have started the background indexer: let it finish before the folder goes.
    const lock = join(home, ".claude", "triforge", projectKey(project), "index.lock");
    for (let i = 0; i < 200 && existsSync(lock); i++) await Bun.sleep(50);
    fake?.stop(true);
  });

  test("the plugin captures the session when the reply ends; import adds nothing; recall finds it", async () => {
    const run = await spawnCollect([installed.binary as string, "run", "Where should the admin app live?"], {
      cwd: project,
      // OpenCode takes its folder from PWD, as a shell sets it, not from the process's working folder.
      env: {
        ...process.env,
        ...env,
        HOME: home,
        PWD: project,
        TRIFORGE_HOME: join(home, ".claude", "triforge"),
      },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(DECISION);
    // The plugin starts the capture detached and waits for nothing.
    const deadline = Date.now() + 30_000;
    while (chatLog().length < 2 && Date.now() < deadline) await Bun.sleep(100);
    const stored = chatLog();
    expect(stored.map((r) => r.role)).toEqual(["user", "assistant"]);
    expect(stored[0].text).toContain("Where should the admin app live?");
    expect(stored[1].text).toBe(DECISION);
    expect(stored.every((r) => r.uuid.startsWith("opencode:msg_"))).toBe(true);
    const imported = await runBinary(["import"], { home, env, cwd: project });
    expect(imported.stdout).toContain("0 new record(s), 2 already in memory");
    const recalled = await runBinary(["recall", "where does the admin app live", "--json"], {
      home,
      env,
      cwd: project,
    });
    const hits = JSON.parse(recalled.stdout).hits as { text: string }[];
    expect(hits.some((h) => h.text.includes("apps/admin"))).toBe(true);
  }, 180_000);
});
