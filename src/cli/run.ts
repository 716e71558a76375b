// PERF: console.* rather than process.stdout/stderr, which cost milliseconds to open (see src/index.ts).
import { type Command, helpText, parseCommandArgs, UsageError, UserError } from "./command.ts";

/** Parses a command's arguments, runs it and maps failures to exit codes (2 usage, 1 error). */
export async function runCommand(name: string, command: Command, argv: string[]): Promise<number> {
  if (command.hook) {
    try {
      return await runParsed(name, command, argv);
    } catch (error) {
      // Fail open: a hook never breaks the user's session, whatever went wrong.
      const { logError } = await import("../home/log.ts");
      const { findProjectRoot } = await import("../project/config.ts");
      const project = argv.find((a) => a.startsWith("--project="))?.slice("--project=".length);
      logError(name, error, (project && findProjectRoot(project)) || undefined);
      return 0;
    }
  }
  try {
    return await runParsed(name, command, argv);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`triforge ${name}: ${error.message}\n\n${helpText(name, command)}`);
      return 2;
    }
    if (error instanceof UserError) {
      console.error(`triforge ${name}: ${error.message}`);
      return 1;
    }
    console.error(`triforge ${name}: ${(error as Error)?.message ?? String(error)}`);
    if (process.env.TRIFORGE_DEBUG) console.error((error as Error)?.stack);
    return 1;
  }
}

async function runParsed(name: string, command: Command, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(command, argv);
  if (values.help) {
    console.log(helpText(name, command));
    return 0;
  }
  return (await command.run({ values, positionals })) ?? 0;
}
