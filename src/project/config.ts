import { dirname, join, resolve } from "node:path";

/**
 * PERF: node:fs costs ~1.2 ms of start-up in the compiled binary, and the hooks import this module:
 * it is loaded only by the functions that need it, and the hooks use findProjectRootAsync (Bun.file).
 */
function fs(): typeof import("node:fs") {
  return require("node:fs");
}

/** `.triforge/config.json`: its presence is what makes a project active. */
export interface ProjectConfig {
  storage: "local" | "postgres" | "insforge";
  /** `auto` tries Anthropic → OpenAI → Ollama → none (see src/llm). */
  llm: "auto" | "anthropic" | "openai" | "ollama" | "none";
  /** Extra literal strings or /regex/ to redact, beside `.triforge/exclude.txt`. */
  exclude: string[];
  /** Optional model names per provider, e.g. {"anthropic": "claude-haiku-4-5"}. */
  models?: Partial<Record<"anthropic" | "openai" | "ollama", string>>;
  /** The SessionStart prelude's budget in tokens (default 800, src/memory/prelude.ts). */
  prelude?: { tokens?: number };
  /** An OpenAI-compatible embeddings endpoint for `ingest` and `serve --http` (src/embed/remote.ts). */
  embedding?: { baseUrl?: string; model?: string; apiKeyEnv?: string; apiKey?: string };
}

export const DEFAULT_CONFIG: ProjectConfig = { storage: "local", llm: "auto", exclude: [] };

/** The storage backends a config may name; those this version lacks fall back to local (agents/storage.ts). */
const STORAGE_SETTINGS: readonly string[] = ["local", "postgres", "insforge"];

/**
 * What is wrong with a config's values, one `key is X, expected Y` each. The hooks fail open on a bad
 * value (logged to errors.log), so `status` and `doctor` say it, or a project would quietly run without,
 * e.g., its LLM. `llmSettings` comes from the caller: src/llm is not loaded just to list its names.
 */
export function configProblems(config: ProjectConfig, llmSettings: readonly string[]): string[] {
  const problems: string[] = [];
  const shown = (value: unknown) => JSON.stringify(value) ?? String(value);
  const exclude: unknown = config.exclude;
  if (!llmSettings.includes(config.llm))
    problems.push(`llm is ${shown(config.llm)}, expected one of ${llmSettings.join(", ")}`);
  if (!STORAGE_SETTINGS.includes(config.storage))
    problems.push(`storage is ${shown(config.storage)}, expected one of ${STORAGE_SETTINGS.join(", ")}`);
  if (!Array.isArray(exclude) || exclude.some((rule) => typeof rule !== "string"))
    problems.push(`exclude is ${shown(exclude)}, expected a list of strings`);
  const tokens: unknown = config.prelude?.tokens;
  if (tokens !== undefined && !(typeof tokens === "number" && Number.isInteger(tokens) && tokens > 0))
    problems.push(`prelude.tokens is ${shown(tokens)}, expected a positive whole number`);
  if (config.embedding !== undefined) problems.push(...embeddingProblems(config.embedding));
  return problems;
}

const EMBEDDING_KEYS = ["baseUrl", "model", "apiKeyEnv", "apiKey"];

/** What is wrong with a config's `embedding` (src/embed/remote.ts reads it), one problem a key. */
export function embeddingProblems(embedding: unknown): string[] {
  const shown = (value: unknown) => JSON.stringify(value) ?? String(value);
  if (typeof embedding !== "object" || embedding === null || Array.isArray(embedding))
    return [
      `embedding is ${shown(embedding)}, expected an object such as {"baseUrl": …, "model": …, "apiKeyEnv": …}`,
    ];
  const problems: string[] = [];
  const { baseUrl, model, apiKeyEnv, apiKey } = embedding as Record<string, unknown>;
  for (const key of Object.keys(embedding))
    if (!EMBEDDING_KEYS.includes(key))
      problems.push(`embedding.${key} is not a setting, expected one of ${EMBEDDING_KEYS.join(", ")}`);
  if (baseUrl !== undefined && !(typeof baseUrl === "string" && /^https?:\/\/[^/\s]+/.test(baseUrl)))
    problems.push(`embedding.baseUrl is ${shown(baseUrl)}, expected an http:// or https:// address`);
  if (model !== undefined && !(typeof model === "string" && model.trim() !== ""))
    problems.push(`embedding.model is ${shown(model)}, expected a model name`);
  if (
    apiKeyEnv !== undefined &&
    !(typeof apiKeyEnv === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnv))
  )
    problems.push(`embedding.apiKeyEnv is ${shown(apiKeyEnv)}, expected the name of an environment variable`);
  // The key's value is never repeated in a message: status and doctor print these.
  if (apiKey !== undefined && !(typeof apiKey === "string" && apiKey !== ""))
    problems.push("embedding.apiKey is not a non-empty string");
  return problems;
}

export function configPath(projectRoot: string): string {
  return join(projectRoot, ".triforge", "config.json");
}

/**
 * The nearest folder at or above `start` that holds `.triforge/config.json`, or undefined when the
 * project is not active. Hooks may run from a subfolder of the project.
 */
export function findProjectRoot(start: string): string | undefined {
  const { existsSync } = fs();
  for (const dir of foldersUpFrom(start)) if (existsSync(configPath(dir))) return dir;
  return undefined;
}

/** findProjectRoot for the hooks: Bun.file needs no node:fs (see fs()). */
export async function findProjectRootAsync(start: string): Promise<string | undefined> {
  for (const dir of foldersUpFrom(start)) if (await Bun.file(configPath(dir)).exists()) return dir;
  return undefined;
}

function* foldersUpFrom(start: string): Generator<string> {
  let dir = resolve(start);
  for (;;) {
    yield dir;
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

/** Reads the project's config, filling defaults; a malformed file is an error that names the file. */
export function readProjectConfig(projectRoot: string): ProjectConfig {
  const file = configPath(projectRoot);
  let raw: unknown;
  try {
    raw = JSON.parse(fs().readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new Error(`${file}: expected a JSON object`);
  return { ...DEFAULT_CONFIG, ...(raw as Partial<ProjectConfig>) };
}
