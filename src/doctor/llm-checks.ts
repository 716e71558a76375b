/**
 * doctor's LLM checks: which provider the indexer would use and where that sends redacted excerpts
 * (from the project's config and the environment, as the indexer resolves it; no request is made, so
 * this holds offline), and which LLM calls failed lately, from the project's errors.log.
 */
import { existsSync, readFileSync } from "node:fs";
import { describeLlm, describeLlmReport } from "../agents/llm-report.ts";
import { displayPath } from "../agents/report.ts";
import { recentErrors } from "../agents/status.ts";
import { errorLogPath } from "../home/paths.ts";
import { configPath, DEFAULT_CONFIG, readProjectConfig } from "../project/config.ts";
import type { Check } from "./checks.ts";

/** How far back a failed LLM call still counts as recent. */
const RECENT_MS = 7 * 24 * 3600 * 1000;
/** errors.log contexts the indexer logs LLM failures under (OpenIE, summaries, the secret review, setup). */
const LLM_CONTEXT = /\b(llm|openie)\b/i;

export async function llmChecks(
  root: string,
  env: Record<string, string | undefined> = process.env,
  now = Date.now(),
): Promise<Check[]> {
  let config = DEFAULT_CONFIG;
  try {
    if (existsSync(configPath(root))) config = readProjectConfig(root);
  } catch {
    // The project config check already names what is wrong with the file; the defaults apply meanwhile.
  }
  const report = await describeLlm(config, env);
  const named = report.setting !== "auto" && report.setting !== "none";
  const unusable = Boolean(report.error) || (named && !report.provider);
  const checks: Check[] = [
    {
      name: "LLM",
      ok: !unusable,
      detail: describeLlmReport(report),
      ...(unusable
        ? {
            fix: report.error
              ? `set llm in ${displayPath(configPath(root))} (or TRIFORGE_LLM) to auto, none, anthropic, openai or ollama`
              : `${report.skipped.map((s) => s.reason).join("; ")}; or set llm to auto or none`,
          }
        : {}),
    },
  ];
  const log = errorLogPath(root);
  const failures = existsSync(log)
    ? recentErrors(readFileSync(log, "utf8"), Number.POSITIVE_INFINITY).filter(
        (e) => LLM_CONTEXT.test(e.context) && now - Date.parse(e.ts) < RECENT_MS,
      )
    : [];
  if (failures.length) {
    const last = failures[failures.length - 1];
    checks.push({
      name: "LLM calls",
      ok: false,
      detail: `${failures.length} failed in the last 7 days; the last at ${last.ts}: [${last.context}] ${last.message}`,
      fix: `check the key, the model name and the network (every failure is in ${displayPath(log)}); meanwhile the graph is built locally and those chunks are retried at the next index`,
    });
  } else if (report.provider) {
    checks.push({ name: "LLM calls", ok: true, detail: "none failed in the last 7 days" });
  }
  return checks;
}
