import { Database } from "bun:sqlite";
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { HOOK_TIMEOUTS, type HookEvent } from "../agents/activate.ts";
import { claudePaths } from "../agents/claude.ts";
import { codexConfigDir } from "../agents/codex.ts";
import { cursorConfigDir } from "../agents/cursor.ts";
import { getJsonValue } from "../agents/json-edit.ts";
import { opencodeConfigDir, opencodeConfigFile } from "../agents/opencode.ts";
import { displayPath } from "../agents/report.ts";
import { readText } from "../agents/tracked.ts";
import { projectDataDir } from "../home/paths.ts";
import { shellQuote, triforgeCommand } from "../home/shell.ts";
import { LLM_SETTINGS } from "../llm/resolve.ts";
import { configPath, configProblems, readProjectConfig } from "../project/config.ts";
import { quickCheckProblems } from "../store/sqlite.ts";
import type { Check } from "./checks.ts";

function executable(path: string): boolean {
  try {
    accessSync(path, process.platform === "win32" ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The program a hook command line starts: its first word, unquoted ('…', "…" or bare). */
export function commandProgram(command: string): string {
  const single = /^'((?:[^']|'\\'')*)'/.exec(command);
  if (single) return single[1].replaceAll("'\\''", "'");
  const double = /^"((?:[^"\\]|\\.)*)"/.exec(command);
  if (double) return double[1].replace(/\\(.)/g, "$1");
  return command.split(/\s/, 1)[0];
}

/** Checks that an agent's entry starts a program that exists and runs. */
function entryCheck(name: string, file: string, command: unknown, installFix: string): Check {
  if (command === undefined)
    return { name, ok: false, detail: `no triforge entry in ${displayPath(file)}`, fix: installFix };
  if (typeof command !== "string" || !executable(command)) {
    return {
      name,
      ok: false,
      detail: `${displayPath(file)} starts ${String(command)}, which is missing or not executable`,
      fix: installFix,
    };
  }
  return { name, ok: true, detail: `${displayPath(file)} → ${command}` };
}

/** The MCP entries of every agent triforge was installed into (Claude Code always checked). */
export function agentChecks(home = homedir(), env = process.env): Check[] {
  const fix = "run 'triforge install' (again, if the binary moved)";
  const checks: Check[] = [];
  const claude = claudePaths(home, env);
  const readJson = (file: string, path: string[]) => {
    const text = readText(file);
    return text === undefined ? undefined : getJsonValue(text, path, file);
  };
  try {
    const entry = readJson(claude.configJson, ["mcpServers", "triforge"]) as
      | { command?: unknown }
      | undefined;
    checks.push(entryCheck("Claude Code MCP server", claude.configJson, entry?.command, fix));
  } catch (error) {
    checks.push({
      name: "Claude Code MCP server",
      ok: false,
      detail: (error as Error).message,
      fix: `repair ${displayPath(claude.configJson)}`,
    });
  }
  const codex = join(codexConfigDir(home, env), "config.toml");
  const codexText = readText(codex);
  if (codexText?.includes("[mcp_servers.triforge]")) {
    try {
      const parsed = Bun.TOML.parse(codexText) as { mcp_servers?: { triforge?: { command?: unknown } } };
      checks.push(entryCheck("Codex MCP server", codex, parsed.mcp_servers?.triforge?.command, fix));
    } catch (error) {
      checks.push({
        name: "Codex MCP server",
        ok: false,
        detail: `${displayPath(codex)}: ${(error as Error).message}`,
        fix: "repair the TOML",
      });
    }
  }
  const cursor = join(cursorConfigDir(home), "mcp.json");
  const cursorEntry = existsSync(cursor)
    ? (readJson(cursor, ["mcpServers", "triforge"]) as { command?: unknown } | undefined)
    : undefined;
  if (cursorEntry) checks.push(entryCheck("Cursor MCP server", cursor, cursorEntry.command, fix));
  const opencode = opencodeConfigFile(opencodeConfigDir(home, env));
  if (existsSync(opencode)) {
    const entry = (readJson(opencode, ["mcp", "triforge"]) ??
      readJson(opencode, ["mcp", "servers", "triforge"])) as { command?: unknown[] } | undefined;
    if (entry) checks.push(entryCheck("OpenCode MCP server", opencode, entry.command?.[0], fix));
  }
  return checks;
}

/** The project's hooks (when memory is active there) and the integrity of its stored memory. */
export function projectChecks(root: string): Check[] {
  if (!existsSync(configPath(root))) return [];
  const checks: Check[] = [configCheck(root)];
  const settings = join(root, ".claude", "settings.local.json");
  const fix = `run \`${triforgeCommand(["activate", "--project", root])}\``;
  try {
    const text = readText(settings);
    const hooks = (text === undefined ? undefined : getJsonValue(text, ["hooks"], settings)) as
      | Record<string, { hooks?: { command?: string }[] }[]>
      | undefined;
    const subcommand: Record<HookEvent, string> = {
      SessionStart: " prelude ",
      Stop: " capture ",
      SessionEnd: " index ",
    };
    for (const event of Object.keys(HOOK_TIMEOUTS) as HookEvent[]) {
      const command = hooks?.[event]
        ?.flatMap((group) => group.hooks ?? [])
        .find((h) => h.command?.includes(subcommand[event]))?.command;
      if (!command) {
        checks.push({ name: `${event} hook`, ok: false, detail: `not in ${displayPath(settings)}`, fix });
        continue;
      }
      const program = commandProgram(command);
      const ok = executable(program);
      checks.push({
        name: `${event} hook`,
        ok,
        detail: ok ? command : `${program} is missing or not executable`,
        fix: ok ? undefined : fix,
      });
    }
  } catch (error) {
    checks.push({
      name: "hooks",
      ok: false,
      detail: (error as Error).message,
      fix: `repair ${displayPath(settings)}`,
    });
  }
  checks.push(...storeChecks(projectDataDir(root), root));
  return checks;
}

/**
 * The project's `.triforge/config.json` parses and holds valid values (`configProblems`, shared with
 * `status`). The hooks fail open on a bad config (capture and index log it to errors.log and go on), so
 * without this check nothing the user looks at says that, e.g., `"llm": "antropic"` quietly turned LLM
 * OpenIE off.
 */
function configCheck(root: string): Check {
  const file = configPath(root);
  const fix = `edit ${displayPath(file)}: a JSON object such as {"storage": "local", "llm": "auto", "exclude": []}`;
  let problems: string[];
  try {
    problems = configProblems(readProjectConfig(root), LLM_SETTINGS);
  } catch (error) {
    return { name: "project config", ok: false, detail: (error as Error).message, fix };
  }
  if (problems.length)
    return { name: "project config", ok: false, detail: `${displayPath(file)}: ${problems.join("; ")}`, fix };
  return { name: "project config", ok: true, detail: displayPath(file) };
}

/** SQLite's own consistency check on every database file of the project's store. */
export function storeChecks(dir: string, root: string): Check[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /\.(db|sqlite3?)$/.test(name));
  } catch {
    return [{ name: "memory store", ok: true, detail: "nothing stored yet" }];
  }
  return names.map((name) => {
    const file = join(dir, name);
    // Both are meant to be pasted into a shell: the paths are quoted, and not shortened to `~/…`.
    const fix = `move ${shellQuote(file)} away and run \`${triforgeCommand(["index", "--project", root])}\` to rebuild it from the captured chats`;
    try {
      // Not `readonly`: a read-only handle cannot remove the -wal and -shm files it makes on a WAL store.
      const db = new Database(file, { readwrite: true, create: false });
      try {
        const problems = quickCheckProblems(db);
        const ok = problems.length === 0;
        return {
          name: "memory store",
          ok,
          detail: ok ? `${displayPath(file)} passes quick_check` : problems.join("; "),
          fix: ok ? undefined : fix,
        };
      } finally {
        db.close();
      }
    } catch (error) {
      return {
        name: "memory store",
        ok: false,
        detail: `${displayPath(file)}: ${(error as Error).message}`,
        fix,
      };
    }
  });
}
