#!/usr/bin/env bun
import pkg from "../package.json" with { type: "json" };
// The single entry point: CLI, hooks, MCP server and background indexer all start here.
// PERF: only the dispatcher is loaded eagerly; every command is a lazy import (see cli/commands.ts).
// PERF: console.log/console.error here, not process.stdout/stderr: first use of those Node streams
// costs 7-9 ms each in a compiled binary (benchmark/startup.ts), which a hook pays on every reply.
import { commands } from "./cli/commands.ts";

/** The top-level help, grouped. PERF: built only when printed, not on every start. */
function usage(): string {
  const groups = new Map<string, string[]>();
  const width = Math.max(...Object.keys(commands).map((name) => name.length)) + 2;
  for (const [name, c] of Object.entries(commands)) {
    groups.set(c.group, [...(groups.get(c.group) ?? []), `  ${name.padEnd(width)}${c.summary}`]);
  }
  return `Usage: triforge <command> [options]\n${[...groups]
    .map(([group, lines]) => `\n${group}:\n${lines.join("\n")}`)
    .join(
      "\n",
    )}\n\nRun 'triforge <command> --help' for a command's options. 'triforge --version [--verbose]' prints the version.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    (name === undefined ? console.error : console.log)(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v" || name === "version") {
    if (rest.includes("--verbose")) {
      const { versionReport } = await import("./cli/version.ts");
      console.log(await versionReport(pkg.version));
    } else console.log(`triforge ${pkg.version}`);
    return 0;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    // PERF: the suggestion is computed only for a mistyped command, never on a hook's path.
    const { closest } = await import("./cli/suggest.ts");
    const match = closest(name, Object.keys(commands));
    console.error(
      match
        ? `triforge: unknown command '${name}'; did you mean '${match}'? ('triforge --help' lists every command)`
        : `triforge: unknown command '${name}'\n\n${usage()}`,
    );
    return 2;
  }
  const { runCommand } = await import("./cli/run.ts");
  return runCommand(name, (await entry.load()).default, rest);
}

process.exitCode = await main(process.argv.slice(2));
