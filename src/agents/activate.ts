import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { dataDir, projectKey } from "../home/paths.ts";
import { DEFAULT_CONFIG, findProjectRoot, type ProjectConfig } from "../project/config.ts";
import { SECTION_ID } from "./claude.ts";
import { type Applied, type Edit, editTarget } from "./edits.ts";
import { type GitRepository, gitRepository, type IgnoreTarget, patternFor } from "./git-ignore.ts";
import { commandLine, type Platform } from "./launcher.ts";
import agentsMd from "./templates/agents-md.md" with { type: "text" };
import {
  applyChanges,
  type ChangeRecord,
  type FileChange,
  type Outcome,
  readRecord,
  readText,
  removeIfEmpty,
  revertChanges,
  writeRecord,
} from "./tracked.ts";

/**
 * Hook timeouts in seconds. Claude Code waits for SessionStart and Stop hooks; SessionEnd only
 * spawns the detached indexer, so its budget is short (Claude Code exits right after it).
 */
export const HOOK_TIMEOUTS = { SessionStart: 15, Stop: 30, SessionEnd: 5 } as const;
export type HookEvent = keyof typeof HOOK_TIMEOUTS;

/** The three hooks of the agents contract, as Claude Code's settings spell a command hook. */
export function projectHooks(
  launcher: string[],
  root: string,
  platform: Platform = process.platform,
): Record<HookEvent, object> {
  const hook = (event: HookEvent, args: string[]) => ({
    hooks: [
      {
        type: "command",
        command: commandLine([...launcher, ...args], platform),
        timeout: HOOK_TIMEOUTS[event],
      },
    ],
  });
  return {
    SessionStart: hook("SessionStart", ["prelude", `--project=${root}`]),
    Stop: hook("Stop", ["capture", `--project=${root}`]),
    SessionEnd: hook("SessionEnd", ["index", `--project=${root}`, "--background"]),
  };
}

/** Everything below `.triforge/` except what a team may share (config, exclusions) stays out of git. */
export const TRIFORGE_GITIGNORE =
  "# Written by `triforge activate`: only the shared settings belong in git.\n*\n!.gitignore\n!config.json\n!exclude.txt\n";

export function activationRecordPath(root: string): string {
  return join(dataDir(), "activations", `${projectKey(root)}.json`);
}

/**
 * `path` when it is an existing folder; otherwise an error that says what is wrong with it. Activation
 * writes into the project, so a mistyped path must not become a new folder.
 */
export function existingProjectDir(path: string): string {
  const dir = resolve(path);
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (!stat) throw new Error(`project folder not found: ${dir}`);
  if (!stat.isDirectory()) throw new Error(`not a folder: ${dir} (give the project's root folder)`);
  return dir;
}

/** The project to act on: the active project enclosing `start`, else `start` itself. */
export function resolveProject(start: string | undefined): string {
  const dir = resolve(start ?? process.cwd());
  return findProjectRoot(dir) ?? dir;
}

/** `@AGENTS.md` (or `@./AGENTS.md`) anywhere in CLAUDE.md already brings AGENTS.md in. */
function importsAgentsMd(text: string): boolean {
  return /(^|\s)@(\.\/)?AGENTS\.md\b/m.test(text);
}

export interface ActivateOptions {
  root: string;
  launcher: string[];
  storage?: ProjectConfig["storage"];
  platform?: Platform;
  /** Where the lines keeping personal files out of git go (default: `exclude`). */
  ignoreFile?: IgnoreTarget;
  /**
   * `settings` (default): the hooks go in `.claude/settings.local.json`. `plugin`: the triforge Claude
   * Code plugin brings its own hooks, so none are written (they would run twice).
   */
  hooks?: HookHome;
}

export const HOOK_HOMES = ["settings", "plugin"] as const;
export type HookHome = (typeof HOOK_HOMES)[number];

export function activationChanges(options: ActivateOptions, earlier: ChangeRecord | undefined): FileChange[] {
  const { root, launcher } = options;
  const recorded = (path: string, edit: Edit) =>
    earlier?.files.some(
      (f) => f.path === path && f.edits.some((e: Applied) => editTarget(e) === editTarget(edit)),
    ) ?? false;
  const configFile = join(root, ".triforge", "config.json");
  const config: ProjectConfig = { ...DEFAULT_CONFIG, storage: options.storage ?? DEFAULT_CONFIG.storage };
  const configEdits: Edit[] = [
    // The file's presence is what turns memory on, so deactivate removes it even when edited.
    { kind: "file", content: `${JSON.stringify(config, null, 2)}\n`, createOnly: true, force: true },
  ];
  // On a config that was there before: our `storage` edit, kept when a later activate names none (the
  // change record would otherwise take it back), with the value the file holds now.
  const storageEdit: Edit = { kind: "json", path: ["storage"], value: options.storage };
  if (existsSync(configFile)) {
    if (options.storage) configEdits.push(storageEdit);
    else if (recorded(configFile, storageEdit)) {
      const current = configStorage(configFile);
      if (current) configEdits.push({ ...storageEdit, value: current });
    }
  }
  const changes: FileChange[] = [
    { path: configFile, edits: configEdits, purpose: "turns memory on: storage, LLM and redaction settings" },
    {
      path: join(root, ".triforge", ".gitignore"),
      edits: [{ kind: "file", content: TRIFORGE_GITIGNORE, createOnly: true }],
      purpose: "keeps .triforge's local files out of git",
    },
    {
      path: join(root, "AGENTS.md"),
      edits: [{ kind: "section", id: SECTION_ID, body: agentsMd }],
      purpose: "a triforge section: how the agent uses memory and code search",
    },
  ];
  // Claude Code reads CLAUDE.md, not AGENTS.md: an existing CLAUDE.md gets an import line.
  const claudeMd = join(root, "CLAUDE.md");
  const importLine: Edit = { kind: "line", line: "@AGENTS.md" };
  const claudeText = readText(claudeMd);
  if (recorded(claudeMd, importLine) || (claudeText !== undefined && !importsAgentsMd(claudeText))) {
    changes.push({ path: claudeMd, edits: [importLine], purpose: "imports AGENTS.md" });
  }
  if ((options.hooks ?? "settings") === "settings") {
    const hooks = projectHooks(launcher, root, options.platform);
    changes.push({
      path: join(root, ".claude", "settings.local.json"),
      purpose: "the capture, index and prelude hooks (yours: they hold this machine's paths)",
      edits: Object.entries(hooks).map(([event, value]) => ({
        kind: "json-append",
        path: ["hooks", event],
        value,
      })),
    });
  }
  const ignore = gitIgnoreChange(root, options.ignoreFile ?? "exclude", changes, earlier);
  if (ignore) changes.push(ignore);
  return changes;
}

/**
 * The lines that keep this person's files out of `git status` (see git-ignore.ts): with `exclude`, the
 * hooks file and every file activate creates, in the repository's own info/exclude (a file it only
 * edits, such as a tracked AGENTS.md, stays visible); with `gitignore`, the hooks file alone, in the
 * project's .gitignore, the rest being there to commit. Nothing outside a git repository.
 */
function gitIgnoreChange(
  root: string,
  target: IgnoreTarget,
  changes: FileChange[],
  earlier: ChangeRecord | undefined,
): FileChange | undefined {
  if (target === "none") return undefined;
  const repository = gitRepository(root);
  if (!repository) return undefined;
  const hooksFile = join(root, ".claude", "settings.local.json");
  const writesHooks = changes.some((c) => c.path === hooksFile);
  const section = (path: string, files: string[], base: GitRepository) => ({
    path,
    purpose: `keeps ${files.length === 1 ? "the hooks file" : "your hooks and the files activate created"} out of git status`,
    edits: [
      {
        kind: "section" as const,
        id: SECTION_ID,
        body: files.map((file) => patternFor(base, file)).join("\n"),
        comments: "hash" as const,
      },
    ],
  });
  if (target === "gitignore")
    return writesHooks
      ? section(join(root, ".gitignore"), [hooksFile], { ...repository, top: root })
      : undefined;
  const createdByUs = (path: string) => {
    const recorded = earlier?.files.find((f) => f.path === path);
    return recorded ? !recorded.existed : readText(path) === undefined;
  };
  const created = changes.map((c) => c.path).filter((path) => path !== hooksFile && createdByUs(path));
  // A .triforge/ that activate made is excluded whole: its own .gitignore re-includes config.json, and
  // only an excluded folder is beyond a deeper file's `!` (git never looks inside it).
  const triforgeDir = join(root, ".triforge");
  const madeTriforgeDir = created.includes(join(triforgeDir, "config.json"));
  const files = created.filter((path) => !madeTriforgeDir || dirname(path) !== triforgeDir);
  const patterns = [
    ...(writesHooks ? [hooksFile] : []),
    ...(madeTriforgeDir ? [`${triforgeDir}${sep}`] : []),
    ...files,
  ];
  if (patterns.length === 0) return undefined;
  return section(join(repository.gitDir, "info", "exclude"), patterns, repository);
}

export function activate(options: ActivateOptions): { root: string; outcomes: Outcome[] } {
  existingProjectDir(options.root);
  const recordPath = activationRecordPath(options.root);
  const earlier = readRecord(recordPath);
  const { record, outcomes } = applyChanges(
    earlier,
    activationChanges(options, earlier),
    join(dataDir(), "backups"),
    {
      save: (r) => writeRecord(recordPath, { ...r, project: options.root }),
    },
  );
  if (!earlier || outcomes.some((o) => o.action !== "unchanged"))
    writeRecord(recordPath, { ...record, project: options.root });
  return { root: options.root, outcomes };
}

/** Projects whose activation record is still there: memory (hooks) stays on in them until deactivated. */
export function activatedProjects(): string[] {
  const dir = join(dataDir(), "activations");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .flatMap((name) => readRecord(join(dir, name))?.project ?? []);
}

/** Removes exactly what activate wrote; undefined when this project was never activated here. */
export function deactivate(root: string): Outcome[] | undefined {
  const recordPath = activationRecordPath(root);
  const record = readRecord(recordPath);
  if (!record) return undefined;
  const outcomes = revertChanges(record, join(dataDir(), "backups"));
  rmSync(recordPath, { force: true });
  removeIfEmpty(dirname(recordPath));
  return outcomes;
}

/** The `storage` a project's config names now, if it names one. */
function configStorage(configFile: string): string | undefined {
  try {
    const storage = (JSON.parse(readText(configFile) ?? "{}") as { storage?: unknown }).storage;
    return typeof storage === "string" ? storage : undefined;
  } catch {
    return undefined;
  }
}
