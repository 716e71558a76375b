/**
 * What one project's prelude is built with: its budget (`"prelude": {"tokens": N}` of
 * .triforge/config.json), its present and its pins. The SessionStart hook and `GET /v1/memory/prelude`
 * both call `projectPreludeOptions`, so the page shows the prelude the next session gets.
 * PERF: on the hook path; files are read through Bun.file (no node:fs).
 */
import { configPath } from "../project/config.ts";
import { pinnedSection, readPins } from "./pins.ts";
import { CHARS_PER_TOKEN, PRELUDE_TOKENS, type PreludeOptions } from "./prelude.ts";
import { projectPresent } from "./present.ts";

/**
 * `prelude.tokens` of the project's config, else PRELUDE_TOKENS. A bad value is not fatal here:
 * `status` and `doctor` name it (configProblems).
 */
export async function preludeTokens(root: string): Promise<number> {
  try {
    const tokens = ((await Bun.file(configPath(root)).json()) as { prelude?: { tokens?: unknown } })?.prelude
      ?.tokens;
    return typeof tokens === "number" && Number.isInteger(tokens) && tokens > 0 ? tokens : PRELUDE_TOKENS;
  } catch {
    return PRELUDE_TOKENS;
  }
}

/** The options `preludeContext` is called with for the project at `root`. */
export async function projectPreludeOptions(
  root: string,
): Promise<Required<Omit<PreludeOptions, "replaced">>> {
  // The three reads at once: on the hook path each awaited first file operation costs its own wait.
  const [tokens, present, pins] = await Promise.all([
    preludeTokens(root),
    projectPresent(root),
    readPins(root),
  ]);
  return { budget: tokens * CHARS_PER_TOKEN, present, pinned: pinnedSection(pins) };
}
