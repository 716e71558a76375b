import { join } from "node:path";
import type { Edit } from "./edits.ts";
import { commandLine, type Platform } from "./launcher.ts";
import claudeMd from "./templates/claude-md.md" with { type: "text" };
import type { FileChange } from "./tracked.ts";

/** Claude Code's files for one user. CLAUDE_CONFIG_DIR moves all of them (Claude Code's own rule). */
export function claudePaths(home: string, env: Record<string, string | undefined> = process.env) {
  const configDir = env.CLAUDE_CONFIG_DIR || join(home, ".claude");
  return {
    configDir,
    /** User-scope MCP servers live here (what `claude mcp add -s user` writes). */
    configJson: env.CLAUDE_CONFIG_DIR ? join(configDir, ".claude.json") : join(home, ".claude.json"),
    instructions: join(configDir, "CLAUDE.md"),
    ragCommand: join(configDir, "commands", "rag.md"),
  };
}

export const INSFORGE_MCP_URL = "https://mcp.insforge.dev/mcp";

/** The MCP entry that starts this triforge: memory and code search in one stdio server. */
export function triforgeServer(launcher: string[]) {
  return { type: "stdio", command: launcher[0], args: [...launcher.slice(1), "serve"] };
}

/** InsForge's hosted MCP server: HTTP, so it costs nothing until the agent calls it. */
export const insforgeServer = { type: "http", url: INSFORGE_MCP_URL };

/** semble's documented Claude Code setup (`claude mcp add semble -s user -- uvx --from "semble[mcp]" semble`). */
export const sembleServer = { type: "stdio", command: "uvx", args: ["--from", "semble[mcp]", "semble"] };

export interface ClaudeOptions {
  insforge: boolean;
  semble: boolean;
}

export const SECTION_ID = "triforge";

/**
 * `/rag`: a slash command whose body runs `triforge activate` (the `!` line runs before the prompt
 * is sent; its frontmatter allows exactly that command). Kept in code, not a .md template, because
 * Markdown formatters put a blank line after `---` and Claude Code then ignores the frontmatter.
 */
export function ragCommandText(launcher: string[], platform: Platform = process.platform): string {
  const command = commandLine([...launcher, "activate"], platform);
  return [
    "---",
    "description: Turn on triforge long-term memory for this project (writes .triforge/, AGENTS.md and the session hooks)",
    `allowed-tools: Bash(${command}:*)`,
    "---",
    `!\`${command}\``,
    "",
    "Tell the user in two sentences what the output above says was written, and that memory is captured from the next session on (Claude Code loads hooks when a session starts). If the output shows an error, show it with the fix it names.",
    "",
  ].join("\n");
}

export function claudeChanges(
  home: string,
  launcher: string[],
  options: ClaudeOptions,
  env = process.env,
): FileChange[] {
  const paths = claudePaths(home, env);
  const servers: Edit[] = [
    { kind: "json", path: ["mcpServers", "triforge"], value: triforgeServer(launcher) },
  ];
  // Entries for other servers never replace one the user configured under the same name.
  if (options.insforge)
    servers.push({
      kind: "json",
      path: ["mcpServers", "insforge"],
      value: insforgeServer,
      keepExisting: true,
    });
  if (options.semble)
    servers.push({ kind: "json", path: ["mcpServers", "semble"], value: sembleServer, keepExisting: true });
  return [
    { path: paths.configJson, edits: servers, purpose: "the MCP servers listed below" },
    {
      path: paths.instructions,
      edits: [{ kind: "section", id: SECTION_ID, body: claudeMd }],
      purpose: "a triforge section: when Claude Code uses memory and code search",
    },
    {
      path: paths.ragCommand,
      edits: [{ kind: "file", content: ragCommandText(launcher) }],
      purpose: "the /rag command, which runs 'triforge activate' in a project",
    },
  ];
}
