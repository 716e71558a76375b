/**
 * A fake Anthropic Messages API on 127.0.0.1, for tests of anything that talks to Claude: our LLM chain
 * (through @anthropic-ai/sdk) or a real Claude Code run (`ANTHROPIC_BASE_URL=<fake.url>`).
 *
 * Wire format, as the real API:
 * - `POST /v1/messages` (any query string, e.g. Claude Code's `?beta=true`). Needs an `x-api-key` or an
 *   `Authorization: Bearer` header (401 `authentication_error` otherwise; with `apiKey` set it must match),
 *   an `anthropic-version` header, and a JSON body with `model`, `max_tokens` and non-empty `messages`
 *   (400 `invalid_request_error` otherwise).
 *   - Without `stream`: one `message` object `{id, type: "message", role, model, content: [...],
 *     stop_reason, stop_sequence, usage: {input_tokens, output_tokens, cache_*_input_tokens}}`.
 *   - With `stream: true`: `text/event-stream` with `message_start`, `ping`, then per content block
 *     `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta` for tool_use,
 *     `thinking_delta` + `signature_delta`) / `content_block_stop`, then `message_delta` (stop_reason,
 *     output usage) and `message_stop`.
 *   - Errors: the status with `{"type":"error","error":{"type","message"},"request_id"}` and any headers
 *     you script (`retry-after`, `x-should-retry`…); `streamErrorReply` sends an SSE `error` event after
 *     `message_start`, as the API does when it is overloaded mid-stream.
 * - `POST /v1/messages/count_tokens` → `{input_tokens}` (estimated); `GET /v1/models` → a small list.
 *
 * Scripting: `fake.enqueue(...)` queues replies; each `/v1/messages` request takes the first queued reply
 * whose `when` accepts it (Claude Code also sends side requests, e.g. title generation: give your main
 * replies a `when` such as `(r) => r.body.tools?.length > 0`). An empty queue answers `fallback`
 * (default: the text "OK"; `fallback: null` makes it a 500 that names the unscripted request).
 * `fake.requests` logs every request received (method, path, query, headers, parsed body), and
 * `fake.messageRequests()` only the `/v1/messages` ones.
 *
 * Usage when a reply does not script it: input ≈ request JSON length / 4, output ≈ reply length / 4.
 *
 * @example
 *   const fake = startFakeAnthropic();
 *   fake.enqueue(toolUseReply("Bash", { command: "ls" }), textReply("done"));
 *   // ... run the client with ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY=anything ...
 *   expect(fake.messageRequests()).toHaveLength(2);
 *   await fake.stop();
 */
import {
  type CommonReply,
  type ErrorFormat,
  estimateTokens,
  json,
  type ReceivedRequest,
  type ReplyControls,
  randomId,
  type ScriptedFake,
  ScriptedServer,
} from "./common.ts";

export { errorReply, hangReply, type ReceivedRequest, rawReply } from "./common.ts";

export type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id?: string; name: string; input: unknown }
  | { type: "thinking"; thinking: string; signature?: string };

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export type AnthropicReply = (
  | {
      kind: "message";
      content: AnthropicBlock[];
      /** Default: `tool_use` when a block is one, else `end_turn`. */
      stopReason?: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "pause_turn" | "refusal";
      usage?: AnthropicUsage;
      /** Default: the model the request named. */
      model?: string;
      /** Streaming only: characters per text/JSON delta event (default 16), to exercise reassembly. */
      deltaSize?: number;
    }
  | { kind: "stream_error"; type: string; message: string }
  | CommonReply
) &
  ReplyControls;

type Extra = ReplyControls & {
  deltaSize?: number;
  usage?: AnthropicUsage;
  stopReason?: Extract<AnthropicReply, { kind: "message" }>["stopReason"];
};

export function textReply(text: string, extra: Extra = {}): AnthropicReply {
  return { kind: "message", content: [{ type: "text", text }], ...extra };
}

export function toolUseReply(
  name: string,
  input: unknown,
  extra: Extra & { text?: string; id?: string } = {},
): AnthropicReply {
  const { text, id, ...rest } = extra;
  const content: AnthropicBlock[] = [
    ...(text ? [{ type: "text" as const, text }] : []),
    { type: "tool_use", id, name, input },
  ];
  return { kind: "message", content, ...rest };
}

export function messageReply(content: AnthropicBlock[], extra: Extra = {}): AnthropicReply {
  return { kind: "message", content, ...extra };
}

/** A 200 stream that fails after message_start with an SSE `error` event. */
export function streamErrorReply(type = "overloaded_error", message = "Overloaded"): AnthropicReply {
  return { kind: "stream_error", type, message };
}

export interface FakeAnthropicOptions {
  /** When set, requests must carry exactly this key (x-api-key or Bearer). */
  apiKey?: string;
  /** The answer when no queued reply fits; null answers 500. Default: textReply("OK"). */
  fallback?: AnthropicReply | null;
}

/** `url` is the base URL for `ANTHROPIC_BASE_URL` (no `/v1`). */
export interface FakeAnthropic extends ScriptedFake<AnthropicReply> {
  /** Only the `POST /v1/messages` requests, in order. */
  messageRequests(): ReceivedRequest[];
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

const errorBody = (type: string, message: string) => ({
  type: "error",
  error: { type, message },
  request_id: randomId("req_"),
});
const defaultErrorType = (status: number) =>
  ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");

const ERROR_FORMAT: ErrorFormat = { body: errorBody, defaultType: defaultErrorType };

export function startFakeAnthropic(options: FakeAnthropicOptions = {}): FakeAnthropic {
  const fallback = options.fallback === undefined ? textReply("OK") : options.fallback;

  const server: ScriptedServer<AnthropicReply> = new ScriptedServer(fallback, ERROR_FORMAT, handle);
  async function handle(request: ReceivedRequest, signal: AbortSignal): Promise<Response> {
    const headers = { "request-id": randomId("req_") };
    const fail = (status: number, message: string) =>
      json(errorBody(defaultErrorType(status), message), status, headers);
    const isMessages = request.path === "/v1/messages";
    const isCount = request.path === "/v1/messages/count_tokens";
    if (request.method === "GET" && request.path === "/v1/models") {
      return json({
        data: ["claude-haiku-4-5", "claude-sonnet-4-5"].map((id) => ({
          type: "model",
          id,
          display_name: id,
          created_at: "2025-10-01T00:00:00Z",
        })),
        has_more: false,
        first_id: "claude-haiku-4-5",
        last_id: "claude-sonnet-4-5",
      });
    }
    if (request.method !== "POST" || !(isMessages || isCount))
      return fail(404, `Not found: ${request.method} ${request.path}`);

    const key = request.headers["x-api-key"] ?? request.headers.authorization?.replace(/^Bearer\s+/i, "");
    if (!key) return fail(401, "x-api-key header is required");
    if (options.apiKey !== undefined && key !== options.apiKey) return fail(401, "invalid x-api-key");
    if (!request.headers["anthropic-version"]) return fail(400, "anthropic-version: header is required");
    const body = request.body;
    if (typeof body !== "object" || body === null) return fail(400, "The request body is not valid JSON.");
    if (typeof body.model !== "string") return fail(400, "model: Field required");
    if (!Array.isArray(body.messages) || body.messages.length === 0)
      return fail(400, "messages: at least one message is required");
    const inputTokens = estimateTokens(
      JSON.stringify({ system: body.system, messages: body.messages, tools: body.tools }),
    );
    if (isCount) return json({ input_tokens: inputTokens }, 200, headers);
    if (typeof body.max_tokens !== "number") return fail(400, "max_tokens: Field required");

    const reply = await server.reply(request, signal, () =>
      fail(
        500,
        `fake: no scripted reply for request #${server.requests.length} (${request.rawBody.slice(0, 200)})`,
      ),
    );
    if (reply instanceof Response) return reply;
    if (reply.kind === "message") {
      const message = buildMessage(reply, body.model, inputTokens);
      return body.stream === true
        ? sse(streamEvents(message, reply.deltaSize ?? 16), headers)
        : json(message, 200, headers);
    }
    // stream_error: a 200 stream that fails after message_start.
    const start = buildMessage({ kind: "message", content: [] }, body.model, inputTokens);
    return sse(
      [
        messageStart(start),
        ["error", { type: "error", error: { type: reply.type, message: reply.message } }],
      ],
      headers,
    );
  }

  return { ...server.fake(), messageRequests: () => server.requestsTo("POST", "/v1/messages") };
}

interface Message {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: Record<string, unknown>[];
  stop_reason: string;
  stop_sequence: null;
  usage: Required<AnthropicUsage>;
}

function buildMessage(
  reply: Extract<AnthropicReply, { kind: "message" }>,
  requestModel: string,
  inputTokens: number,
): Message {
  const content = reply.content.map((block) => {
    if (block.type === "tool_use")
      return { type: "tool_use", id: block.id ?? randomId("toolu_"), name: block.name, input: block.input };
    if (block.type === "thinking")
      return { type: "thinking", thinking: block.thinking, signature: block.signature ?? randomId("sig_") };
    return { type: "text", text: block.text };
  });
  const outputText = content
    .map((b) => (b.type === "text" ? b.text : b.type === "thinking" ? b.thinking : JSON.stringify(b.input)))
    .join("");
  return {
    id: randomId("msg_"),
    type: "message",
    role: "assistant",
    model: reply.model ?? requestModel,
    content,
    stop_reason: reply.stopReason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: {
      input_tokens: reply.usage?.input_tokens ?? inputTokens,
      output_tokens: reply.usage?.output_tokens ?? estimateTokens(String(outputText)),
      cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? 0,
    },
  };
}

type SseEvent = [name: string, data: unknown];

function messageStart(message: Message): SseEvent {
  const usage = { ...message.usage, output_tokens: 1 };
  return [
    "message_start",
    { type: "message_start", message: { ...message, content: [], stop_reason: null, usage } },
  ];
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The event sequence the real API streams for `message`. */
export function streamEvents(message: Message, deltaSize = 16): SseEvent[] {
  const events: SseEvent[] = [messageStart(message), ["ping", { type: "ping" }]];
  message.content.forEach((block, index) => {
    const delta = (d: Record<string, unknown>): SseEvent => [
      "content_block_delta",
      { type: "content_block_delta", index, delta: d },
    ];
    if (block.type === "text") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      ]);
      for (const part of pieces(String(block.text), deltaSize))
        events.push(delta({ type: "text_delta", text: part }));
    } else if (block.type === "tool_use") {
      const start = { type: "tool_use", id: block.id, name: block.name, input: {} };
      events.push(["content_block_start", { type: "content_block_start", index, content_block: start }]);
      for (const part of pieces(JSON.stringify(block.input), deltaSize))
        events.push(delta({ type: "input_json_delta", partial_json: part }));
    } else {
      events.push([
        "content_block_start",
        {
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        },
      ]);
      for (const part of pieces(String(block.thinking), deltaSize))
        events.push(delta({ type: "thinking_delta", thinking: part }));
      events.push(delta({ type: "signature_delta", signature: block.signature }));
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events;
}

/** Each event is written as its own chunk, so clients must reassemble the stream as they do live. */
function sse(events: SseEvent[], headers: Record<string, string>): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const [name, data] of events)
        controller.enqueue(encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`));
      controller.close();
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers },
  });
}
