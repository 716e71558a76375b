import { existsSync, rmSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { resolveProject } from "../../agents/activate.ts";
import { displayPath } from "../../agents/report.ts";
import { indexLockPath, projectDataDir } from "../../home/paths.ts";
import { isLocked } from "../../memory/lock.ts";
import { defineCommand, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge purge [--project <path>] [--yes]",
  description:
    "Deletes the project's stored memory (captured chats, index, graph, summary, error log). Asks first on a terminal; --yes skips the question. The project stays active: new sessions start a fresh memory ('triforge deactivate' turns it off).",
  options: {
    project: { type: "string", arg: "path", description: "The project (default: the current directory)" },
    yes: { type: "boolean", short: "y", description: "Do not ask" },
  },
  async run({ values }) {
    const root = resolveProject(values.project as string | undefined);
    const dir = projectDataDir(root);
    if (!existsSync(dir)) {
      process.stdout.write(`No stored memory for ${displayPath(root)}; nothing to purge.\n`);
      return 0;
    }
    // Deleting under a running indexer would let it write a half store back.
    if (isLocked(indexLockPath(root)))
      throw new UserError("the background indexer is running for this project; try again when it finishes");
    if (!values.yes) {
      if (!process.stdin.isTTY)
        throw new UserError(`refusing to delete ${displayPath(dir)} without confirmation: pass --yes`);
      const prompt = createInterface({ input: process.stdin, output: process.stdout });
      const answer = await prompt.question(
        `Delete all stored memory of ${displayPath(root)} (${displayPath(dir)})? [y/N] `,
      );
      prompt.close();
      if (!/^y(es)?$/i.test(answer.trim())) {
        process.stdout.write("Nothing deleted.\n");
        return 1;
      }
    }
    rmSync(dir, { recursive: true, force: true });
    process.stdout.write(`Purged the memory of ${displayPath(root)} (${displayPath(dir)}).\n`);
    return 0;
  },
});
