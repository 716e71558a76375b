import type { ProjectConfig } from "../project/config.ts";

/**
 * What leaves the machine, said where the user looks (`activate`, `status`, `doctor`): the LLM the
 * indexer would use now, resolved from `llm` (or TRIFORGE_LLM) and the environment exactly as the
 * indexer resolves it, and where its requests go.
 */
export interface LlmReport {
  /** `auto`, `none` or a provider, and who said so. */
  setting: string;
  settingFrom: "TRIFORGE_LLM" | "config";
  /** The provider and model in use; undefined when none is (everything stays local). */
  provider?: string;
  model?: string;
  /** Where its requests go (host of the API or the local Ollama). */
  destination?: string;
  /** Why each provider tried before the chosen one (or instead of any) was passed over. */
  skipped: { provider: string; reason: string }[];
  /** A setting that names no provider: the indexer stops on it too. */
  error?: string;
}

const DESTINATIONS: Record<string, (env: Record<string, string | undefined>) => string> = {
  anthropic: (env) => env.ANTHROPIC_BASE_URL?.trim() || "https://api.anthropic.com",
  openai: (env) => env.OPENAI_BASE_URL?.trim() || "https://api.openai.com/v1",
  ollama: (env) => env.OLLAMA_HOST?.trim() || "http://127.0.0.1:11434",
};

export async function describeLlm(
  config: Pick<ProjectConfig, "llm"> & Partial<Pick<ProjectConfig, "models" | "exclude">>,
  env: Record<string, string | undefined> = process.env,
): Promise<LlmReport> {
  const fromEnv = env.TRIFORGE_LLM?.trim();
  const setting = fromEnv || config.llm || "auto";
  const base = { setting, settingFrom: fromEnv ? ("TRIFORGE_LLM" as const) : ("config" as const) };
  // PERF: the provider chain (and its SDKs) loads only for the commands that report it.
  const { chooseLlm } = await import("../llm/resolve.ts");
  try {
    const choice = await chooseLlm(config, { env });
    if (!choice.llm) return { ...base, skipped: choice.skipped };
    return {
      ...base,
      provider: choice.llm.provider,
      model: choice.llm.model,
      destination: DESTINATIONS[choice.llm.provider]?.(env),
      skipped: choice.skipped,
    };
  } catch (error) {
    return { ...base, skipped: [], error: (error as Error).message };
  }
}

const SETTING_HELP =
  'to keep everything on this machine, set "llm": "none" in .triforge/config.json (or TRIFORGE_LLM=none)';

/** A skipped provider in a few words: the missing key, or the Ollama that did not answer. */
function shortReason(skip: { provider: string; reason: string }): string {
  if (/ is not set$/.test(skip.reason)) return `no ${skip.reason.replace(/ is not set$/, "")}`;
  const unreachable = /^Ollama at (\S+) is not reachable/.exec(skip.reason);
  return unreachable ? `no Ollama at ${unreachable[1]}` : skip.reason;
}

/** One sentence: what is used, what is sent where, and how to keep everything local. */
export function describeLlmReport(report: LlmReport): string {
  const said =
    report.settingFrom === "TRIFORGE_LLM" ? `TRIFORGE_LLM=${report.setting}` : `llm: ${report.setting}`;
  if (report.error)
    return `${report.error}; nothing is sent until it names a provider (auto, none, anthropic, openai, ollama)`;
  if (report.provider) {
    const local = report.provider === "ollama" ? " (your local server)" : "";
    return `${report.provider} ${report.model} (${said}): redacted excerpts of your conversations go to ${report.destination}${local} at every index; ${SETTING_HELP}`;
  }
  if (report.setting === "none")
    return `none (${said}): nothing leaves this machine; the knowledge graph is built locally`;
  const why = report.skipped.map(shortReason).join(", ");
  if (report.setting !== "auto")
    return `${report.setting} is not usable (${said}: ${why}): nothing leaves this machine until it is; the knowledge graph is built locally`;
  return `none found (${said}: ${why}): nothing leaves this machine; the knowledge graph is built locally. An Anthropic or OpenAI key, or a local Ollama, turns on LLM extraction`;
}
