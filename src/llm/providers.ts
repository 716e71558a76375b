import { ProviderFailure } from "./retry.ts";

/** One request as the providers see it, after redaction. */
export interface ProviderRequest {
  system?: string;
  prompt: string;
  maxTokens: number;
  json: boolean;
}

export interface ProviderReply {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

/** One HTTP request to a provider, no retries (those are ours, see retry.ts); throws ProviderFailure. */
export type Transport = (request: ProviderRequest) => Promise<ProviderReply>;

interface TransportOptions {
  apiKey: string;
  baseURL: string;
  model: string;
  timeoutMs: number;
}

/** Shapes shared by both SDKs' error classes. */
interface SdkErrors {
  APIError: abstract new (...args: never[]) => Error & { status?: number; headers?: Headers };
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

/** Maps an SDK error to a ProviderFailure whose message says what happened, in words. */
function toFailure(
  error: unknown,
  sdk: SdkErrors,
  target: TransportOptions,
  detail: (e: Error) => string,
): ProviderFailure {
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return new ProviderFailure(
      `no answer from ${target.baseURL} within ${target.timeoutMs} ms`,
      undefined,
      undefined,
      true,
    );
  }
  if (error instanceof sdk.APIError && error.status !== undefined) {
    return new ProviderFailure(`HTTP ${error.status} ${detail(error)}`, error.status, error.headers);
  }
  const cause = (error as { cause?: unknown }).cause;
  const why = cause instanceof Error ? cause.message : (error as Error).message;
  return new ProviderFailure(`cannot reach ${target.baseURL}: ${why}`);
}

/** Anthropic Messages API (`POST {baseURL}/v1/messages`). */
export async function anthropicTransport(options: TransportOptions): Promise<Transport> {
  // PERF: the SDK is loaded only when an Anthropic key is configured, and only by the indexer.
  const sdk = await import("@anthropic-ai/sdk");
  const client = new sdk.default({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: 0,
  });
  const detail = (e: Error) => {
    const { type, apiMessage } = e as InstanceType<typeof sdk.APIError>;
    return `${type ?? "error"}: ${apiMessage ?? e.message}`;
  };
  return async (request) => {
    let message: Awaited<ReturnType<typeof client.messages.create>>;
    try {
      message = await client.messages.create({
        model: options.model,
        max_tokens: request.maxTokens,
        ...(request.system ? { system: request.system } : {}),
        messages: [{ role: "user", content: request.prompt }],
        stream: false,
      });
    } catch (error) {
      throw toFailure(error, sdk, options, detail);
    }
    const text = (message.content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("");
    const usage = message.usage;
    return {
      text,
      // Cached prompt tokens are still input the project paid for (at another rate).
      inputTokens:
        (usage?.input_tokens ?? 0) +
        (usage?.cache_creation_input_tokens ?? 0) +
        (usage?.cache_read_input_tokens ?? 0),
      outputTokens: usage?.output_tokens ?? 0,
    };
  };
}

/**
 * OpenAI Chat Completions (`POST {baseURL}/chat/completions`), also used for Ollama's OpenAI-compatible
 * endpoint. `flavour` picks the few parameters the two servers disagree on.
 */
export async function openAiTransport(
  options: TransportOptions & { flavour: "openai" | "ollama" },
): Promise<Transport> {
  // PERF: loaded only when an OpenAI key or a live Ollama is found, and only by the indexer.
  const sdk = await import("openai");
  const client = new sdk.default({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: 0,
    // Only what the caller's environment says; the SDK would otherwise read process.env itself.
    organization: null,
    project: null,
  });
  const detail = (e: Error) => {
    const { type, code } = e as InstanceType<typeof sdk.APIError>;
    return `${code ?? type ?? "error"}: ${e.message.replace(/^\d{3}\s+/, "")}`;
  };
  const isOllama = options.flavour === "ollama";
  return async (request) => {
    let completion: Awaited<ReturnType<typeof client.chat.completions.create>>;
    try {
      completion = await client.chat.completions.create({
        model: options.model,
        messages: [
          ...(request.system ? [{ role: "system" as const, content: request.system }] : []),
          { role: "user" as const, content: request.prompt },
        ],
        // OpenAI's reasoning models accept only max_completion_tokens and reject a temperature; Ollama's
        // compatibility layer knows max_tokens, and its small models follow a format better at 0.
        ...(isOllama
          ? { max_tokens: request.maxTokens, temperature: 0 }
          : { max_completion_tokens: request.maxTokens }),
        ...(request.json ? { response_format: { type: "json_object" as const } } : {}),
        stream: false,
      });
    } catch (error) {
      throw toFailure(error, sdk, options, detail);
    }
    return {
      text: completion.choices?.[0]?.message?.content ?? "",
      inputTokens: completion.usage?.prompt_tokens ?? 0,
      outputTokens: completion.usage?.completion_tokens ?? 0,
    };
  };
}
