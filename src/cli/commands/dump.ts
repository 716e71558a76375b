import { existsSync, readFileSync } from "node:fs";
import { resolveProject } from "../../agents/activate.ts";
import { displayPath } from "../../agents/report.ts";
import { summaryPath } from "../../home/paths.ts";
import { triforgeCommand } from "../../home/shell.ts";
import { configPath } from "../../project/config.ts";
import { defineCommand, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge dump [--project <path>]",
  description: "Prints the project's memory summary (summary.md): one entry per session, newest last.",
  options: {
    project: { type: "string", arg: "path", description: "The project (default: the current directory)" },
  },
  run({ values }) {
    const root = resolveProject(values.project as string | undefined);
    const file = summaryPath(root);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // A memory kept after deactivate still prints; without one, an inactive project needs activate, not index.
      if (!existsSync(configPath(root))) {
        throw new UserError(
          `memory is not active for ${displayPath(root)} (no .triforge/config.json here or above) and nothing is stored for it; run \`${triforgeCommand(["activate", "--project", root])}\` to turn it on`,
        );
      }
      throw new UserError(
        `no summary yet for ${displayPath(root)} (${displayPath(file)} does not exist): memory is written after a session ends, or run \`${triforgeCommand(["index", "--project", root])}\``,
      );
    }
    process.stdout.write(text.endsWith("\n") || text === "" ? text : `${text}\n`);
    return 0;
  },
});
