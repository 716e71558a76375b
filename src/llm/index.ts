/**
 * The LLM chain: provider choice (Anthropic → OpenAI → Ollama → none), retries, usage counting, and the
 * two jobs the indexer gives an LLM — HippoRAG 2 style OpenIE and per-chunk summaries. See docs/llm.md.
 * Importing this loads no provider SDK; resolveLlm loads only the one it picks.
 */
export { type CacheSlot, cacheKey, InMemoryResultCache, type ResultCache } from "./cache.ts";
export { DEFAULT_MAX_TOKENS, type Llm, type LlmRequest } from "./client.ts";
export { LlmError, LlmOutputError } from "./errors.ts";
export {
  extractOpenIE,
  type OpenIEResult,
  parseOpenIEOutput,
  parseOpenIEResultsFile,
  type StoredOpenIE,
  type StoredPassage,
  type Triple,
  toStoredOpenIE,
} from "./openie.ts";
export {
  chooseLlm,
  DEFAULT_MODELS,
  type LlmChoice,
  ollamaHost,
  PROVIDER_ORDER,
  type ProviderName,
  type ResolveOptions,
  resolveLlm,
} from "./resolve.ts";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.ts";
export { SUMMARY_MAX_WORDS, summarizeChunk } from "./summarize.ts";
export { InMemoryUsageSink, type LlmUsage, type UsageSink, type UsageTotals } from "./usage.ts";
