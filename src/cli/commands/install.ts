import { type Agent, AGENTS, EXTRA_SERVERS, type ExtraServer, install } from "../../agents/install.ts";
import { launcher } from "../../agents/launcher.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
import { styleFor } from "../style.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";

const AGENT_NAMES: Record<Agent, string> = {
  claude: "Claude Code",
  codex: "Codex",
  cursor: "Cursor",
  opencode: "OpenCode",
};

export function parseAgents(list: string | undefined): Agent[] | undefined {
  if (list === undefined) return undefined;
  const names = list
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const unknown = names.filter((name) => !(AGENTS as readonly string[]).includes(name));
  if (unknown.length || names.length === 0)
    throw new UsageError(`--agents takes a list of ${AGENTS.join(", ")}; got '${list}'`);
  return [...new Set(names)] as Agent[];
}

/** `--without insforge`: the servers install adds by default that this run leaves out. */
export function parseWithout(list: string | undefined): Set<string> {
  const names = (list ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const unknown = names.filter((name) => name !== "insforge");
  if (unknown.length)
    throw new UsageError(`--without takes insforge (the one server install adds by default); got '${list}'`);
  return new Set(names);
}

export default defineCommand({
  usage: "triforge install [--agents claude,codex,cursor,opencode] [--without insforge] [--with-semble]",
  description:
    "Wires triforge into your coding agents: the MCP server (memory and code search), the instructions in ~/.claude/CLAUDE.md and the /rag command, and for Codex, Cursor and OpenCode the hook or plugin that captures their sessions in projects where memory is active; for Claude Code also InsForge's hosted backend server unless --without insforge. Claude Code always; Codex, Cursor and OpenCode when installed or named. Needs no API key; running it again changes nothing. 'triforge uninstall' undoes it ('--only insforge' removes InsForge alone).",
  options: {
    agents: { type: "string", arg: "list", description: "Only these agents (comma-separated)" },
    without: {
      type: "string",
      arg: "servers",
      description: "Leave out a server install adds by default: insforge",
    },
    "no-insforge": { type: "boolean", description: "The same as --without insforge" },
    "with-semble": {
      type: "boolean",
      description: "Also add the external semble code-search MCP server (uvx)",
    },
  },
  run({ values }) {
    const agents = parseAgents(values.agents as string | undefined);
    const without = parseWithout(values.without as string | undefined);
    if (values["no-insforge"]) without.add("insforge");
    let result: ReturnType<typeof install>;
    try {
      result = install({
        launcher: launcher(),
        agents,
        insforge: !without.has("insforge"),
        semble: Boolean(values["with-semble"]),
      });
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    const changed = result.outcomes.filter((o) => o.action !== "unchanged");
    const names = result.agents.map((a) => AGENT_NAMES[a]).join(", ");
    const lines =
      changed.length === 0
        ? [`triforge is already installed for ${names}; nothing changed.`]
        : [
            `triforge installed for ${names}:`,
            formatOutcomes(changed, undefined, styleFor(process.stdout).path),
          ];
    // Every server is named with what it does, so nothing is registered without the user knowing.
    lines.push("MCP servers registered:");
    for (const server of result.servers)
      lines.push(`  ${server.name.padEnd(9)} ${displayPath(server.file)}: ${serverPurpose(server.name)}`);
    for (const name of new Set(result.servers.map((s) => s.name)))
      if (name in EXTRA_SERVERS)
        lines.push(
          `Not wanted? 'triforge uninstall --only ${name}' removes ${name} alone${name === "insforge" ? "; 'triforge install --without insforge' leaves it out" : ""}.`,
        );
    if (changed.length) {
      lines.push(
        `Data directory: ${displayPath(result.dataDir)}${result.createdDataDir ? " (created)" : ""}`,
      );
      lines.push(
        `Next: in a project, type /rag in Claude Code (or run 'triforge activate' there) to turn memory on: from then on its ${names} sessions are captured, and activate offers to import the earlier ones.`,
      );
    }
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  },
});

function serverPurpose(name: string): string {
  if (name === "triforge") return "memory and code search (this binary's 'serve'; runs on this machine)";
  return EXTRA_SERVERS[name as ExtraServer] ?? "added by triforge install";
}
