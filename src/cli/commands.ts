import type { Command } from "./command.ts";

/**
 * The command table. Each entry loads its module lazily so that a hook invocation
 * (`capture`, `prelude`) pays only for the code it runs.
 * PERF: keep this file free of imports other than types; it is on every start-up path.
 */
export const commands: Record<string, { summary: string; load: () => Promise<{ default: Command }> }> = {
  embed: { summary: "Embed text with the built-in static model", load: () => import("./commands/embed.ts") },
  prelude: { summary: "SessionStart hook: inject the newest session summaries as recalled data", load: () => import("./commands/prelude.ts") },
  serve: { summary: "Run the MCP server on stdio (rag_search, memory_status, code_search, find_related)", load: () => import("./commands/serve.ts") },
  search: { summary: "Search a repository's code by meaning and identifiers", load: () => import("./commands/search.ts") },
  "find-related": { summary: "Find code similar to a file and line", load: () => import("./commands/find-related.ts") },
  "code-index": { summary: "Build or refresh a repository's code-search index", load: () => import("./commands/code-index.ts") },
  capture: { summary: "Stop hook: append the session's new prose, redacted, to the project's chat log", load: () => import("./commands/capture.ts") },
  redact: { summary: "Print standard input as it would be stored: secrets and personal data redacted", load: () => import("./commands/redact.ts") },
  index: { summary: "Build the project's memory from its chat log (SessionEnd hook: --background)", load: () => import("./commands/index.ts") },
  recall: { summary: "Search the project's memory of earlier sessions", load: () => import("./commands/recall.ts") },
  forget: { summary: "Remove one session from the project's memory", load: () => import("./commands/forget.ts") },
  doctor: { summary: "Check the installation and print a fix for each problem", load: () => import("./commands/doctor.ts") },
  install: { summary: "Wire triforge into Claude Code (and Codex, Cursor, OpenCode)", load: () => import("./commands/install.ts") },
  uninstall: { summary: "Remove exactly what install added", load: () => import("./commands/uninstall.ts") },
  activate: { summary: "Turn memory on in a project (what /rag runs)", load: () => import("./commands/activate.ts") },
  deactivate: { summary: "Turn memory off in a project, removing what activate wrote", load: () => import("./commands/deactivate.ts") },
  status: { summary: "Show a project's memory: size, graph, last index, LLM spend, errors", load: () => import("./commands/status.ts") },
  dump: { summary: "Print the project's memory summary", load: () => import("./commands/dump.ts") },
  purge: { summary: "Delete the project's stored memory", load: () => import("./commands/purge.ts") },
  update: { summary: "Update this binary to the newest verified release", load: () => import("./commands/update.ts") },
};
