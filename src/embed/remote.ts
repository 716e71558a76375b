/**
 * An OpenAI-compatible embeddings endpoint (`POST <base>/embeddings`, `{model, input: [...]}` →
 * `{data: [{index, embedding}], model}`), configured as claw-rag-service configures it. Optional: the
 * embedded static model stays the default, and nothing is sent anywhere unless a base URL or a model
 * is named explicitly (an OPENAI_API_KEY set for the LLM chain alone must not ship code to OpenAI).
 */

export interface RemoteEmbeddingConfig {
  /** Without the trailing slash, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
}

export const DEFAULT_REMOTE_BASE_URL = "https://api.openai.com/v1";
export const DEFAULT_REMOTE_MODEL = "text-embedding-3-small";
/** Inputs per request: OpenAI accepts 2,048; smaller batches keep one slow request short. */
export const REMOTE_BATCH = 64;
export const REMOTE_TIMEOUT_MS = 30_000;
/** Attempts per batch: a 429 or 5xx and a network error are retried, with backoff, this many times in all. */
export const REMOTE_ATTEMPTS = 4;
const BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/**
 * `"embedding"` of a project's .triforge/config.json (validated by project/config.ts): the endpoint and
 * model, and the key by the name of the environment variable that holds it (`apiKeyEnv`), so the file,
 * which may be committed, need not hold it; `apiKey` is the key itself, for a user who insists.
 */
export interface EmbeddingSettings {
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  apiKey?: string;
}

/**
 * The remote endpoint claw-rag-service's variables name (CLAW_RAG_EMBEDDING_BASE_URL,
 * CLAW_RAG_EMBEDDING_MODEL), each else the project config's `embedding` setting, or undefined for the
 * embedded model when neither names a base URL or a model. The key: CLAW_RAG_OPENAI_API_KEY, else the
 * variable `apiKeyEnv` names (an error when it is not set: the request would go out without it), else
 * `apiKey`, else OPENAI_API_KEY.
 */
export function remoteEmbeddingConfig(
  env: Record<string, string | undefined> = process.env,
  settings: EmbeddingSettings = {},
): RemoteEmbeddingConfig | undefined {
  const base = env.CLAW_RAG_EMBEDDING_BASE_URL || settings.baseUrl;
  const model = env.CLAW_RAG_EMBEDDING_MODEL || settings.model;
  if (!base && !model) return undefined;
  let apiKey = env.CLAW_RAG_OPENAI_API_KEY;
  if (!apiKey && settings.apiKeyEnv) {
    apiKey = env[settings.apiKeyEnv];
    if (!apiKey)
      throw new RemoteEmbeddingError(
        `embedding.apiKeyEnv in .triforge/config.json names ${settings.apiKeyEnv}, which is not set: set it to the endpoint's key`,
      );
  }
  apiKey ||= settings.apiKey || env.OPENAI_API_KEY;
  return {
    baseUrl: (base || DEFAULT_REMOTE_BASE_URL).replace(/\/+$/, ""),
    model: model || DEFAULT_REMOTE_MODEL,
    ...(apiKey ? { apiKey } : {}),
  };
}

export class RemoteEmbeddingError extends Error {}

export interface EmbedTextsOptions {
  batch?: number;
  timeoutMs?: number;
  attempts?: number;
  /** The first retry's wait; each later one doubles it (a 429's Retry-After wins). */
  backoffMs?: number;
  /** Called after each batch with the texts embedded so far. */
  onProgress?: (done: number, total: number) => void;
  fetch?: typeof fetch;
}

function normalised(values: number[]): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i] * vector[i];
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

function backoff(base: number, attempt: number, response?: Response): number {
  const header = Number(response?.headers.get("retry-after"));
  if (Number.isFinite(header) && header > 0) return Math.min(header * 1000, MAX_BACKOFF_MS);
  return Math.min(base * 2 ** attempt, MAX_BACKOFF_MS);
}

/** One request for one batch, retried on rate limits, server errors, timeouts and network errors. */
async function embedBatch(
  config: RemoteEmbeddingConfig,
  input: string[],
  options: Required<Pick<EmbedTextsOptions, "timeoutMs" | "attempts" | "backoffMs">> & {
    fetch: typeof fetch;
  },
): Promise<Float32Array[]> {
  const url = `${config.baseUrl}/embeddings`;
  let lastError = "";
  for (let attempt = 0; attempt < options.attempts; attempt++) {
    const last = attempt === options.attempts - 1;
    let response: Response;
    try {
      response = await options.fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: config.model, input }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      lastError =
        (error as Error).name === "TimeoutError" ? `no answer in ${options.timeoutMs} ms` : String(error);
      if (!last) await Bun.sleep(backoff(options.backoffMs, attempt));
      continue;
    }
    if (response.status === 429 || response.status >= 500) {
      lastError = `HTTP ${response.status}`;
      await response.body?.cancel();
      if (!last) await Bun.sleep(backoff(options.backoffMs, attempt, response));
      continue;
    }
    const text = await response.text();
    if (!response.ok)
      throw new RemoteEmbeddingError(
        `embeddings endpoint ${url} answered HTTP ${response.status}: ${text.slice(0, 300)}`,
      );
    let parsed: { data?: { index?: number; embedding?: unknown }[] };
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RemoteEmbeddingError(`embeddings endpoint ${url} answered something that is not JSON`);
    }
    const data = parsed.data;
    if (!Array.isArray(data) || data.length !== input.length)
      throw new RemoteEmbeddingError(
        `embeddings endpoint ${url} returned ${Array.isArray(data) ? data.length : "no"} vectors for ${input.length} inputs`,
      );
    const vectors = new Array<Float32Array>(input.length);
    data.forEach((item, position) => {
      const at = typeof item.index === "number" ? item.index : position;
      if (!Array.isArray(item.embedding) || at < 0 || at >= input.length)
        throw new RemoteEmbeddingError(`embeddings endpoint ${url} returned a malformed vector`);
      vectors[at] = normalised(item.embedding as number[]);
    });
    const dim = vectors[0]?.length ?? 0;
    if (vectors.some((v) => !v || v.length !== dim || dim === 0))
      throw new RemoteEmbeddingError(`embeddings endpoint ${url} returned vectors of different lengths`);
    return vectors;
  }
  throw new RemoteEmbeddingError(
    `embeddings endpoint ${url} failed ${options.attempts} times (last: ${lastError}); check CLAW_RAG_EMBEDDING_BASE_URL and the key`,
  );
}

/** L2-normalised vectors of `texts`, in order, `batch` texts per request. */
export async function embedTexts(
  config: RemoteEmbeddingConfig,
  texts: string[],
  options: EmbedTextsOptions = {},
): Promise<Float32Array[]> {
  const batch = Math.max(1, options.batch ?? REMOTE_BATCH);
  const settings = {
    timeoutMs: options.timeoutMs ?? REMOTE_TIMEOUT_MS,
    attempts: Math.max(1, options.attempts ?? REMOTE_ATTEMPTS),
    backoffMs: options.backoffMs ?? BACKOFF_MS,
    fetch: options.fetch ?? fetch,
  };
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += batch) {
    out.push(...(await embedBatch(config, texts.slice(start, start + batch), settings)));
    options.onProgress?.(out.length, texts.length);
  }
  return out;
}
