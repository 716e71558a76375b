import { homedir } from "node:os";
import type { Outcome } from "./tracked.ts";

/** A path as the user would type it: `~/…` under their home. */
export function displayPath(path: string, home = homedir()): string {
  return home && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
}

const VERB: Record<Outcome["action"], string> = {
  created: "created ",
  updated: "updated ",
  unchanged: "unchanged",
  restored: "restored ",
  removed: "removed ",
  reverted: "cleaned ",
  missing: "missing ",
};

/**
 * One line per file: what happened to it, what it is for, and why when it was not the plain case.
 * `paint` marks the path (the CLI colours it on a terminal).
 */
export function formatOutcomes(
  outcomes: Outcome[],
  home = homedir(),
  paint: (path: string) => string = (path) => path,
): string {
  return outcomes
    .map(
      (o) =>
        `  ${VERB[o.action].padEnd(10)}${paint(displayPath(o.path, home))}${o.purpose ? ` — ${o.purpose}` : ""}${o.note ? `  (${o.note})` : ""}`,
    )
    .join("\n");
}
