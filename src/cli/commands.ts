import type { Command } from "./command.ts";

/** Help lists commands by group, in this order. */
export type CommandGroup = "Set up" | "Code search" | "Memory" | "Hooks and servers" | "Tools";

/**
 * The command table. Each entry loads its module lazily so that a hook invocation
 * (`capture`, `prelude`) pays only for the code it runs.
 * PERF: keep this file free of imports other than types; it is on every start-up path.
 */
export const commands: Record<
  string,
  { group: CommandGroup; summary: string; load: () => Promise<{ default: Command }> }
> = {
  install: {
    group: "Set up",
    summary: "Wire triforge into Claude Code (and Codex, Cursor, OpenCode)",
    load: () => import("./commands/install.ts"),
  },
  uninstall: {
    group: "Set up",
    summary: "Remove exactly what install added",
    load: () => import("./commands/uninstall.ts"),
  },
  activate: {
    group: "Set up",
    summary: "Turn memory on in a project (what /rag runs)",
    load: () => import("./commands/activate.ts"),
  },
  deactivate: {
    group: "Set up",
    summary: "Turn memory off in a project, removing what activate wrote",
    load: () => import("./commands/deactivate.ts"),
  },
  doctor: {
    group: "Set up",
    summary: "Check the installation and print a fix for each problem",
    load: () => import("./commands/doctor.ts"),
  },
  update: {
    group: "Set up",
    summary: "Update this binary to the newest verified release",
    load: () => import("./commands/update.ts"),
  },
  search: {
    group: "Code search",
    summary: "Search a repository's code by meaning and identifiers",
    load: () => import("./commands/search.ts"),
  },
  "find-related": {
    group: "Code search",
    summary: "Find code similar to a file and line",
    load: () => import("./commands/find-related.ts"),
  },
  "code-index": {
    group: "Code search",
    summary: "Build or refresh a repository's code-search index",
    load: () => import("./commands/code-index.ts"),
  },
  recall: {
    group: "Memory",
    summary: "Search the project's memory of earlier sessions",
    load: () => import("./commands/recall.ts"),
  },
  status: {
    group: "Memory",
    summary: "Show a project's memory: size, graph, last index, LLM spend, errors",
    load: () => import("./commands/status.ts"),
  },
  dump: {
    group: "Memory",
    summary: "Print the project's memory summary",
    load: () => import("./commands/dump.ts"),
  },
  index: {
    group: "Memory",
    summary: "Build the project's memory from its chat log (SessionEnd hook: --background)",
    load: () => import("./commands/index.ts"),
  },
  import: {
    group: "Memory",
    summary: "Add the project's past Claude Code, Codex, Cursor and OpenCode sessions to its memory",
    load: () => import("./commands/import.ts"),
  },
  forget: {
    group: "Memory",
    summary: "Remove one session from the project's memory",
    load: () => import("./commands/forget.ts"),
  },
  migrate: {
    group: "Memory",
    summary: "Copy a project's memory to another storage backend (local, postgres), verified",
    load: () => import("./commands/migrate.ts"),
  },
  purge: {
    group: "Memory",
    summary: "Delete the project's stored memory",
    load: () => import("./commands/purge.ts"),
  },
  serve: {
    group: "Hooks and servers",
    summary:
      "Run the MCP server on stdio (rag_search, memory_status, code_search, find_related); --http: the RAG API and web page",
    load: () => import("./commands/serve.ts"),
  },
  ingest: {
    group: "Hooks and servers",
    summary: "Index workspaces for the HTTP RAG service (serve --http), as claw-rag-service's ingest",
    load: () => import("./commands/ingest.ts"),
  },
  prelude: {
    group: "Hooks and servers",
    summary: "SessionStart hook: inject the newest session summaries as recalled data",
    load: () => import("./commands/prelude.ts"),
  },
  capture: {
    group: "Hooks and servers",
    summary: "Stop hook: append the session's new prose, redacted, to the project's chat log",
    load: () => import("./commands/capture.ts"),
  },
  "capture-agent": {
    group: "Hooks and servers",
    summary: "Codex, Cursor and OpenCode capture hook: append the session's new prose to the chat log",
    load: () => import("./commands/capture-agent.ts"),
  },
  redact: {
    group: "Tools",
    summary: "Print standard input as it would be stored: secrets and personal data redacted",
    load: () => import("./commands/redact.ts"),
  },
  embed: {
    group: "Tools",
    summary: "Embed text with the built-in static model",
    load: () => import("./commands/embed.ts"),
  },
};
