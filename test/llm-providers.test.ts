/**
 * The provider chain against fake Anthropic / OpenAI / Ollama servers on 127.0.0.1 that speak the real
 * wire formats (test/fakes), through the real SDKs: choice order, request shapes, retries, timeouts,
 * usage counting and redaction.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  chooseLlm,
  DEFAULT_MODELS,
  InMemoryUsageSink,
  LlmError,
  ollamaHost,
  type ResolveOptions,
  type RetryPolicy,
  resolveLlm,
} from "../src/llm/index.ts";
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  isRetryable,
  ProviderFailure,
  parseRetryAfter,
} from "../src/llm/retry.ts";
import { errorReply, hangReply, rawReply, startFakeAnthropic, textReply } from "./support/fakes/anthropic.ts";
import { startFakeOllama } from "./support/fakes/ollama.ts";
import { chatReply, startFakeOpenAI } from "./support/fakes/openai.ts";
import { failure, tempDir } from "./support/helpers.ts";

const anthropic = startFakeAnthropic({ apiKey: "sk-ant-test", fallback: null });
const openai = startFakeOpenAI({ apiKey: "sk-openai-test", fallback: null });
const ollama = startFakeOllama({ models: ["qwen2.5:3b", "llama3.2:latest"], fallback: null });
afterAll(() => Promise.all([anthropic.stop(), openai.stop(), ollama.stop()]));

/** A port nothing listens on: Bun gives one out, we close it again. */
const closedPort = (() => {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port;
  s.stop(true);
  return port;
})();
const NO_OLLAMA = `127.0.0.1:${closedPort}`;

const ANTHROPIC_ENV = { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: anthropic.url };
const OPENAI_ENV = { OPENAI_API_KEY: "sk-openai-test", OPENAI_BASE_URL: `${openai.url}/v1` };

/** Retries that do not wait: the delays asked for are recorded instead. */
function fastRetry(extra: Partial<RetryPolicy> = {}): { retry: Partial<RetryPolicy>; delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    retry: {
      sleep: async (ms) => {
        delays.push(ms);
      },
      random: () => 0.5,
      ...extra,
    },
  };
}

function options(env: Record<string, string>, extra: ResolveOptions = {}): ResolveOptions {
  return { env: { OLLAMA_HOST: NO_OLLAMA, ...env }, retry: fastRetry().retry, ...extra };
}

const auto = { llm: "auto" as const };

describe("choosing a provider", () => {
  test("with no key and no Ollama there is no LLM, and each provider says why", async () => {
    const choice = await chooseLlm(auto, options({}));
    expect(choice.llm).toBeNull();
    expect(choice.skipped.map((s) => s.provider)).toEqual(["anthropic", "openai", "ollama"]);
    expect(choice.skipped[0].reason).toContain("ANTHROPIC_API_KEY");
    expect(choice.skipped[1].reason).toContain("OPENAI_API_KEY");
    expect(choice.skipped[2].reason).toContain("not reachable");
  });

  test("auto prefers Anthropic, then OpenAI, then Ollama", async () => {
    const both = await resolveLlm(
      auto,
      options({ ...ANTHROPIC_ENV, ...OPENAI_ENV, OLLAMA_HOST: ollama.url }),
    );
    expect([both?.provider, both?.model]).toEqual(["anthropic", DEFAULT_MODELS.anthropic]);
    const openaiOnly = await resolveLlm(auto, options({ ...OPENAI_ENV, OLLAMA_HOST: ollama.url }));
    expect([openaiOnly?.provider, openaiOnly?.model]).toEqual(["openai", DEFAULT_MODELS.openai]);
    const ollamaOnly = await chooseLlm(auto, options({ OLLAMA_HOST: ollama.url }));
    expect([ollamaOnly.llm?.provider, ollamaOnly.llm?.model]).toEqual(["ollama", "qwen2.5:3b"]);
    expect(ollamaOnly.skipped.map((s) => s.provider)).toEqual(["anthropic", "openai"]);
  });

  test("empty keys count as unset", async () => {
    const llm = await resolveLlm(auto, options({ ANTHROPIC_API_KEY: "  ", ...OPENAI_ENV }));
    expect(llm?.provider).toBe("openai");
  });

  test("a named provider is the only one tried; none means none even with keys", async () => {
    const env = { ...ANTHROPIC_ENV, ...OPENAI_ENV, OLLAMA_HOST: ollama.url };
    expect((await resolveLlm({ llm: "openai" }, options(env)))?.provider).toBe("openai");
    expect((await resolveLlm({ llm: "ollama" }, options(env)))?.provider).toBe("ollama");
    expect(await resolveLlm({ llm: "none" }, options(env))).toBeNull();
    const missing = await chooseLlm({ llm: "anthropic" }, options(OPENAI_ENV));
    expect(missing.llm).toBeNull();
    expect(missing.skipped).toEqual([{ provider: "anthropic", reason: "ANTHROPIC_API_KEY is not set" }]);
  });

  test("TRIFORGE_LLM overrides the config, and a setting that names nothing is an error", async () => {
    const env = { ...ANTHROPIC_ENV, ...OPENAI_ENV };
    expect((await resolveLlm(auto, options({ ...env, TRIFORGE_LLM: "openai" })))?.provider).toBe("openai");
    expect(await resolveLlm(auto, options({ ...env, TRIFORGE_LLM: "none" }))).toBeNull();
    expect((await failure(() => resolveLlm(auto, options({ TRIFORGE_LLM: "gpt" })))).message).toContain(
      'TRIFORGE_LLM is "gpt"',
    );
    // biome-ignore lint/suspicious/noExplicitAny: a hand-edited config can hold anything.
    const typo = await failure(() => resolveLlm({ llm: "antropic" as any }, options({})));
    expect(typo.message).toContain('config llm is "antropic"');
  });

  test("model names come from TRIFORGE_<PROVIDER>_MODEL, then config models, then the default", async () => {
    const config = { llm: "auto" as const, models: { anthropic: "claude-sonnet-4-5" } };
    expect((await resolveLlm(config, options(ANTHROPIC_ENV)))?.model).toBe("claude-sonnet-4-5");
    const fromEnv = await resolveLlm(
      config,
      options({ ...ANTHROPIC_ENV, TRIFORGE_ANTHROPIC_MODEL: "claude-opus-4-1" }),
    );
    expect(fromEnv?.model).toBe("claude-opus-4-1");
    anthropic.enqueue(textReply("hi"));
    await fromEnv?.complete({ prompt: "hello" });
    expect(anthropic.messageRequests().at(-1)?.body.model).toBe("claude-opus-4-1");
  });

  test("Ollama without the wanted model is skipped with the pull command; llama3.2 matches llama3.2:latest", async () => {
    const lacking = await chooseLlm(
      { llm: "auto", models: { ollama: "mistral" } },
      options({ OLLAMA_HOST: ollama.url }),
    );
    expect(lacking.llm).toBeNull();
    expect(lacking.skipped.at(-1)?.reason).toContain("ollama pull mistral");
    const tagless = await resolveLlm(
      { llm: "auto", models: { ollama: "llama3.2" } },
      options({ OLLAMA_HOST: ollama.url }),
    );
    expect(tagless?.model).toBe("llama3.2");
  });

  test("an Ollama that does not answer its probe in time is skipped", async () => {
    const slow = startFakeOllama({ probeDelayMs: 2_000 });
    try {
      const choice = await chooseLlm(auto, options({ OLLAMA_HOST: slow.url }, { probeTimeoutMs: 50 }));
      expect(choice.llm).toBeNull();
      expect(choice.skipped.at(-1)?.reason).toContain("no answer within 50 ms");
    } finally {
      await slow.stop();
    }
  });

  test("OLLAMA_HOST is read as Ollama reads it", () => {
    expect(ollamaHost(undefined)).toBe("http://127.0.0.1:11434");
    expect(ollamaHost("0.0.0.0")).toBe("http://127.0.0.1:11434");
    expect(ollamaHost("0.0.0.0:8080")).toBe("http://127.0.0.1:8080");
    expect(ollamaHost("gpu-box")).toBe("http://gpu-box:11434");
    expect(ollamaHost("https://ollama.example.com")).toBe("https://ollama.example.com:443");
    expect(ollamaHost("http://10.0.0.5:11434/proxy/")).toBe("http://10.0.0.5:11434/proxy");
    expect(ollamaHost("[::1]:11434")).toBe("http://[::1]:11434");
  });
});

describe("wire formats", () => {
  test("Anthropic: POST /v1/messages with the key, a version header, system, one user message and max_tokens", async () => {
    const usage = new InMemoryUsageSink();
    const llm = await resolveLlm(auto, options(ANTHROPIC_ENV, { usage }));
    anthropic.enqueue(
      textReply("Paris.", { usage: { input_tokens: 21, output_tokens: 3, cache_read_input_tokens: 4 } }),
    );
    const answer = await llm!.complete({
      system: "Answer briefly.",
      prompt: "Capital of France?",
      maxTokens: 50,
    });
    expect(answer).toBe("Paris.");
    const request = anthropic.messageRequests().at(-1)!;
    const key = request.headers["x-api-key"] ?? request.headers.authorization?.replace("Bearer ", "");
    expect(key).toBe("sk-ant-test");
    expect(request.headers["anthropic-version"]).toBeTruthy();
    expect(request.body).toMatchObject({
      model: DEFAULT_MODELS.anthropic,
      max_tokens: 50,
      system: "Answer briefly.",
      messages: [{ role: "user", content: "Capital of France?" }],
    });
    // Cache reads are input tokens too.
    expect(usage.records).toEqual([
      { provider: "anthropic", model: DEFAULT_MODELS.anthropic, inputTokens: 25, outputTokens: 3 },
    ]);
  });

  test("Anthropic: several text blocks are joined; JSON requests say JSON in the system prompt", async () => {
    const llm = await resolveLlm(auto, options(ANTHROPIC_ENV));
    anthropic.enqueue({
      kind: "message",
      content: [
        { type: "text", text: '{"a":' },
        { type: "text", text: " 1}" },
      ],
    });
    expect(await llm!.complete({ prompt: "give json", json: true })).toBe('{"a": 1}');
    expect(anthropic.messageRequests().at(-1)!.body.system).toContain("JSON");
  });

  test("OpenAI: POST /v1/chat/completions with Bearer key, system + user messages, max_completion_tokens, JSON mode", async () => {
    const usage = new InMemoryUsageSink();
    const llm = await resolveLlm(auto, options(OPENAI_ENV, { usage }));
    openai.enqueue(chatReply('{"ok": true}', { usage: { prompt_tokens: 40, completion_tokens: 6 } }));
    expect(await llm!.complete({ system: "Be terse.", prompt: "status?", maxTokens: 64, json: true })).toBe(
      '{"ok": true}',
    );
    const request = openai.chatRequests().at(-1)!;
    expect(request.headers.authorization).toBe("Bearer sk-openai-test");
    expect(request.body.messages[0].role).toBe("system");
    expect(request.body.messages[0].content).toStartWith("Be terse.");
    expect(request.body.messages[1]).toEqual({ role: "user", content: "status?" });
    expect(request.body).toMatchObject({
      model: DEFAULT_MODELS.openai,
      max_completion_tokens: 64,
      response_format: { type: "json_object" },
    });
    expect(request.body.temperature).toBeUndefined();
    expect(usage.totals()).toEqual([
      { provider: "openai", model: DEFAULT_MODELS.openai, calls: 1, inputTokens: 40, outputTokens: 6 },
    ]);
  });

  test("Ollama: its OpenAI-compatible /v1 endpoint, max_tokens and temperature 0, usage counted", async () => {
    const usage = new InMemoryUsageSink();
    const llm = await resolveLlm(auto, options({ OLLAMA_HOST: ollama.url }, { usage }));
    ollama.enqueue(chatReply("local answer", { usage: { prompt_tokens: 12, completion_tokens: 2 } }));
    expect(await llm!.complete({ prompt: "hi", maxTokens: 32 })).toBe("local answer");
    const probe = ollama.requests.find((r) => r.path === "/api/tags");
    expect(probe?.method).toBe("GET");
    expect(ollama.chatRequests().at(-1)!.body).toMatchObject({
      model: "qwen2.5:3b",
      max_tokens: 32,
      temperature: 0,
    });
    expect(usage.records).toEqual([
      { provider: "ollama", model: "qwen2.5:3b", inputTokens: 12, outputTokens: 2 },
    ]);
  });

  test("an OpenAI-dialect server without /api/tags is probed through /v1/models", async () => {
    const lmStudio = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        new URL(req.url).pathname === "/v1/models"
          ? Response.json({ object: "list", data: [{ id: "qwen2.5:3b", object: "model" }] })
          : new Response("not found", { status: 404 }),
    });
    try {
      const llm = await resolveLlm({ llm: "ollama" }, options({ OLLAMA_HOST: `127.0.0.1:${lmStudio.port}` }));
      expect(llm?.provider).toBe("ollama");
    } finally {
      lmStudio.stop(true);
    }
  });

  test("every call is counted, per provider and model", async () => {
    const usage = new InMemoryUsageSink();
    const a = await resolveLlm(auto, options(ANTHROPIC_ENV, { usage }));
    const o = await resolveLlm({ llm: "openai" }, options(OPENAI_ENV, { usage }));
    anthropic.enqueue(
      textReply("1", { usage: { input_tokens: 10, output_tokens: 1 } }),
      textReply("2", { usage: { input_tokens: 20, output_tokens: 2 } }),
    );
    openai.enqueue(chatReply("3", { usage: { prompt_tokens: 5, completion_tokens: 5 } }));
    await a!.complete({ prompt: "one" });
    await a!.complete({ prompt: "two" });
    await o!.complete({ prompt: "three" });
    expect(usage.totals()).toEqual([
      { provider: "anthropic", model: DEFAULT_MODELS.anthropic, calls: 2, inputTokens: 30, outputTokens: 3 },
      { provider: "openai", model: DEFAULT_MODELS.openai, calls: 1, inputTokens: 5, outputTokens: 5 },
    ]);
  });

  test("a usage sink that throws loses the count, not the answer, and the failure is logged", async () => {
    const home = tempDir();
    const previous = process.env.TRIFORGE_HOME;
    process.env.TRIFORGE_HOME = home;
    try {
      const broken = {
        record: () => {
          throw new Error("database is locked");
        },
      };
      const llm = await resolveLlm(auto, options(ANTHROPIC_ENV, { usage: broken }));
      anthropic.enqueue(textReply("kept"));
      expect(await llm!.complete({ prompt: "x" })).toBe("kept");
      expect(await Bun.file(join(home, "errors.log")).text()).toContain("database is locked");
    } finally {
      if (previous === undefined) delete process.env.TRIFORGE_HOME;
      else process.env.TRIFORGE_HOME = previous;
    }
  });
});

describe("retries, backoff and timeouts", () => {
  test("a 429 with Retry-After is waited out, then the call succeeds", async () => {
    const { retry, delays } = fastRetry();
    const usage = new InMemoryUsageSink();
    const llm = await resolveLlm(auto, options(ANTHROPIC_ENV, { retry, usage }));
    const before = anthropic.messageRequests().length;
    anthropic.enqueue(
      errorReply(429, {
        message: "Number of request tokens has exceeded your per-minute rate limit",
        headers: { "retry-after": "7" },
      }),
      textReply("after the wait"),
    );
    expect(await llm!.complete({ prompt: "x" })).toBe("after the wait");
    expect(anthropic.messageRequests().length - before).toBe(2);
    expect(delays).toEqual([7000]);
    expect(usage.records).toHaveLength(1);
  });

  test("OpenAI's retry-after-ms is honoured", async () => {
    const { retry, delays } = fastRetry();
    const llm = await resolveLlm(auto, options(OPENAI_ENV, { retry }));
    openai.enqueue(
      errorReply(429, { message: "Rate limit reached", headers: { "retry-after-ms": "250" } }),
      chatReply("ok"),
    );
    expect(await llm!.complete({ prompt: "x" })).toBe("ok");
    expect(delays).toEqual([250]);
  });

  test("500 three times then success: three backoffs that double", async () => {
    const { retry, delays } = fastRetry({ baseDelayMs: 100 });
    const llm = await resolveLlm(auto, options(ANTHROPIC_ENV, { retry }));
    anthropic.enqueue(errorReply(500), errorReply(500), errorReply(529), textReply("finally"));
    expect(await llm!.complete({ prompt: "x" })).toBe("finally");
    // random() = 0.5: each delay is three quarters of its step (100, 200, 400 ms).
    expect(delays).toEqual([75, 150, 300]);
  });

  test("500 on every attempt fails after 1 + 3 requests with an error that says what happened", async () => {
    const { retry } = fastRetry();
    const llm = await resolveLlm(auto, options(ANTHROPIC_ENV, { retry }));
    const before = anthropic.messageRequests().length;
    anthropic.enqueue(
      ...Array.from({ length: 4 }, () => errorReply(500, { message: "Internal server error" })),
    );
    const error = await failure(() => llm!.complete({ prompt: "x" }));
    expect(error).toBeInstanceOf(LlmError);
    expect(error.message).toContain("anthropic");
    expect(error.message).toContain("HTTP 500 api_error: Internal server error");
    expect(error.message).toContain("gave up after 4 attempts");
    expect((error as LlmError).attempts).toBe(4);
    expect((error as LlmError).status).toBe(500);
    expect(anthropic.messageRequests().length - before).toBe(4);
  });

  test("errors that retrying cannot fix fail at once: bad key, bad request, x-should-retry: false", async () => {
    const { retry, delays } = fastRetry();
    const wrongKey = await resolveLlm(
      auto,
      options({ ...ANTHROPIC_ENV, ANTHROPIC_API_KEY: "sk-ant-wrong" }, { retry }),
    );
    const before = anthropic.messageRequests().length;
    const denied = await failure(() => wrongKey!.complete({ prompt: "x" }));
    expect(denied.message).toContain("HTTP 401 authentication_error: invalid x-api-key");
    expect((denied as LlmError).attempts).toBe(1);

    const llm = await resolveLlm(auto, options(OPENAI_ENV, { retry }));
    openai.enqueue(errorReply(400, { message: "Invalid 'max_completion_tokens'" }));
    expect((await failure(() => llm!.complete({ prompt: "x" }))).message).toContain("HTTP 400");
    openai.enqueue(errorReply(503, { headers: { "x-should-retry": "false" } }));
    expect((await failure(() => llm!.complete({ prompt: "x" }))).message).toContain("HTTP 503");
    expect(anthropic.messageRequests().length - before).toBe(1);
    expect(delays).toEqual([]);
  });

  test("a Retry-After longer than we wait gives up at once and says so", async () => {
    const { retry, delays } = fastRetry();
    const llm = await resolveLlm(auto, options(OPENAI_ENV, { retry }));
    openai.enqueue(
      errorReply(429, { message: "You exceeded your current quota", headers: { "retry-after": "3600" } }),
    );
    const error = await failure(() => llm!.complete({ prompt: "x" }));
    expect(error.message).toContain("asks to wait 3600 s");
    expect(delays).toEqual([]);
  });

  test("a server that never answers times out; the timeout is retried and then reported", async () => {
    const { retry, delays } = fastRetry({ retries: 1 });
    const llm = await resolveLlm(auto, options(ANTHROPIC_ENV, { retry, timeoutMs: 150 }));
    const before = anthropic.messageRequests().length;
    anthropic.enqueue(hangReply(), hangReply());
    const error = await failure(() => llm!.complete({ prompt: "x" }));
    expect(error.message).toContain("no answer from");
    expect(error.message).toContain("within 150 ms");
    expect((error as LlmError).status).toBeUndefined();
    expect(anthropic.messageRequests().length - before).toBe(2);
    expect(delays).toHaveLength(1);
  });

  test("a timeout followed by an answer succeeds", async () => {
    const { retry } = fastRetry();
    const llm = await resolveLlm(auto, options(OPENAI_ENV, { retry, timeoutMs: 150 }));
    openai.enqueue(hangReply(), chatReply("second try"));
    expect(await llm!.complete({ prompt: "x" })).toBe("second try");
  });

  test("a provider that is down is reported as unreachable after the retries", async () => {
    const { retry } = fastRetry();
    const llm = await resolveLlm(
      auto,
      options({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: `http://127.0.0.1:${closedPort}` }, { retry }),
    );
    const error = await failure(() => llm!.complete({ prompt: "x" }));
    expect(error.message).toContain(`cannot reach http://127.0.0.1:${closedPort}`);
    expect((error as LlmError).attempts).toBe(4);
  });

  test("a response body that is not JSON is a clear failure, not a crash", async () => {
    const { retry } = fastRetry({ retries: 0 });
    const llm = await resolveLlm(auto, options(OPENAI_ENV, { retry }));
    openai.enqueue(
      rawReply("<html>502 Bad Gateway</html>", { status: 502, headers: { "content-type": "text/html" } }),
    );
    const error = await failure(() => llm!.complete({ prompt: "x" }));
    expect(error).toBeInstanceOf(LlmError);
    expect(error.message).toContain("HTTP 502");
  });

  test("an empty prompt is refused before any request", async () => {
    const llm = await resolveLlm(auto, options(ANTHROPIC_ENV));
    const before = anthropic.requests.length;
    expect((await failure(() => llm!.complete({ prompt: "  " }))).message).toContain("non-empty prompt");
    expect(anthropic.requests.length).toBe(before);
  });
});

describe("backoff arithmetic", () => {
  test("Retry-After in seconds, as an HTTP date, or in milliseconds", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter(new Headers({ "retry-after": "2" }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ "retry-after": "0.5" }), now)).toBe(500);
    expect(parseRetryAfter(new Headers({ "retry-after": "Wed, 01 Jan 2025 00:00:30 GMT" }), now)).toBe(
      30_000,
    );
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "120", "retry-after": "9" }), now)).toBe(120);
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  test("each step doubles up to the cap, with half of it jittered", () => {
    const at = (random: number) => ({
      ...DEFAULT_RETRY_POLICY,
      baseDelayMs: 1000,
      maxDelayMs: 5000,
      random: () => random,
    });
    expect([0, 1, 2, 3].map((i) => backoffDelay(i, at(0)))).toEqual([500, 1000, 2000, 2500]);
    expect([0, 1, 2, 3].map((i) => backoffDelay(i, at(1)))).toEqual([1000, 2000, 4000, 5000]);
  });

  test("which failures are retried", () => {
    const f = (status?: number, headers?: Record<string, string>) =>
      new ProviderFailure("x", status, headers ? new Headers(headers) : undefined);
    expect([408, 409, 429, 500, 502, 503, 529].every((s) => isRetryable(f(s)))).toBe(true);
    expect([400, 401, 403, 404, 413, 422].some((s) => isRetryable(f(s)))).toBe(false);
    expect(isRetryable(f(undefined))).toBe(true);
    expect(isRetryable(f(400, { "x-should-retry": "true" }))).toBe(true);
    expect(isRetryable(f(500, { "x-should-retry": "false" }))).toBe(false);
  });
});

describe("privacy", () => {
  test("secrets and the project's exclude rules are redacted before a prompt leaves the machine", async () => {
    const root = tempDir();
    mkdirSync(join(root, ".triforge"), { recursive: true });
    writeFileSync(
      join(root, ".triforge", "config.json"),
      JSON.stringify({ exclude: ["Project Nightingale"] }),
    );
    const secret = `ghp_${"aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"}`;
    const llm = await resolveLlm(
      { llm: "auto", exclude: ["Project Nightingale"] },
      options(ANTHROPIC_ENV, { projectRoot: root }),
    );
    anthropic.enqueue(textReply("ok"));
    await llm!.complete({
      system: `context token ${secret}`,
      prompt: `Deploy Project Nightingale with token ${secret} please`,
    });
    const sent = anthropic.messageRequests().at(-1)!.rawBody;
    expect(sent).not.toContain(secret);
    expect(sent).not.toContain("Project Nightingale");
    expect(sent).toContain("Deploy");
  });
});
