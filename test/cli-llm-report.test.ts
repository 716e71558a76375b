/** What leaves the machine, said where the user looks: activate, status, doctor and index. */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBinary, tempDir } from "./support/helpers.ts";

// The first test may build the binary it runs.
setDefaultTimeout(60_000);

const scratch = tempDir("triforge-llm-report-");
/** No key of the machine running the tests leaks in, and no Ollama answers (port 9 is discard). */
const NO_LLM = {
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  ANTHROPIC_BASE_URL: undefined,
  OPENAI_BASE_URL: undefined,
  TRIFORGE_LLM: undefined,
  OLLAMA_HOST: "127.0.0.1:9",
};

function project() {
  const root = mkdtempSync(join(scratch, "case-"));
  const home = join(root, "home");
  const dir = join(root, "project");
  mkdirSync(home);
  mkdirSync(dir);
  return { home, dir };
}

/** An OpenAI-compatible server on 127.0.0.1 that refuses every key, as a revoked one is refused. */
const requests: string[] = [];
const refusing = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    requests.push(new URL(request.url).pathname);
    return Response.json(
      {
        error: {
          message: "Incorrect API key provided",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      },
      { status: 401 },
    );
  },
});
afterAll(() => refusing.stop(true));

describe("the LLM in use, named with where it sends and how to keep everything local", () => {
  test("activate with an Anthropic key in the environment says redacted excerpts go to Anthropic", async () => {
    const { home, dir } = project();
    const r = await runBinary(["activate"], {
      home,
      cwd: dir,
      env: { ...NO_LLM, ANTHROPIC_API_KEY: "sk-ant-test" },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "LLM: anthropic claude-haiku-4-5 (llm: auto): redacted excerpts of your conversations go to https://api.anthropic.com at every index",
    );
    expect(r.stdout).toContain('set "llm": "none" in .triforge/config.json (or TRIFORGE_LLM=none)');
  });

  test("with no key and no Ollama, activate and status say nothing leaves the machine", async () => {
    const { home, dir } = project();
    const activated = await runBinary(["activate"], { home, cwd: dir, env: NO_LLM });
    expect(activated.stdout).toContain(
      "LLM: none found (llm: auto: no ANTHROPIC_API_KEY, no OPENAI_API_KEY, no Ollama at http://127.0.0.1:9): nothing leaves this machine",
    );
    const status = await runBinary(["status"], { home, cwd: dir, env: NO_LLM });
    expect(status.stdout).toMatch(/^LLM {8}none found \(llm: auto: /m);
    const json = JSON.parse((await runBinary(["status", "--json"], { home, cwd: dir, env: NO_LLM })).stdout);
    expect(json.llmInUse).toMatchObject({ setting: "auto", settingFrom: "config" });
    expect(json.llmInUse.provider).toBeUndefined();
  });

  test("TRIFORGE_LLM=none wins over a key: nothing is sent, and status says so", async () => {
    const { home, dir } = project();
    await runBinary(["activate"], { home, cwd: dir, env: NO_LLM });
    const r = await runBinary(["status"], {
      home,
      cwd: dir,
      env: { ...NO_LLM, OPENAI_API_KEY: "sk-x", TRIFORGE_LLM: "none" },
    });
    expect(r.stdout).toMatch(/^LLM {8}none \(TRIFORGE_LLM=none\): nothing leaves this machine/m);
  });

  test("doctor fails a provider named in the config that cannot be used, and says why", async () => {
    const { home, dir } = project();
    await runBinary(["activate"], { home, cwd: dir, env: NO_LLM });
    writeFileSync(join(dir, ".triforge", "config.json"), JSON.stringify({ llm: "openai" }));
    const r = await runBinary(["doctor", "--json"], { home, cwd: dir, env: NO_LLM });
    const llm = (JSON.parse(r.stdout) as { name: string; ok: boolean; detail: string; fix?: string }[]).find(
      (c) => c.name === "LLM",
    );
    expect(llm).toMatchObject({
      ok: false,
      detail: expect.stringContaining("openai is not usable (llm: openai: no OPENAI_API_KEY)"),
    });
    expect(llm?.fix).toContain("OPENAI_API_KEY is not set");
  });
});

describe("an index run whose every LLM call failed", () => {
  test("says so on stdout and stderr, and doctor then names the failed calls", async () => {
    const { home, dir } = project();
    await runBinary(["activate"], { home, cwd: dir, env: NO_LLM });
    process.env.TRIFORGE_HOME = join(home, ".claude", "triforge");
    const { projectDataDir } = await import("../src/home/paths.ts");
    const { realpathSync } = await import("node:fs");
    const dataDir = projectDataDir(realpathSync(dir));
    mkdirSync(dataDir, { recursive: true });
    const turn = (uuid: string, role: string, text: string) =>
      JSON.stringify({ ts: "2025-04-01T09:00:00Z", session_id: "llm-1", role, text, uuid });
    writeFileSync(
      join(dataDir, "chats.jsonl"),
      `${turn("a", "user", "Move the auth code to src/auth/session.ts, please.")}\n${turn("b", "assistant", "Done: session handling now lives in src/auth/session.ts.")}\n`,
    );
    const env = {
      ...NO_LLM,
      OPENAI_API_KEY: "sk-revoked",
      OPENAI_BASE_URL: `http://127.0.0.1:${refusing.port}/v1`,
    };
    const indexed = await runBinary(["index"], { home, cwd: dir, env });
    expect(indexed.code).toBe(0);
    expect(requests.length).toBeGreaterThan(0);
    expect(indexed.stdout).toContain("knowledge graph by openai/gpt-4o-mini");
    expect(indexed.stdout).toMatch(/every LLM call failed \(\d+\), so the local extractor built the graph/);
    expect(indexed.stderr).toContain("triforge index: warning: every LLM call failed");

    const doctor = await runBinary(["doctor", "--json"], { home, cwd: dir, env });
    const calls = (JSON.parse(doctor.stdout) as { name: string; ok: boolean; detail: string }[]).find(
      (c) => c.name === "LLM calls",
    );
    expect(calls?.ok).toBe(false);
    expect(calls?.detail).toMatch(/^\d+ failed in the last 7 days; the last at \d{4}-/);
  });
});

describe("the month's LLM spend", () => {
  test("status shows this month's calls and tokens first, then the running total", async () => {
    const { startFakeOpenAI, chatReply } = await import("./support/fakes/openai.ts");
    const fake = startFakeOpenAI({
      fallback: chatReply("{}", { usage: { prompt_tokens: 120, completion_tokens: 30 } }),
    });
    try {
      const { home, dir } = project();
      await runBinary(["activate"], { home, cwd: dir, env: NO_LLM });
      process.env.TRIFORGE_HOME = join(home, ".claude", "triforge");
      const { projectDataDir } = await import("../src/home/paths.ts");
      const { realpathSync } = await import("node:fs");
      const dataDir = projectDataDir(realpathSync(dir));
      mkdirSync(dataDir, { recursive: true });
      const turn = (uuid: string, role: string, text: string) =>
        JSON.stringify({ ts: "2025-04-01T09:00:00Z", session_id: "spend-1", role, text, uuid });
      writeFileSync(
        join(dataDir, "chats.jsonl"),
        `${turn("a", "user", "Use Postgres 16 for the billing service.")}\n${turn("b", "assistant", "Noted: billing runs on Postgres 16.")}\n`,
      );
      const env = { ...NO_LLM, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${fake.url}/v1` };
      expect((await runBinary(["index"], { home, cwd: dir, env })).code).toBe(0);
      const json = JSON.parse((await runBinary(["status", "--json"], { home, cwd: dir, env })).stdout);
      expect(json.llmUsage.length).toBe(1);
      const calls = json.llmUsage[0].calls as number;
      expect(calls).toBeGreaterThan(0);
      expect(json.llmUsage[0]).toMatchObject({
        provider: "openai",
        model: "gpt-4o-mini",
        inputTokens: 120 * calls,
      });
      // Every call was made this month, so the month's counts are the running total.
      expect(json.llmUsageThisMonth).toEqual(json.llmUsage);
      const text = (await runBinary(["status"], { home, cwd: dir, env })).stdout;
      const month = new Date().toISOString().slice(0, 7);
      expect(text).toContain(
        `LLM spend  ${month}: openai/gpt-4o-mini: ${calls} calls, ${120 * calls} input + ${30 * calls} output tokens; in all: openai/gpt-4o-mini: ${calls} calls`,
      );
      // Activating again says the month's spend too, under the LLM line.
      const again = await runBinary(["activate"], { home, cwd: dir, env });
      expect(again.stdout).toContain(`LLM spend ${month}: openai/gpt-4o-mini: ${calls} calls`);
    } finally {
      await fake.stop();
    }
  });
});
