import { LlmError } from "./errors.ts";

/** What a provider adapter throws for a failed request, stripped of SDK specifics. */
export class ProviderFailure extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly headers?: Headers,
    readonly timedOut = false,
  ) {
    super(message);
    this.name = "ProviderFailure";
  }
}

export interface RetryPolicy {
  /** Retries after the first request: 3 means up to 4 requests. */
  retries: number;
  /** First backoff step; each later one doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * The longest Retry-After we wait for. A server asking for longer (an exhausted daily quota) makes us give
   * up at once: the indexer logs it and tries again on its next run instead of idling for minutes.
   */
  maxRetryAfterMs: number;
  /** Injected so tests run the retry path without waiting (and can see the delays asked for). */
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 3,
  baseDelayMs: 1000,
  maxDelayMs: 16_000,
  maxRetryAfterMs: 60_000,
  sleep: (ms) => Bun.sleep(ms),
  random: Math.random,
};

/**
 * Rate limits (429), lock conflicts (409), request timeouts (408), server errors (5xx, 529 overloaded) and
 * network failures are worth another try; anything else (bad key, bad request, unknown model) is not.
 * The providers' `x-should-retry` header overrides our guess, as their own SDKs let it.
 */
export function isRetryable(failure: ProviderFailure): boolean {
  const hint = failure.headers?.get("x-should-retry");
  if (hint === "true") return true;
  if (hint === "false") return false;
  const s = failure.status;
  if (s === undefined) return true;
  return s === 408 || s === 409 || s === 429 || s >= 500;
}

/** Milliseconds from `retry-after-ms` (OpenAI, Anthropic) or `retry-after` (seconds or an HTTP date). */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Number.parseFloat(raw) * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Exponential backoff with "equal jitter": half the step is fixed, half random, so clients that failed
 * together spread out but none retries almost at once.
 */
export function backoffDelay(retryIndex: number, policy: RetryPolicy): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return step / 2 + policy.random() * (step / 2);
}

/** Runs `attempt` until it succeeds, fails for good, or the retries are spent; then throws an LlmError. */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  who: { provider: string; model: string },
): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ProviderFailure)) throw error;
      const attempts = retry + 1;
      const fail = (why: string) =>
        new LlmError(
          `${who.provider} (${who.model}): ${error.message}${why}`,
          who.provider,
          who.model,
          error.status,
          attempts,
        );
      if (!isRetryable(error)) throw fail("");
      if (retry >= policy.retries) throw fail(` — gave up after ${attempts} attempts`);
      const retryAfter = parseRetryAfter(error.headers);
      if (retryAfter !== undefined && retryAfter > policy.maxRetryAfterMs) {
        throw fail(
          ` — the server asks to wait ${Math.ceil(retryAfter / 1000)} s, longer than the ${policy.maxRetryAfterMs / 1000} s we wait; try again later`,
        );
      }
      await policy.sleep(retryAfter ?? backoffDelay(retry, policy));
    }
  }
}
