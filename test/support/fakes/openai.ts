/**
 * A fake OpenAI Chat Completions API on 127.0.0.1 (and, with `ollama`, Ollama's OpenAI-compatible server:
 * see ollama.ts). For tests of code that uses the `openai` SDK with `baseURL = <fake.url>/v1`.
 *
 * Wire format, as the real API:
 * - `POST /v1/chat/completions` with JSON `{model, messages: [...], max_tokens | max_completion_tokens,
 *   response_format?, ...}`; needs `Authorization: Bearer <key>` (401 `invalid_api_key` otherwise; with
 *   `apiKey` set it must match). `model` and non-empty `messages` are required (400
 *   `invalid_request_error`). `stream: true` is refused with a 400: nothing here streams chat.
 * - Success: `{id: "chatcmpl-…", object: "chat.completion", created, model, choices: [{index: 0,
 *   message: {role: "assistant", content, refusal: null}, logprobs: null, finish_reason}],
 *   usage: {prompt_tokens, completion_tokens, total_tokens}, system_fingerprint}`.
 * - Errors: the status with `{"error": {"message", "type", "param": null, "code"}}` and scripted headers
 *   (`retry-after`, `retry-after-ms`, `x-should-retry`…).
 *
 * Scripting as in anthropic.ts: `enqueue(...)` (first reply whose `when` accepts the request), `fallback`
 * for an empty queue (default: the text "OK"), `requests` logs everything received.
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

export type ChatReply = (
  | {
      kind: "message";
      content: string;
      finishReason?: "stop" | "length" | "content_filter";
      usage?: { prompt_tokens?: number; completion_tokens?: number };
      model?: string;
    }
  | CommonReply
) &
  ReplyControls;

export function chatReply(
  content: string,
  extra: ReplyControls & {
    usage?: { prompt_tokens?: number; completion_tokens?: number };
    finishReason?: "stop" | "length";
  } = {},
): ChatReply {
  return { kind: "message", content, ...extra };
}

export interface FakeOpenAIOptions {
  /** When set, the Bearer token must be exactly this. */
  apiKey?: string;
  /** Default: chatReply("OK"); null answers 500 for an unscripted request. */
  fallback?: ChatReply | null;
  /**
   * Behave as Ollama: no key needed, `GET /` says "Ollama is running", `GET /api/tags` and `GET /v1/models`
   * list `models`, and a chat request for a model not in the list gets Ollama's 404.
   */
  ollama?: {
    models: string[] /** Delay before the model list answers (probe timeouts). */;
    probeDelayMs?: number;
  };
}

/** `url` is the server root; the OpenAI SDK's baseURL is `${url}/v1`. */
export interface FakeOpenAI extends ScriptedFake<ChatReply> {
  /** Only the `POST /v1/chat/completions` requests, in order. */
  chatRequests(): ReceivedRequest[];
}

const ERROR_TYPES: Record<number, [type: string, code: string | null]> = {
  400: ["invalid_request_error", null],
  401: ["invalid_request_error", "invalid_api_key"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
  500: ["server_error", null],
  503: ["server_error", null],
};

const defaultErrorType = (status: number) =>
  (ERROR_TYPES[status] ?? [status >= 500 ? "server_error" : "invalid_request_error"])[0];
const errorBody = (type: string, message: string) => {
  const code = Object.values(ERROR_TYPES).find(([t]) => t === type)?.[1] ?? null;
  return { error: { message, type, param: null, code } };
};

const ERROR_FORMAT: ErrorFormat = { body: errorBody, defaultType: defaultErrorType };

export function startFakeOpenAI(options: FakeOpenAIOptions = {}): FakeOpenAI {
  const fallback = options.fallback === undefined ? chatReply("OK") : options.fallback;
  const ollama = options.ollama;

  const server: ScriptedServer<ChatReply> = new ScriptedServer(fallback, ERROR_FORMAT, handle);
  async function handle(request: ReceivedRequest, signal: AbortSignal): Promise<Response> {
    const fail = (status: number, message: string, code: string | null = null) =>
      json({ error: { message, type: defaultErrorType(status), param: null, code } }, status);
    if (ollama && request.method === "GET") {
      if (request.path === "/") return new Response("Ollama is running");
      if (request.path === "/api/tags" || request.path === "/v1/models") {
        if (ollama.probeDelayMs) await server.delay(ollama.probeDelayMs, signal);
        if (request.path === "/api/tags") {
          return json({
            models: ollama.models.map((name) => ({
              name,
              model: name,
              modified_at: "2025-06-01T10:00:00.000000000Z",
              size: 1_929_912_432,
              digest: "357c53fb659c5076de1d65ccb0b397446227b71a42be9d1603d46168015c9e4b",
              details: {
                parent_model: "",
                format: "gguf",
                family: "qwen2",
                families: ["qwen2"],
                parameter_size: "3.1B",
                quantization_level: "Q4_K_M",
              },
            })),
          });
        }
        return json({
          object: "list",
          data: ollama.models.map((id) => ({
            id,
            object: "model",
            created: 1_748_772_000,
            owned_by: "library",
          })),
        });
      }
    }
    if (request.method !== "POST" || request.path !== "/v1/chat/completions") {
      return ollama
        ? new Response("404 page not found", { status: 404 })
        : fail(404, `Unknown request URL: ${request.method} ${request.path}.`, "unknown_url");
    }
    if (!ollama) {
      const key = request.headers.authorization?.replace(/^Bearer\s+/i, "");
      if (!key) return fail(401, "You didn't provide an API key.");
      if (options.apiKey !== undefined && key !== options.apiKey)
        return fail(401, "Incorrect API key provided.", "invalid_api_key");
    }
    const body = request.body;
    if (typeof body !== "object" || body === null)
      return fail(400, "We could not parse the JSON body of your request.");
    if (typeof body.model !== "string") return fail(400, "you must provide a model parameter");
    if (!Array.isArray(body.messages) || body.messages.length === 0)
      return fail(400, "'messages' must contain at least one message");
    if (body.stream === true) return fail(400, "fake: streaming chat completions are not implemented");
    if (ollama && !ollama.models.includes(body.model) && !ollama.models.includes(`${body.model}:latest`)) {
      return json(
        {
          error: {
            message: `model "${body.model}" not found, try pulling it first`,
            type: "api_error",
            param: null,
            code: null,
          },
        },
        404,
      );
    }

    const reply = await server.reply(request, signal, () =>
      fail(500, `fake: no scripted reply for request #${server.requests.length}`),
    );
    if (reply instanceof Response) return reply;
    const promptTokens = reply.usage?.prompt_tokens ?? estimateTokens(JSON.stringify(body.messages));
    const completionTokens = reply.usage?.completion_tokens ?? estimateTokens(reply.content);
    return json({
      id: randomId("chatcmpl-"),
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: reply.model ?? body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: reply.content, refusal: null },
          logprobs: null,
          finish_reason: reply.finishReason ?? "stop",
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
      system_fingerprint: ollama ? "fp_ollama" : "fp_fake",
    });
  }

  return { ...server.fake(), chatRequests: () => server.requestsTo("POST", "/v1/chat/completions") };
}
