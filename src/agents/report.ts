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

/** One line per file: what happened to it, what it is for, and why when it was not the plain case. */
export function formatOutcomes(outcomes: Outcome[], home = homedir()): string {
  return outcomes
    .map(
      (o) =>
        `  ${VERB[o.action].padEnd(10)}${displayPath(o.path, home)}${o.purpose ? ` — ${o.purpose}` : ""}${o.note ? `  (${o.note})` : ""}`,
    )
    .join("\n");
}
