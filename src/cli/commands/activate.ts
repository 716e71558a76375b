import { activate, existingProjectDir, resolveProject } from "../../agents/activate.ts";
import { IGNORE_TARGETS, type IgnoreTarget } from "../../agents/git-ignore.ts";
import { launcher } from "../../agents/launcher.ts";
import { describeLlm, describeLlmReport } from "../../agents/llm-report.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
import { storageWarning } from "../../agents/storage.ts";
import { readProjectConfig } from "../../project/config.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";

const STORAGES = ["local", "postgres", "insforge"] as const;

export default defineCommand({
  usage:
    "triforge activate [--project <path>] [--storage local|postgres|insforge] [--ignore-file exclude|gitignore|none]",
  description:
    "Turns memory on in a project (what /rag runs): .triforge/config.json and .gitignore, a section in AGENTS.md (imported from CLAUDE.md when there is one), and Claude Code hooks in .claude/settings.local.json that capture, index and recall. 'triforge deactivate' removes exactly that.",
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
    "ignore-file": {
      type: "string",
      arg: "where",
      default: "exclude",
      description:
        "Keep personal files out of git via .git/info/exclude (only you), the project's .gitignore (only the hooks file: the setup is for the team to commit) or none",
    },
  },
  async run({ values }) {
    const storage = values.storage as string | undefined;
    if (storage !== undefined && !(STORAGES as readonly string[]).includes(storage)) {
      throw new UsageError(`--storage must be one of ${STORAGES.join(", ")}; got '${storage}'`);
    }
    const ignoreFile = values["ignore-file"] as IgnoreTarget;
    if (!IGNORE_TARGETS.includes(ignoreFile))
      throw new UsageError(`--ignore-file must be one of ${IGNORE_TARGETS.join(", ")}; got '${ignoreFile}'`);
    let root: string;
    let result: ReturnType<typeof activate>;
    let warning: string | undefined;
    try {
      // Checked before looking for an enclosing active project: a mistyped path is an error, not that project.
      root = resolveProject(existingProjectDir((values.project as string | undefined) ?? process.cwd()));
      result = activate({
        root,
        launcher: launcher(),
        storage: storage as (typeof STORAGES)[number] | undefined,
        ignoreFile,
      });
      // The config may name the backend without --storage (committed by a teammate): warn from what it says.
      warning = storageWarning(readProjectConfig(root).storage);
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    if (warning) process.stderr.write(`${warning}\n`);
    // What leaves the machine is said at the moment memory is turned on, with how to keep it all local.
    const llm = `LLM: ${describeLlmReport(await describeLlm(readProjectConfig(root)))}.`;
    const changed = result.outcomes.filter((o) => o.action !== "unchanged");
    if (changed.length === 0) {
      process.stdout.write(`Memory activated in ${displayPath(root)} (already; nothing changed).\n${llm}\n`);
      return 0;
    }
    process.stdout.write(
      `Memory activated in ${displayPath(root)}. Wrote:\n${formatOutcomes(changed)}\n${llm}\n`,
    );
    process.stdout.write(
      "Memory is captured from the next Claude Code session on (hooks load when a session starts).\n",
    );
    return 0;
  },
});
