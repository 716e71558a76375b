/**
 * The LLM chain: provider choice (Anthropic → OpenAI → Ollama → none), retries, usage counting, and the
 * two jobs the indexer gives an LLM — HippoRAG 2 style OpenIE and per-chunk summaries. See docs/llm.md.
 * Importing this loads no provider SDK; resolveLlm loads only the one it picks.
 */
export { type ResultCache, type CacheSlot, InMemoryResultCache, cacheKey } from "./cache.ts";
export { type Llm, type LlmRequest, DEFAULT_MAX_TOKENS } from "./client.ts";
export { LlmError, LlmOutputError } from "./errors.ts";
export {
  type OpenIEResult,
  type StoredOpenIE,
  type Triple,
  extractOpenIE,
  parseOpenIEOutput,
  parseOpenIEResultsFile,
  type StoredPassage,
  toStoredOpenIE,
} from "./openie.ts";
export {
  type LlmChoice,
  type ProviderName,
  type ResolveOptions,
  DEFAULT_MODELS,
  PROVIDER_ORDER,
  chooseLlm,
  ollamaHost,
  resolveLlm,
} from "./resolve.ts";
export { type RetryPolicy, DEFAULT_RETRY_POLICY } from "./retry.ts";
export { SUMMARY_MAX_WORDS, summarizeChunk } from "./summary.ts";
export { type LlmUsage, type UsageSink, type UsageTotals, InMemoryUsageSink } from "./usage.ts";
