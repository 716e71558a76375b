import { existsSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { dataDir } from "../home/paths.ts";
import { claudeChanges } from "./claude.ts";
import { codexChanges, codexConfigDir } from "./codex.ts";
import { cursorChanges, cursorConfigDir } from "./cursor.ts";
import { opencodeChanges, opencodeConfigDir } from "./opencode.ts";
import type { Applied } from "./edits.ts";
import {
  applyChanges,
  type ChangeRecord,
  type FileChange,
  makeDirs,
  type Outcome,
  readRecord,
  removeIfEmpty,
  revertChanges,
  revertEdits,
  writeRecord,
} from "./tracked.ts";

export const AGENTS = ["claude", "codex", "cursor", "opencode"] as const;
export type Agent = (typeof AGENTS)[number];

export function manifestPath(): string {
  return join(dataDir(), "install-manifest.json");
}

export function backupsDir(): string {
  return join(dataDir(), "backups");
}

/** Claude Code always; the others when their config folder shows they are installed. */
export function detectAgents(home: string, env = process.env): Agent[] {
  const present: Agent[] = ["claude"];
  if (existsSync(codexConfigDir(home, env))) present.push("codex");
  if (existsSync(cursorConfigDir(home))) present.push("cursor");
  if (existsSync(opencodeConfigDir(home, env))) present.push("opencode");
  return present;
}

export interface InstallOptions {
  launcher: string[];
  /** Explicit `--agents`; undefined: detect. */
  agents?: Agent[];
  insforge: boolean;
  semble: boolean;
  home?: string;
  env?: Record<string, string | undefined>;
}

export function installChanges(agent: Agent, options: InstallOptions, home: string): FileChange[] {
  const env = options.env ?? process.env;
  switch (agent) {
    case "claude":
      return claudeChanges(
        home,
        options.launcher,
        { insforge: options.insforge, semble: options.semble },
        env,
      );
    case "codex":
      return codexChanges(home, options.launcher, env);
    case "cursor":
      return cursorChanges(home, options.launcher);
    case "opencode":
      return opencodeChanges(home, options.launcher, env);
  }
}

/**
 * The servers install registers beside triforge's own, with what each is for: install names them, and
 * `uninstall --only <name>` removes one alone.
 */
export const EXTRA_SERVERS = {
  insforge:
    "InsForge's hosted backend (https://mcp.insforge.dev/mcp), with which the agent adds a database, auth, file storage and functions to the apps you build. It needs an InsForge account (https://insforge.dev): until you connect one, 'claude mcp list' shows it as failing",
  semble: "semble's code search (uvx --from semble[mcp] semble), run by uv on this machine",
} as const;
export type ExtraServer = keyof typeof EXTRA_SERVERS;

/** The server an applied edit registers: `mcpServers.<name>` (JSON), `mcp.<name>` (OpenCode), `[mcp_servers.<name>]`. */
export function serverOf(edit: Applied): string | undefined {
  if (edit.kind === "toml-table") return /^mcp_servers\.(.+)$/.exec(edit.name)?.[1];
  if (edit.kind !== "json") return undefined;
  const [top, ...rest] = edit.path.map(String);
  return (top === "mcpServers" || top === "mcp") && rest.length ? rest[rest.length - 1] : undefined;
}

/** Every server the record shows triforge registered (a same-named entry the user had is theirs, not listed). */
export function registeredServers(record: ChangeRecord): { name: string; file: string }[] {
  return record.files.flatMap((file) =>
    file.edits.flatMap((edit) => {
      const name = serverOf(edit);
      return name ? [{ name, file: file.path }] : [];
    }),
  );
}

/** Wires triforge into the agents; a second run with the same options writes nothing. */
export function install(options: InstallOptions): {
  agents: Agent[];
  outcomes: Outcome[];
  /** Every MCP server the install record holds, in the file that registers it. */
  servers: { name: string; file: string }[];
  dataDir: string;
  createdDataDir: boolean;
} {
  const home = options.home ?? homedir();
  const agents = options.agents ?? detectAgents(home, options.env);
  const createdDirs = makeDirs(dataDir());
  const record = readRecord(manifestPath());
  const changes = agents.flatMap((agent) => installChanges(agent, options, home));
  // Folders made for the data directory (~/.claude on a fresh machine) go on uninstall when empty.
  const withDataDirs = (r: ChangeRecord) => ({ ...r, dirs: [...new Set([...createdDirs, ...r.dirs])] });
  const { record: next, outcomes } = applyChanges(record, changes, backupsDir(), {
    save: (r) => writeRecord(manifestPath(), withDataDirs(r)),
  });
  if (!record || outcomes.some((o) => o.action !== "unchanged"))
    writeRecord(manifestPath(), withDataDirs(next));
  return {
    agents,
    outcomes,
    servers: registeredServers(next),
    dataDir: dataDir(),
    createdDataDir: createdDirs.length > 0,
  };
}

/**
 * Removes one server install added (`uninstall --only insforge`), from every file that has it, and
 * keeps the rest of the install recorded. Undefined when nothing is installed; no outcomes when the
 * record holds no such server (never added, or the user's own entry).
 */
export function uninstallServer(name: string): Outcome[] | undefined {
  const record = readRecord(manifestPath());
  if (!record) return undefined;
  const { record: next, outcomes } = revertEdits(record, (edit) => serverOf(edit) === name);
  if (outcomes.length) writeRecord(manifestPath(), next);
  return outcomes;
}

/**
 * Removes what install added: files nobody touched since come back byte for byte, others lose
 * only our keys and sections. Memories in the data directory stay (`purge` removes those).
 */
export function uninstall(): { outcomes: Outcome[]; dataDirKept: boolean } | undefined {
  const record = readRecord(manifestPath());
  if (!record) return undefined;
  const outcomes = revertChanges(record, backupsDir());
  rmSync(manifestPath(), { force: true });
  removeIfEmpty(dataDir());
  // The data directory sits inside ~/.claude by default: folders we created around it may be empty now.
  for (const dir of [...record.dirs].reverse()) removeIfEmpty(dir);
  return { outcomes, dataDirKept: existsSync(dataDir()) };
}
