import { parseArgs } from "node:util";

/** One option of a command, in the shape `util.parseArgs` takes, plus its help line. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  default?: string | boolean;
  /** Shown as `--name <arg>` in help. */
  arg?: string;
  description: string;
}

export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Command {
  /** e.g. `triforge capture --project=<path>` */
  usage: string;
  description: string;
  options?: Record<string, OptionSpec>;
  /** Positional arguments allowed (described in `usage`). */
  positionals?: boolean;
  /** Returns the process exit code. */
  run(args: { values: OptionValues; positionals: string[] }): Promise<number | undefined> | number | undefined;
}

export function defineCommand(command: Command): Command {
  return command;
}

/** A problem with how the command was called: usage goes to stderr and the exit code is 2. */
export class UsageError extends Error {}

/** A clear, expected failure (missing file, bad input): message to stderr, exit 1, no stack trace. */
export class UserError extends Error {}

export function helpText(name: string, command: Command): string {
  const lines = [`Usage: ${command.usage}`, "", command.description];
  const options = Object.entries(command.options ?? {});
  if (options.length) {
    lines.push("", "Options:");
    const rows = options.map(([key, spec]) => {
      const flag = `${spec.short ? `-${spec.short}, ` : "    "}--${key}${spec.type === "string" ? ` <${spec.arg ?? "value"}>` : ""}`;
      const def = spec.default !== undefined && spec.default !== false ? ` (default: ${spec.default})` : "";
      return [flag, spec.description + def] as const;
    });
    rows.push(["-h, --help", "Show this help"]);
    const width = Math.max(...rows.map(([flag]) => flag.length));
    for (const [flag, text] of rows) lines.push(`  ${flag.padEnd(width)}  ${text}`);
  }
  void name;
  return lines.join("\n");
}

export function parseCommandArgs(command: Command, argv: string[]) {
  const options: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }> = {
    help: { type: "boolean", short: "h" },
  };
  for (const [key, spec] of Object.entries(command.options ?? {})) {
    const { description: _, arg: __, ...parserSpec } = spec;
    options[key] = parserSpec;
  }
  try {
    return parseArgs({ args: argv, options, allowPositionals: command.positionals ?? false, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
