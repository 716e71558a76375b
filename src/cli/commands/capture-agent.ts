import { logError } from "../../home/log.ts";
import type { HookAgent } from "../../memory/import/history.ts";
import { findProjectRoot, findProjectRootAsync } from "../../project/config.ts";
import { defineCommand } from "../command.ts";

const AGENTS: readonly HookAgent[] = ["codex", "cursor", "opencode"];

/** The active project a payload's folders lie in: Codex `cwd`, Cursor `workspace_roots`. */
function payloadProject(input: Record<string, unknown>): string | undefined {
  const roots = Array.isArray(input.workspace_roots) ? input.workspace_roots : [];
  for (const folder of [input.cwd, ...roots])
    if (typeof folder === "string" && folder) {
      const root = findProjectRoot(folder);
      if (root) return root;
    }
  return undefined;
}

/**
 * The capture hook of Codex (`Stop`), Cursor (`stop`, `sessionEnd`) and OpenCode (the plugin, when a
 * reply ends): reads the session the payload names from the agent's own storage and appends its new
 * prose, redacted, to the project's chats.jsonl; when something was added, starts the background
 * indexer, at a session's end or at most every ten minutes (indexDue). Like every hook it never
 * disturbs the session: failures go to errors.log, exit code 0, nothing on stdout (Codex and Cursor
 * read a hook's stdout as instructions).
 */
export default defineCommand({
  hook: true,
  usage:
    "triforge capture-agent --agent codex|cursor|opencode --project=<path>   (reads the hook's JSON on stdin)",
  description:
    "Capture hook for Codex, Cursor and OpenCode: appends the prose the session added since the last capture, redacted, to the project's chats.jsonl; the background indexer runs at a session's end or at most every ten minutes. Does nothing in a project without .triforge/config.json.",
  options: {
    agent: { type: "string", arg: "name", description: "codex, cursor or opencode" },
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the folder the payload names",
    },
  },
  async run({ values }) {
    let root: string | undefined;
    try {
      const agent = values.agent as HookAgent;
      if (!AGENTS.includes(agent))
        throw new Error(`capture-agent: --agent must be one of ${AGENTS.join(", ")}`);
      const project = typeof values.project === "string" ? values.project : undefined;
      // PERF: an inactive project is decided before stdin is read or anything else loads.
      if (project !== undefined && !(root = await findProjectRootAsync(project))) return 0;
      const raw = (require("node:fs") as typeof import("node:fs")).readFileSync(0, "utf8");
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(raw);
      } catch {
        // Only the size: the payload is unredacted and errors.log is on disk.
        throw new Error(`hook input is not JSON (${raw.length} characters)`);
      }
      if (!input || typeof input !== "object") throw new Error("hook input is not a JSON object");
      if (root === undefined && !(root = payloadProject(input))) return 0;
      // PERF: the readers, the redactor and the chat log load only for an active project.
      const [{ captureHook, catchUpDue, indexDue }, { agentHome }] = await Promise.all([
        import("../../memory/import/history.ts"),
        import("../../memory/import/sessions.ts"),
      ]);
      // A new session has nothing to capture yet; it indexes what the last one left unindexed.
      const due =
        input.hook_event_name === "SessionStart"
          ? catchUpDue(root)
          : (await captureHook(agent, root, input, agentHome())).appended > 0 &&
            indexDue(root, input.hook_event_name === "sessionEnd");
      if (due) {
        (await import("../../memory/background.ts")).startIndexerUnlessRunning(root);
      }
    } catch (error) {
      logError("capture-agent", error, root);
    }
    return 0;
  },
});
