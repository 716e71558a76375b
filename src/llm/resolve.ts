import type { ProjectConfig } from "../project/config.ts";
import { type Llm, makeLlm } from "./client.ts";
import { anthropicTransport, openAiTransport, type Transport } from "./providers.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.ts";
import type { UsageSink } from "./usage.ts";

export type ProviderName = "anthropic" | "openai" | "ollama";

/** `auto` tries them in this order: the paid APIs first, as a key there is a deliberate choice. */
export const PROVIDER_ORDER: readonly ProviderName[] = ["anthropic", "openai", "ollama"];

/** Small, cheap models: extraction and summaries need little reasoning, and run once per chunk. */
export const DEFAULT_MODELS: Record<ProviderName, string> = {
  anthropic: "claude-haiku-4-5",
  openai: "gpt-4o-mini",
  ollama: "qwen2.5:3b",
};

/** Per-request limit: a summary or an entity list takes seconds; a minute means the server is stuck. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** A local Ollama answers its model list in a few ms; the indexer must not wait on a missing one. */
export const DEFAULT_PROBE_TIMEOUT_MS = 300;

const MODEL_ENV: Record<ProviderName, string> = {
  anthropic: "TRIFORGE_ANTHROPIC_MODEL",
  openai: "TRIFORGE_OPENAI_MODEL",
  ollama: "TRIFORGE_OLLAMA_MODEL",
};

/** What `llm` in the config (or TRIFORGE_LLM) may say; doctor checks the config against it too. */
export const LLM_SETTINGS = ["auto", "none", ...PROVIDER_ORDER] as const;

export interface ResolveOptions {
  /** Environment to read keys, base URLs and model overrides from; defaults to process.env. */
  env?: Record<string, string | undefined>;
  usage?: UsageSink;
  /** The project whose redaction rules apply to every prompt, and whose errors.log gets usage failures. */
  projectRoot?: string;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
  probeTimeoutMs?: number;
}

export interface LlmChoice {
  llm: Llm | null;
  /** Why each provider tried before (or instead of) the chosen one was passed over, for doctor/status. */
  skipped: { provider: ProviderName; reason: string }[];
}

type Config = Pick<ProjectConfig, "llm"> & Partial<Pick<ProjectConfig, "models" | "exclude">>;

/**
 * The LLM the project's config asks for, or null when none is usable (the indexer then uses its local
 * extractor). `TRIFORGE_LLM` overrides the config's `llm`; `TRIFORGE_<PROVIDER>_MODEL` overrides
 * `models.<provider>`. Throws only for a setting that names no provider (a typo the user must see).
 */
export async function resolveLlm(config: Config, options: ResolveOptions = {}): Promise<Llm | null> {
  return (await chooseLlm(config, options)).llm;
}

/** resolveLlm, plus the reason each skipped provider was skipped. */
export async function chooseLlm(config: Config, options: ResolveOptions = {}): Promise<LlmChoice> {
  const env = options.env ?? process.env;
  const setting = nonEmpty(env.TRIFORGE_LLM) ?? config.llm ?? "auto";
  if (!(LLM_SETTINGS as readonly string[]).includes(setting)) {
    const source = nonEmpty(env.TRIFORGE_LLM) ? "TRIFORGE_LLM" : "config llm";
    throw new Error(`${source} is "${setting}": expected one of ${LLM_SETTINGS.join(", ")}`);
  }
  const skipped: LlmChoice["skipped"] = [];
  if (setting === "none") return { llm: null, skipped };
  const candidates = setting === "auto" ? PROVIDER_ORDER : [setting as ProviderName];
  const retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  for (const provider of candidates) {
    const model =
      nonEmpty(env[MODEL_ENV[provider]]) ?? nonEmpty(config.models?.[provider]) ?? DEFAULT_MODELS[provider];
    const found = await connect(provider, model, env, options);
    if (typeof found === "string") {
      skipped.push({ provider, reason: found });
      continue;
    }
    const llm = makeLlm(provider, model, found, {
      usage: options.usage,
      retry,
      projectRoot: options.projectRoot,
      exclude: config.exclude,
    });
    return { llm, skipped };
  }
  return { llm: null, skipped };
}

/** A transport for the provider, or the reason there is none. */
async function connect(
  provider: ProviderName,
  model: string,
  env: Record<string, string | undefined>,
  options: ResolveOptions,
): Promise<Transport | string> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  switch (provider) {
    case "anthropic": {
      const apiKey = nonEmpty(env.ANTHROPIC_API_KEY);
      if (!apiKey) return "ANTHROPIC_API_KEY is not set";
      const baseURL = nonEmpty(env.ANTHROPIC_BASE_URL) ?? "https://api.anthropic.com";
      return anthropicTransport({ apiKey, baseURL, model, timeoutMs });
    }
    case "openai": {
      const apiKey = nonEmpty(env.OPENAI_API_KEY);
      if (!apiKey) return "OPENAI_API_KEY is not set";
      const baseURL = nonEmpty(env.OPENAI_BASE_URL) ?? "https://api.openai.com/v1";
      return openAiTransport({ apiKey, baseURL, model, timeoutMs, flavour: "openai" });
    }
    case "ollama": {
      const host = ollamaHost(env.OLLAMA_HOST);
      const probe = await probeOllama(host, options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
      if (typeof probe === "string") return probe;
      if (!probe.some((name) => sameOllamaModel(name, model))) {
        return probe.length === 0
          ? `Ollama at ${host} has no models; run: ollama pull ${model}`
          : `Ollama at ${host} lacks ${model} (has ${probe.slice(0, 5).join(", ")}); run: ollama pull ${model}, or set models.ollama`;
      }
      // Ollama ignores the key, the SDK insists on one.
      return openAiTransport({
        apiKey: "ollama",
        baseURL: `${host}/v1`,
        model,
        timeoutMs,
        flavour: "ollama",
      });
    }
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

/**
 * The base URL for `OLLAMA_HOST`, read as Ollama's own client reads it: a bare `host[:port]` means http
 * on port 11434, an explicit scheme without a port means 80/443, and the listen-everywhere address
 * 0.0.0.0 means this machine.
 */
export function ollamaHost(value: string | undefined): string {
  const raw = nonEmpty(value) ?? "";
  const schemeMatch = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw);
  const scheme = schemeMatch ? schemeMatch[1].toLowerCase() : "http";
  const rest = schemeMatch ? raw.slice(schemeMatch[0].length) : raw;
  const slash = rest.indexOf("/");
  const hostPort = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash).replace(/\/+$/, "");
  const defaultPort = !schemeMatch ? "11434" : scheme === "https" ? "443" : "80";
  const portMatch = /^(.*):(\d+)$/.exec(hostPort);
  let host = portMatch ? portMatch[1] : hostPort;
  const port = portMatch ? portMatch[2] : defaultPort;
  if (host === "" || host === "0.0.0.0") host = "127.0.0.1";
  if (host === "[::]") host = "[::1]";
  return `${scheme}://${host}:${port}${path}`;
}

/** The names of the models Ollama has, or why it cannot be used. */
async function probeOllama(host: string, timeoutMs: number): Promise<string[] | string> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const tags = await fetch(`${host}/api/tags`, { signal });
    if (tags.ok) {
      const body = (await tags.json()) as { models?: { name?: unknown; model?: unknown }[] };
      return (body.models ?? []).map((m) => String(m.name ?? m.model ?? "")).filter(Boolean);
    }
    // Servers that only speak the OpenAI dialect (LM Studio, llama.cpp) list their models here instead.
    const models = await fetch(`${host}/v1/models`, { signal });
    if (models.ok) {
      const body = (await models.json()) as { data?: { id?: unknown }[] };
      return (body.data ?? []).map((m) => String(m.id ?? "")).filter(Boolean);
    }
    return `Ollama at ${host} answered HTTP ${models.status}`;
  } catch (error) {
    const why =
      (error as Error).name === "TimeoutError"
        ? `no answer within ${timeoutMs} ms`
        : (error as Error).message;
    return `Ollama at ${host} is not reachable: ${why}`;
  }
}

/** `llama3.2` and `llama3.2:latest` name the same Ollama model. */
function sameOllamaModel(a: string, b: string): boolean {
  const full = (name: string) => (name.includes(":") ? name : `${name}:latest`);
  return full(a) === full(b);
}
