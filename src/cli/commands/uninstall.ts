import { activatedProjects } from "../../agents/activate.ts";
import { EXTRA_SERVERS, uninstall, uninstallServer } from "../../agents/install.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
import { dataDir } from "../../home/paths.ts";
import { triforgeCommand } from "../../home/shell.ts";
import { styleFor } from "../style.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge uninstall [--only insforge|semble]",
  description:
    "Removes exactly what 'triforge install' added. Files nobody changed since come back byte for byte; in files changed since, only triforge's entries and sections go. Project memories stay in the data directory ('triforge purge' removes a project's). With --only, removes just that server and keeps the rest installed.",
  options: {
    only: {
      type: "string",
      arg: "server",
      description: `Remove only this server install added: ${Object.keys(EXTRA_SERVERS).join(" or ")}`,
    },
  },
  run({ values }) {
    if (values.only !== undefined) return uninstallOnly(String(values.only));
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
    process.stdout.write(
      `triforge uninstalled:\n${formatOutcomes(result.outcomes, undefined, styleFor(process.stdout).path)}\n`,
    );
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

function uninstallOnly(name: string): number {
  if (!Object.hasOwn(EXTRA_SERVERS, name))
    throw new UsageError(
      `--only takes ${Object.keys(EXTRA_SERVERS).join(" or ")} (all of triforge goes with a plain 'triforge uninstall'); got '${name}'`,
    );
  let outcomes: ReturnType<typeof uninstallServer>;
  try {
    outcomes = uninstallServer(name);
  } catch (error) {
    throw new UserError((error as Error).message);
  }
  if (!outcomes) {
    process.stdout.write("triforge is not installed here (no install manifest); nothing to remove.\n");
  } else if (outcomes.length === 0) {
    process.stdout.write(
      `triforge install did not add ${name} here (or it is your own entry); nothing removed.\n`,
    );
  } else {
    process.stdout.write(
      `Removed ${name}:\n${formatOutcomes(outcomes, undefined, styleFor(process.stdout).path)}\nThe rest of triforge stays installed; a later 'triforge install' adds ${name} back${name === "insforge" ? " unless given --without insforge" : " only with --with-semble"}.\n`,
    );
  }
  return 0;
}
