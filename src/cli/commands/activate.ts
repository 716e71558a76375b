import { activate, existingProjectDir, resolveProject } from "../../agents/activate.ts";
import { launcher } from "../../agents/launcher.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
import { storageWarning } from "../../agents/storage.ts";
import { readProjectConfig } from "../../project/config.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";

const STORAGES = ["local", "postgres", "insforge"] as const;

export default defineCommand({
  usage: "triforge activate [--project <path>] [--storage local|postgres|insforge]",
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
  },
  run({ values }) {
    const storage = values.storage as string | undefined;
    if (storage !== undefined && !(STORAGES as readonly string[]).includes(storage)) {
      throw new UsageError(`--storage must be one of ${STORAGES.join(", ")}; got '${storage}'`);
    }
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
      });
      // The config may name the backend without --storage (committed by a teammate): warn from what it says.
      warning = storageWarning(readProjectConfig(root).storage);
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    if (warning) process.stderr.write(`${warning}\n`);
    const changed = result.outcomes.filter((o) => o.action !== "unchanged");
    if (changed.length === 0) {
      process.stdout.write(`Memory activated in ${displayPath(root)} (already; nothing changed).\n`);
      return 0;
    }
    process.stdout.write(`Memory activated in ${displayPath(root)}. Wrote:\n${formatOutcomes(changed)}\n`);
    process.stdout.write(
      "Memory is captured from the next Claude Code session on (hooks load when a session starts).\n",
    );
    return 0;
  },
});
