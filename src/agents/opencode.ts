import { existsSync } from "node:fs";
import { join } from "node:path";
import { getJsonValue } from "./json-edit.ts";
import { type FileChange, readText } from "./tracked.ts";

/** OpenCode's global config folder: `$XDG_CONFIG_HOME/opencode` (default `~/.config/opencode`) on every OS. */
export function opencodeConfigDir(
  home: string,
  env: Record<string, string | undefined> = process.env,
): string {
  return join(env.XDG_CONFIG_HOME || join(home, ".config"), "opencode");
}

/** The config file in use: an existing `opencode.jsonc` or `opencode.json`, else a new `opencode.json`. */
export function opencodeConfigFile(dir: string): string {
  for (const name of ["opencode.jsonc", "opencode.json"])
    if (existsSync(join(dir, name))) return join(dir, name);
  return join(dir, "opencode.json");
}

/**
 * Where our server goes: OpenCode's config lists local servers as `mcp.<name>` =
 * `{type: "local", command: [argv...], enabled}`; its newer layout nests them under `mcp.servers`
 * (and drops `enabled`), which we follow when the file already uses it.
 */
export function opencodeEntry(text: string, launcher: string[], file = "opencode.json") {
  const servers = text.trim() === "" ? undefined : getJsonValue(text, ["mcp", "servers"], file);
  const nested = typeof servers === "object" && servers !== null && !("type" in servers);
  const command = [...launcher, "serve"];
  return nested
    ? { path: ["mcp", "servers", "triforge"], value: { type: "local", command } }
    : { path: ["mcp", "triforge"], value: { type: "local", command, enabled: true } };
}

export function opencodeChanges(home: string, launcher: string[], env = process.env): FileChange[] {
  const file = opencodeConfigFile(opencodeConfigDir(home, env));
  const text = readText(file) ?? "";
  const entry = opencodeEntry(text, launcher, file);
  // A new file gets the schema line OpenCode's docs start every config with; an existing one keeps its own.
  const schema = {
    kind: "json" as const,
    path: ["$schema"],
    value: "https://opencode.ai/config.json",
    keepExisting: true,
  };
  return [
    {
      path: file,
      edits: [schema, { kind: "json", path: entry.path, value: entry.value }],
      purpose: "the triforge MCP server",
    },
  ];
}
