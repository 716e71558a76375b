import {
  activate,
  existingProjectDir,
  HOOK_HOMES,
  type HookHome,
  resolveProject,
} from "../../agents/activate.ts";
import { IGNORE_TARGETS, type IgnoreTarget } from "../../agents/git-ignore.ts";
import { launcher } from "../../agents/launcher.ts";
import { describeLlm, describeLlmReport } from "../../agents/llm-report.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
import { sharedStorageCheck } from "../../agents/storage.ts";
import { readProjectConfig } from "../../project/config.ts";
import { styleFor } from "../style.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";
import { offerImport } from "./import.ts";

const STORAGES = ["local", "postgres", "insforge"] as const;

export default defineCommand({
  usage:
    "triforge activate [--project <path>] [--storage local|postgres|insforge] [--ignore-file exclude|gitignore|none] [--hooks settings|plugin] [--import | --no-import]",
  description:
    "Turns memory on in a project (what /rag runs): .triforge/config.json and .gitignore, a section in AGENTS.md (imported from CLAUDE.md when there is one), and Claude Code hooks in .claude/settings.local.json that capture, index and recall. On a terminal it then offers to import the project's earlier Claude Code, Codex, Cursor and OpenCode sessions ('triforge import'). 'triforge deactivate' removes exactly what activate wrote.",
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "The project root (default: the current directory)",
    },
    storage: {
      type: "string",
      arg: "kind",
      description: "Where the memory is stored: local, postgres or insforge",
    },
    hooks: {
      type: "string",
      arg: "where",
      default: "settings",
      description:
        "Where the capture, index and prelude hooks live: settings (.claude/settings.local.json) or plugin (the triforge Claude Code plugin has them; none are written)",
    },
    "ignore-file": {
      type: "string",
      arg: "where",
      default: "exclude",
      description:
        "Keep personal files out of git via .git/info/exclude (only you), the project's .gitignore (only the hooks file: the setup is for the team to commit) or none",
    },
    import: { type: "boolean", description: "Import the project's earlier sessions without asking" },
    "no-import": { type: "boolean", description: "Neither import earlier sessions nor offer to" },
  },
  async run({ values }) {
    if (values.import && values["no-import"]) throw new UsageError("give --import or --no-import, not both");
    const storage = values.storage as string | undefined;
    if (storage !== undefined && !(STORAGES as readonly string[]).includes(storage)) {
      throw new UsageError(`--storage must be one of ${STORAGES.join(", ")}; got '${storage}'`);
    }
    const hooks = values.hooks as HookHome;
    if (!HOOK_HOMES.includes(hooks))
      throw new UsageError(`--hooks must be one of ${HOOK_HOMES.join(", ")}; got '${hooks}'`);
    const ignoreFile = values["ignore-file"] as IgnoreTarget;
    if (!IGNORE_TARGETS.includes(ignoreFile))
      throw new UsageError(`--ignore-file must be one of ${IGNORE_TARGETS.join(", ")}; got '${ignoreFile}'`);
    let root: string;
    let result: ReturnType<typeof activate>;
    try {
      // Checked before looking for an enclosing active project: a mistyped path is an error, not that project.
      root = resolveProject(existingProjectDir((values.project as string | undefined) ?? process.cwd()));
      result = activate({
        root,
        launcher: launcher(),
        storage: storage as (typeof STORAGES)[number] | undefined,
        ignoreFile,
        hooks,
      });
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    // The config may name the backend without --storage (committed by a teammate): checked from what it says.
    const shared = await sharedStorageCheck(root, readProjectConfig(root));
    if (shared.warning) process.stderr.write(`${shared.warning}\n`);
    // What leaves the machine is said at the moment memory is turned on, with how to keep it all local.
    const llm = `LLM: ${describeLlmReport(await describeLlm(readProjectConfig(root)))}.${await monthSpend(root)}${shared.note ? `\n${shared.note}` : ""}`;
    const changed = result.outcomes.filter((o) => o.action !== "unchanged");
    const history = values.import ? "yes" : values["no-import"] ? "no" : "ask";
    if (changed.length === 0) {
      process.stdout.write(`Memory activated in ${displayPath(root)} (already; nothing changed).\n${llm}\n`);
      // Offered once, by the activation that wrote the files; --import still imports.
      return history === "yes" ? offerImport(root, history) : 0;
    }
    process.stdout.write(
      `Memory activated in ${displayPath(root)}. Wrote:\n${formatOutcomes(changed, undefined, styleFor(process.stdout).path)}\n${llm}\n`,
    );
    process.stdout.write(
      "Memory is captured from the next Claude Code session on (hooks load when a session starts), and from Codex, Cursor and OpenCode sessions where 'triforge install' added their hooks.\n",
    );
    return offerImport(root, history);
  },
});

/** This month's LLM spend of a project that has spent any (an activation run again), as a line of its own. */
async function monthSpend(root: string): Promise<string> {
  const { memoryStatus } = await import("../../memory/status.ts");
  const { formatUsage } = await import("../../agents/status.ts");
  try {
    const usage = (await memoryStatus(root)).llmUsageThisMonth;
    return usage.length ? `\nLLM spend ${new Date().toISOString().slice(0, 7)}: ${formatUsage(usage)}.` : "";
  } catch {
    // Informational only: a store that cannot be read now ('triforge status' says why) must not fail activate.
    return "";
  }
}
