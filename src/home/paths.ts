import { basename, dirname, join, resolve } from "node:path";

/**
 * The home folder as `os.homedir()` finds it (USERPROFILE on Windows, HOME elsewhere), from the
 * environment first. PERF: node:os costs ~0.35 ms of start-up and every hook reaches this module; it
 * is loaded only when the variable is missing.
 */
export function homeFolder(): string {
  const fromEnv = process.platform === "win32" ? process.env.USERPROFILE : process.env.HOME;
  return fromEnv || (require("node:os") as typeof import("node:os")).homedir();
}

/**
 * Where triforge keeps its data: `~/.claude/triforge/` (Windows `%USERPROFILE%\.claude\triforge\`).
 * TRIFORGE_HOME overrides it (tests, and users who want the data elsewhere).
 */
export function dataDir(): string {
  return process.env.TRIFORGE_HOME || join(homeFolder(), ".claude", "triforge");
}

/** Extracted model files and other caches that can be rebuilt at any time. */
export function cacheDir(): string {
  return join(dataDir(), "cache");
}

/**
 * A path in one spelling on every OS, so that the same project hashes the same everywhere:
 * absolute, forward slashes, lower-case drive letter, no trailing slash.
 */
export function normalizeProjectPath(path: string): string {
  let p = resolve(path).replaceAll("\\", "/");
  if (/^[A-Za-z]:/.test(p)) p = p[0].toLowerCase() + p.slice(1);
  if (p.length > 1 && p.endsWith("/") && !/^[a-z]:\/$/.test(p)) p = p.slice(0, -1);
  return p;
}

/** `sha256(normalised absolute project path)[:12]`: the project's folder name in the data directory. */
export function projectKey(projectPath: string): string {
  // PERF: Bun.CryptoHasher rather than node:crypto, which adds 2-3 ms to every hook start.
  return new Bun.CryptoHasher("sha256").update(normalizeProjectPath(projectPath)).digest("hex").slice(0, 12);
}

/** The per-project data folder: chats.jsonl, the store, summary.md, errors.log. */
export function projectDataDir(projectPath: string): string {
  return join(dataDir(), projectKey(projectPath));
}

// Every file of a project's data folder, named once. `chats.jsonl` is the source of truth; everything
// else can be rebuilt from it.

/** The redacted conversation log capture appends to: the source of truth the store is rebuilt from. */
export function chatLogPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "chats.jsonl");
}

/** Held while a line is appended to chats.jsonl or the file is rewritten. */
export function chatLogLockPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "chats.lock");
}

/** The project's memory store (the local SQLite backend). */
export const STORE_FILE = "memory.db";

export function storePath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), STORE_FILE);
}

/** A file beside a SQLite store file (memory.db → memory.`suffix`); none for a store in memory. */
function besideStore(storeFile: string, suffix: string): string | undefined {
  return storeFile === ":memory:" || storeFile === ""
    ? undefined
    : join(dirname(storeFile), `${basename(storeFile, ".db")}.${suffix}`);
}

/** The indexer's cache of a SQLite store's phrase vectors and names (store/phrase-file.ts). */
export function phraseFilePath(storeFile: string): string | undefined {
  return besideStore(storeFile, "phrases.bin");
}

/** The indexer's cache of the synonym buckets' heads (store/heads-file.ts). */
export function headsFilePath(storeFile: string): string | undefined {
  return besideStore(storeFile, "heads.bin");
}

/** The local store's recall arrays, persisted: written by the indexer, memory-mapped by recall. */
export function recallSnapshotPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "recall.bin");
}

/** The rows added since a recall snapshot was written, kept beside it: recall.bin → recall.add.bin. */
export function snapshotAdditionsPath(snapshotPath: string): string {
  return besideSnapshot(snapshotPath, "add.bin");
}

/**
 * How far the indexer's rolling check of a recall snapshot has come (snapshot-file.ts
 * checkSnapshotPages): recall.bin → recall.check. Not one of snapshotFiles: it changes every run, and
 * a warm process must not take that for a new snapshot.
 */
export function snapshotCheckPath(snapshotPath: string): string {
  return besideSnapshot(snapshotPath, "check");
}

/** Left by a reader that met a damaged page of a recall snapshot, so the next run checks it whole: recall.damaged. */
export function snapshotDamagePath(snapshotPath: string): string {
  return besideSnapshot(snapshotPath, "damaged");
}

/** The file beside a recall snapshot with this ending in place of its `bin`: recall.bin → recall.<ending>. */
function besideSnapshot(snapshotPath: string, ending: string): string {
  return `${snapshotPath.replace(/\.bin$/, "")}.${ending}`;
}

/** A recall snapshot's files: the base and its additions (removed, replaced and stamped together). */
export function snapshotFiles(snapshotPath: string): string[] {
  return [snapshotPath, snapshotAdditionsPath(snapshotPath)];
}

/**
 * With a shared store (`storage: postgres`): the local mirror of it that recall reads (a SQLite store
 * holding the shared store's rows and row ids), its recall arrays, and what this machine pushed.
 */
export function mirrorStorePath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "shared.db");
}

export function mirrorSnapshotPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "shared-recall.bin");
}

export function mirrorLockPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "shared.lock");
}

export function pushStatePath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "push.json");
}

/** Session summaries, newest last: what the SessionStart prelude injects. */
export function summaryPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "summary.md");
}

/** The project's indexer lock (also held by `forget`, which rewrites the store and chats.jsonl). */
export function indexLockPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "index.lock");
}

/** Per-session capture state: how far each transcript was read. */
export function captureStateDir(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "capture");
}

/** One file per live session not ended yet: SessionStart reads them to the end if SessionEnd never ran. */
export function openSessionsDir(projectRoot: string): string {
  return join(captureStateDir(projectRoot), "open");
}

/** The same for Codex, Cursor and OpenCode sessions (`capture-agent`): one `<agent>-<session>.json` each. */
export function agentCaptureStateDir(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "agent-capture");
}

/** One line per hook or tool run (event, duration, outcome, tokens): the ledger `status` and `doctor` read (ledger.ts). */
export function hookLedgerPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "hooks.jsonl");
}

/** Records of runs that may not load node:fs (the prelude), one small file each, folded into hooks.jsonl later. */
export function hookPendingDir(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "hooks.pending");
}

/** Chunks a person pinned (web page) for the SessionStart prelude to always carry (src/memory/pins.ts). */
export function pinsPath(projectRoot: string): string {
  return join(projectDataDir(projectRoot), "pins.json");
}

/** The HTTP server's bearer token, generated once and stored with mode 0600 (src/http/auth.ts). */
export function httpTokenPath(): string {
  return join(dataDir(), "http", "token");
}

/** The RAG service's catalog of ingested workspaces and remote vectors (`triforge ingest --db`'s default). */
export function ragCatalogPath(): string {
  return join(dataDir(), "http", "catalog.db");
}

/** Where failures are logged: the project's errors.log, or the global one when no project is known. */
export function errorLogPath(projectRoot?: string): string {
  return join(projectRoot ? projectDataDir(projectRoot) : dataDir(), "errors.log");
}
