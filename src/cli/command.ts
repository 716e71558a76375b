/** One option of a command, plus its help line. */
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
  /**
   * A Claude Code hook: it must never disturb the session, so even a usage error is logged and exits 0
   * (a Stop hook's exit code 2 would tell Claude Code to keep going).
   */
  hook?: boolean;
  /** Returns the process exit code. */
  run(args: {
    values: OptionValues;
    positionals: string[];
  }): Promise<number | undefined> | number | undefined;
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

/**
 * Strict option parsing in the manner of `util.parseArgs`: `--name value`, `--name=value`, `-n value`,
 * `-nvalue`, booleans without a value, repeatable options, `--` ending options, and a usage error for
 * anything unknown. PERF: our own because importing `node:util` costs ~1 ms of every hook start.
 */
export function parseCommandArgs(
  command: Command,
  argv: string[],
): { values: OptionValues; positionals: string[] } {
  const specs: Record<string, Omit<OptionSpec, "description">> = {
    help: { type: "boolean", short: "h" },
    ...command.options,
  };
  const byShort = new Map(
    Object.entries(specs).flatMap(([name, spec]) => (spec.short ? [[spec.short, name] as const] : [])),
  );
  const values: OptionValues = {};
  const positionals: string[] = [];
  const set = (name: string, value: string | boolean) => {
    if (specs[name].multiple)
      values[name] = [...((values[name] as (string | boolean)[] | undefined) ?? []), value];
    else values[name] = value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
      if (!Object.hasOwn(specs, name)) {
        // PERF: loaded only for a mistyped option; every hook parses its arguments with this function.
        const { didYouMean } = require("./suggest.ts") as typeof import("./suggest.ts");
        throw new UsageError(
          `unknown option '--${name}'${didYouMean(name, Object.keys(specs), (known) => `--${known}`)}`,
        );
      }
    } else if (arg.startsWith("-") && arg.length > 1) {
      name = byShort.get(arg[1]);
      if (!name) throw new UsageError(`unknown option '-${arg[1]}'`);
      if (arg.length > 2) inline = arg.slice(arg[2] === "=" ? 3 : 2);
    } else {
      positionals.push(arg);
      continue;
    }
    const spec = specs[name];
    if (spec.type === "boolean") {
      if (inline !== undefined) throw new UsageError(`option '--${name}' takes no value`);
      set(name, true);
    } else if (inline !== undefined) {
      set(name, inline);
    } else {
      if (i + 1 >= argv.length)
        throw new UsageError(`option '--${name} <${spec.arg ?? "value"}>' needs a value`);
      set(name, argv[++i]);
    }
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (values[name] === undefined && spec.default !== undefined) values[name] = spec.default;
  }
  if (positionals.length && !command.positionals)
    throw new UsageError(`unexpected argument '${positionals[0]}'`);
  return { values, positionals };
}
