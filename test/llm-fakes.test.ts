/**
 * The fake provider servers are only worth their name if real clients accept them: these tests drive
 * the Anthropic fake with @anthropic-ai/sdk (streaming included, as Claude Code uses it) and with raw
 * HTTP, so the event sequence and the validation are pinned down.
 */
import { afterAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import {
  type AnthropicBlock,
  errorReply,
  messageReply,
  startFakeAnthropic,
  streamErrorReply,
  textReply,
  toolUseReply,
} from "./support/fakes/anthropic.ts";
import { startFakeOllama } from "./support/fakes/ollama.ts";

const fake = startFakeAnthropic({ apiKey: "test-key", fallback: null });
afterAll(() => fake.stop());
const client = new Anthropic({ apiKey: "test-key", baseURL: fake.url, maxRetries: 0 });

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${fake.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "test-key",
      "anthropic-version": "2023-06-01",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** The `event:` names and parsed `data:` of an SSE body. */
async function sseEvents(response: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "";
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null");
      return { event, data };
    });
}

const minimal = {
  model: "claude-haiku-4-5",
  max_tokens: 100,
  messages: [{ role: "user" as const, content: "hi" }],
};

// biome-ignore lint/suspicious/noExplicitAny: the tests read fields of the fakes' JSON answers.
const jsonOf = (response: Response): Promise<any> => response.json();

describe("fake Anthropic Messages API", () => {
  test("streams text and tool_use blocks that the SDK reassembles into the scripted message", async () => {
    const blocks: AnthropicBlock[] = [
      { type: "thinking", thinking: "The user wants the file list.", signature: "sig-1" },
      { type: "text", text: "Let me list the files in the project folder." },
      {
        type: "tool_use",
        id: "toolu_fixed",
        name: "Bash",
        input: { command: "ls -la", description: "List files" },
      },
    ];
    fake.enqueue(messageReply(blocks, { usage: { input_tokens: 120, output_tokens: 42 }, deltaSize: 5 }));
    const stream = client.messages.stream(minimal);
    const texts: string[] = [];
    stream.on("text", (delta) => texts.push(delta));
    const message = await stream.finalMessage();
    expect(texts.join("")).toBe("Let me list the files in the project folder.");
    expect(texts.length).toBeGreaterThan(1);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.usage.input_tokens).toBe(120);
    expect(message.usage.output_tokens).toBe(42);
    expect(message.content).toEqual(blocks as never);
  });

  test("the stream carries the real event sequence", async () => {
    fake.enqueue(toolUseReply("Read", { file_path: "/tmp/a.txt" }, { text: "Reading.", id: "toolu_1" }));
    const response = await post("/v1/messages?beta=true", { ...minimal, stream: true });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = await sseEvents(response);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(names.filter((n) => n === "content_block_start")).toHaveLength(2);
    expect(names.filter((n) => n === "content_block_stop")).toHaveLength(2);
    const toolStart = events.find(
      (e) =>
        e.event === "content_block_start" && (e.data.content_block as { type: string }).type === "tool_use",
    );
    expect(toolStart?.data).toEqual({
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "toolu_1", name: "Read", input: {} },
    });
    const json = events
      .filter((e) => (e.data.delta as { type?: string })?.type === "input_json_delta")
      .map((e) => (e.data.delta as { partial_json: string }).partial_json)
      .join("");
    expect(JSON.parse(json)).toEqual({ file_path: "/tmp/a.txt" });
    expect(events.at(-2)?.data.delta).toMatchObject({ stop_reason: "tool_use" });
    expect(fake.requests.at(-1)?.query).toEqual({ beta: "true" });
  });

  test("a mid-stream error event makes the SDK throw", async () => {
    fake.enqueue(streamErrorReply());
    await expect(client.messages.stream(minimal).finalMessage()).rejects.toThrow(/Overloaded/);
  });

  test("non-streaming replies and errors in the API's JSON shapes", async () => {
    fake.enqueue(
      textReply("plain"),
      errorReply(429, { message: "slow down", headers: { "retry-after": "3" } }),
    );
    const message = await client.messages.create(minimal);
    expect(message.content).toEqual([{ type: "text", text: "plain" }] as never);
    expect(message.id).toStartWith("msg_");
    const limited = await post("/v1/messages", minimal);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("3");
    const body = await jsonOf(limited);
    expect(body.type).toBe("error");
    expect(body.error).toEqual({ type: "rate_limit_error", message: "slow down" });
  });

  test("requests are validated as the API validates them", async () => {
    expect((await post("/v1/messages", minimal, { "x-api-key": "wrong" })).status).toBe(401);
    expect((await post("/v1/messages", minimal, { "anthropic-version": "" })).status).toBe(400);
    const missing = await post("/v1/messages", { model: "m", messages: [{ role: "user", content: "x" }] });
    expect(missing.status).toBe(400);
    expect((await jsonOf(missing)).error.message).toContain("max_tokens");
    expect((await post("/v1/messages", { ...minimal, messages: [] })).status).toBe(400);
  });

  test("count_tokens answers; replies are chosen by `when`; an unscripted request is a 500 naming it", async () => {
    const count = await post("/v1/messages/count_tokens", {
      model: "m",
      messages: [{ role: "user", content: "hello there" }],
    });
    expect((await jsonOf(count)).input_tokens).toBeGreaterThan(0);

    fake.enqueue(
      textReply("for tools", { when: (r) => Array.isArray(r.body.tools) }),
      textReply("for anyone"),
    );
    const plain = await client.messages.create(minimal);
    expect(plain.content).toEqual([{ type: "text", text: "for anyone" }] as never);
    const withTools = await client.messages.create({
      ...minimal,
      tools: [{ name: "t", input_schema: { type: "object" } }],
    });
    expect(withTools.content).toEqual([{ type: "text", text: "for tools" }] as never);
    expect(fake.pending()).toBe(0);

    const unscripted = await post("/v1/messages", minimal);
    expect(unscripted.status).toBe(500);
    expect((await jsonOf(unscripted)).error.message).toContain("no scripted reply");
  });
});

describe("fake Ollama", () => {
  test("answers the probes and refuses a model that is not pulled", async () => {
    const ollama = startFakeOllama({ models: ["qwen2.5:3b"] });
    try {
      expect(await (await fetch(ollama.url)).text()).toBe("Ollama is running");
      expect((await jsonOf(await fetch(`${ollama.url}/api/tags`))).models[0].name).toBe("qwen2.5:3b");
      expect((await jsonOf(await fetch(`${ollama.url}/v1/models`))).data[0].id).toBe("qwen2.5:3b");
      const missing = await fetch(`${ollama.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "mistral", messages: [{ role: "user", content: "x" }] }),
      });
      expect(missing.status).toBe(404);
      expect((await jsonOf(missing)).error.message).toContain("try pulling it first");
    } finally {
      await ollama.stop();
    }
  });
});
