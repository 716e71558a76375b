import { existsSync } from "node:fs";
import { join } from "node:path";
import { deactivate, resolveProject } from "../../agents/activate.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
import { styleFor } from "../style.ts";
import { defineCommand, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge deactivate [--project <path>]",
  description:
    "Turns memory off in a project: removes exactly what 'triforge activate' wrote (hooks, AGENTS.md section, .triforge/). The stored memory stays ('triforge purge' removes it).",
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "The project root (default: the current directory)",
    },
  },
  run({ values }) {
    const root = resolveProject(values.project as string | undefined);
    let outcomes: ReturnType<typeof deactivate>;
    try {
      outcomes = deactivate(root);
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    if (!outcomes) {
      const config = join(root, ".triforge", "config.json");
      const hint = existsSync(config)
        ? ` ${displayPath(config)} was not written by 'triforge activate' here; delete it to turn memory off.`
        : "";
      process.stdout.write(
        `Memory was not activated in ${displayPath(root)} by triforge; nothing to remove.${hint}\n`,
      );
      return 0;
    }
    process.stdout.write(
      `Memory deactivated in ${displayPath(root)}:\n${formatOutcomes(outcomes, undefined, styleFor(process.stdout).path)}\n`,
    );
    return 0;
  },
});
