import { AGENTS, type Agent, install } from "../../agents/install.ts";
import { launcher } from "../../agents/launcher.ts";
import { displayPath, formatOutcomes } from "../../agents/report.ts";
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

export default defineCommand({
  usage: "triforge install [--agents claude,codex,cursor,opencode] [--no-insforge] [--with-semble]",
  description:
    "Wires triforge into your coding agents: the MCP server (memory and code search), the instructions in ~/.claude/CLAUDE.md and the /rag command. Claude Code always; Codex, Cursor and OpenCode when installed or named. Needs no API key; running it again changes nothing. 'triforge uninstall' undoes it.",
  options: {
    agents: { type: "string", arg: "list", description: "Only these agents (comma-separated)" },
    "no-insforge": { type: "boolean", description: "Leave out the InsForge backend MCP entry" },
    "with-semble": {
      type: "boolean",
      description: "Also add the external semble code-search MCP server (uvx)",
    },
  },
  run({ values }) {
    const agents = parseAgents(values.agents as string | undefined);
    let result: ReturnType<typeof install>;
    try {
      result = install({
        launcher: launcher(),
        agents,
        insforge: !values["no-insforge"],
        semble: Boolean(values["with-semble"]),
      });
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    const changed = result.outcomes.filter((o) => o.action !== "unchanged");
    const names = result.agents.map((a) => AGENT_NAMES[a]).join(", ");
    if (changed.length === 0) {
      process.stdout.write(`triforge is already installed for ${names}; nothing changed.\n`);
      return 0;
    }
    process.stdout.write(`triforge installed for ${names}:\n${formatOutcomes(changed)}\n`);
    process.stdout.write(
      `Data directory: ${displayPath(result.dataDir)}${result.createdDataDir ? " (created)" : ""}\n`,
    );
    process.stdout.write(
      "Next: in a project, type /rag in Claude Code (or run 'triforge activate' there) to turn memory on.\n",
    );
    return 0;
  },
});
