import { activatedProjects } from "../../agents/activate.ts";
import { uninstall } from "../../agents/install.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
import { dataDir } from "../../home/paths.ts";
import { triforgeCommand } from "../../home/shell.ts";
import { defineCommand, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge uninstall",
  description:
    "Removes exactly what 'triforge install' added. Files nobody changed since come back byte for byte; in files changed since, only triforge's entries and sections go. Project memories stay in the data directory ('triforge purge' removes a project's).",
  run() {
    let result: ReturnType<typeof uninstall>;
    try {
      result = uninstall();
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    if (!result) {
      process.stdout.write("triforge is not installed here (no install manifest); nothing to remove.\n");
      return 0;
    }
    process.stdout.write(`triforge uninstalled:\n${formatOutcomes(result.outcomes)}\n`);
    // Project hooks are the projects' own files: listed, not touched (deactivate takes them out).
    const projects = activatedProjects();
    if (projects.length) {
      process.stdout.write(
        `Memory is still active in ${projects.length} project(s); their hooks call this binary:\n`,
      );
      for (const project of projects)
        process.stdout.write(`  ${triforgeCommand(["deactivate", "--project", project])}\n`);
    }
    if (result.dataDirKept) process.stdout.write(`Project memories remain in ${displayPath(dataDir())}.\n`);
    return 0;
  },
});
