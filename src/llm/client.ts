import { logError } from "../home/log.ts";
import { redact } from "../privacy/index.ts";
import type { Transport } from "./providers.ts";
import { type RetryPolicy, withRetries } from "./retry.ts";
import type { UsageSink } from "./usage.ts";

export interface LlmRequest {
  system?: string;
  prompt: string;
  /** Upper bound on the reply; defaults to DEFAULT_MAX_TOKENS. */
  maxTokens?: number;
  /** Ask for one JSON object (the provider's JSON mode where it has one). The reply is still text to parse. */
  json?: boolean;
}

/** A provider and model ready to answer; see resolveLlm. */
export interface Llm {
  provider: string;
  model: string;
  complete(request: LlmRequest): Promise<string>;
}

/** Enough for a summary or an entity list; callers that need more say so. */
export const DEFAULT_MAX_TOKENS = 1024;

/**
 * OpenAI's JSON mode refuses a request whose messages never say "JSON", and Anthropic has no JSON mode:
 * one sentence serves both.
 */
const JSON_INSTRUCTION = "Reply with a single JSON object and nothing else.";

export interface LlmOptions {
  usage?: UsageSink;
  retry: RetryPolicy;
  /** The project whose redaction rules apply and whose errors.log gets usage-recording failures. */
  projectRoot?: string;
  /** Extra redaction rules (the config's `exclude`). */
  exclude?: string[];
}

/**
 * Wraps one transport with what every call needs: redaction, retries, usage counting.
 *
 * Privacy: `complete` itself redacts the system text and the prompt, so no caller can send unredacted
 * text by mistake. The indexer's input was already redacted at capture; this is the last line of defence
 * (for rules added since, or text from elsewhere), and it runs for Ollama too, which may be remote.
 */
export function makeLlm(provider: string, model: string, transport: Transport, options: LlmOptions): Llm {
  const redactOptions = { projectRoot: options.projectRoot, extraRules: options.exclude };
  const clean = (text: string) => redact(text, redactOptions).text;
  return {
    provider,
    model,
    async complete(request) {
      if (typeof request.prompt !== "string" || request.prompt.trim() === "") {
        throw new TypeError(`${provider} (${model}): complete() needs a non-empty prompt`);
      }
      const system = request.json
        ? [request.system, JSON_INSTRUCTION].filter(Boolean).join("\n\n")
        : request.system;
      const outgoing = {
        system: system ? clean(system) : undefined,
        prompt: clean(request.prompt),
        maxTokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
        json: request.json ?? false,
      };
      const reply = await withRetries(() => transport(outgoing), options.retry, { provider, model });
      try {
        options.usage?.record({
          provider,
          model,
          inputTokens: reply.inputTokens,
          outputTokens: reply.outputTokens,
        });
      } catch (error) {
        // The answer is paid for and good; losing one count must not lose it.
        logError("llm usage", error, options.projectRoot);
      }
      return reply.text;
    },
  };
}
