#!/usr/bin/env bun
// The single entry point: CLI, hooks, MCP server and background indexer all start here.
// PERF: only the dispatcher is loaded eagerly; every command is a lazy import (see cli/commands.ts).
import { commands } from "./cli/commands.ts";
import pkg from "../package.json" with { type: "json" };

const USAGE = `Usage: triforge <command> [options]\n\nCommands:\n${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(14)}${c.summary}`)
  .join("\n")}\n\nRun 'triforge <command> --help' for a command's options. 'triforge --version [--verbose]' prints the version.`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    const out = name === undefined ? process.stderr : process.stdout;
    out.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-v" || name === "version") {
    if (rest.includes("--verbose")) {
      const { versionReport } = await import("./cli/version.ts");
      process.stdout.write(`${await versionReport(pkg.version)}\n`);
    } else process.stdout.write(`triforge ${pkg.version}\n`);
    return 0;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    process.stderr.write(`triforge: unknown command '${name}'\n\n${USAGE}\n`);
    return 2;
  }
  const { runCommand } = await import("./cli/run.ts");
  return runCommand(name, (await entry.load()).default, rest);
}

process.exitCode = await main(process.argv.slice(2));
