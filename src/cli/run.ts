import { type Command, helpText, parseCommandArgs, UsageError, UserError } from "./command.ts";

/** Parses a command's arguments, runs it and maps failures to exit codes (2 usage, 1 error). */
export async function runCommand(name: string, command: Command, argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseCommandArgs(command, argv);
    if (values.help) {
      process.stdout.write(`${helpText(name, command)}\n`);
      return 0;
    }
    return (await command.run({ values, positionals })) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`triforge ${name}: ${error.message}\n\n${helpText(name, command)}\n`);
      return 2;
    }
    if (error instanceof UserError) {
      process.stderr.write(`triforge ${name}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`triforge ${name}: ${(error as Error)?.message ?? String(error)}\n`);
    if (process.env.TRIFORGE_DEBUG) process.stderr.write(`${(error as Error)?.stack}\n`);
    return 1;
  }
}
