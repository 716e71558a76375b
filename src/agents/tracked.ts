import { createHash } from "node:crypto";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { type Applied, applyEdit, type Edit, editTarget, joinApplied, revertEdit } from "./edits.ts";

/**
 * Thin file I/O around the pure edits: applies a set of wanted edits to real files while keeping a
 * record (in the data directory) of exactly what changed, so that it can be undone:
 * byte for byte when nobody touched a file since, else edit by edit.
 */

/** The edits wanted in one file. */
export interface FileChange {
  path: string;
  edits: Edit[];
  /** Throws when a text is not valid for the format (run before and after editing). */
  validate?: (text: string) => void;
  /** What the file holds for triforge, in a few words, for the report of what was written. */
  purpose?: string;
}

export interface FileRecord {
  path: string;
  /** Whether the file existed before triforge first changed it. */
  existed: boolean;
  /** A copy of the file as it was before triforge first changed it (when it existed). */
  backup?: string;
  /** False once someone else changed the file between two of our runs: the backup is stale. */
  byteRestore: boolean;
  /** sha256 of the file as triforge last left it. */
  afterSha256: string;
  edits: Applied[];
}

export interface ChangeRecord {
  version: 1;
  updatedAt: string;
  files: FileRecord[];
  /** Folders this record created, removed on revert when left empty. */
  dirs: string[];
  /** Every copy this record made of a file before changing it; deleted once it is undone. */
  backups: string[];
  /** For an activation: the project root. */
  project?: string;
}

export type Outcome = {
  path: string;
  action: "created" | "updated" | "unchanged" | "restored" | "removed" | "reverted" | "missing";
  note?: string;
  /** The change's purpose (install and activate say what each file they wrote is for). */
  purpose?: string;
};

export function sha256(text: string | Buffer): string {
  return createHash("sha256").update(text).digest("hex");
}

export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Writes via a temporary file and a rename, so a reader never sees half a config. */
export function writeAtomic(path: string, text: string): void {
  const temporary = join(dirname(path), `.${basename(path)}.triforge-${process.pid}.tmp`);
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/** How often a file that keeps changing under us is re-read and edited again before we give up. */
const SWAP_ATTEMPTS = 20;
/** A file another process is half-way through writing (not valid yet) is read again after this. */
const HALF_WRITTEN_WAIT_MS = 10;

/**
 * Replaces `path`, whose content we read as `expected`, with `edit(expected)`, without losing a write
 * another process makes meanwhile (Claude Code rewrites `~/.claude.json` at any moment, in place).
 * A compare-and-swap: the file about to be replaced is held by a hard link; if it no longer holds
 * `expected` just before the rename, the edit is made again on what it holds now. If someone wrote
 * into it between that check and the rename, their file is renamed back at once (their write may
 * still be going on in it) and the edit is made again on it. Creating a file is a link that fails
 * when someone created it first. A file that does not parse, or was emptied, is taken for one being
 * written and read again shortly; at most SWAP_ATTEMPTS tries in all.
 * What remains: a writer that renames a file into place in the microseconds between our last check
 * and our rename loses it, and a reader in the microseconds before we rename their file back sees
 * ours. `beforeSwap` lets a test write at the last moment before the check.
 * Returns the edit's result and the content it was made on (`before`).
 */
export function swapFile<T extends { text: string | undefined }>(
  path: string,
  expected: string | undefined,
  edit: (current: string | undefined) => T,
  beforeSwap?: () => void,
): T & { before: string | undefined } {
  let current = expected;
  let failure: unknown;
  for (let attempt = 0; attempt < SWAP_ATTEMPTS; attempt++) {
    if (attempt > 0 && current === "" && current !== expected) {
      // Emptied, or just created empty: its writer opened it and has not written yet. An edit of ""
      // would drop the whole file, or land in an inode the writer is about to fill.
      Bun.sleepSync(HALF_WRITTEN_WAIT_MS);
      current = readText(path);
      continue;
    }
    let result: T;
    try {
      result = edit(current);
    } catch (error) {
      // The file we planned on was valid; a new one that is not may be half written: look again.
      if (current === expected) throw error;
      failure = error;
      Bun.sleepSync(HALF_WRITTEN_WAIT_MS);
      current = readText(path);
      continue;
    }
    const swapped = swapOnce(path, current, result.text, beforeSwap);
    if (swapped.done) return { ...result, before: current };
    current = swapped.current;
  }
  throw new Error(
    `${path} kept changing while triforge edited it${failure ? ` (${(failure as Error).message})` : ""}; run the command again`,
  );
}

/** One compare-and-swap; when it fails, `current` is what the file holds instead of `expected`. */
function swapOnce(
  path: string,
  expected: string | undefined,
  text: string | undefined,
  beforeSwap?: () => void,
): { done: true } | { done: false; current: string | undefined } {
  const failed = () => ({ done: false as const, current: readText(path) });
  if (text === expected) {
    // Nothing to write, as long as the file still holds what the edit was made on.
    return readText(path) === expected ? { done: true } : failed();
  }
  const scratch = (what: string) => join(dirname(path), `.${basename(path)}.triforge-${process.pid}.${what}`);
  const temporary = scratch("tmp");
  const held = scratch("held");
  if (text !== undefined) writeFileSync(temporary, text);
  try {
    if (expected === undefined) {
      beforeSwap?.();
      try {
        if (text !== undefined) linkSync(temporary, path);
        return { done: true };
      } catch (error) {
        if (noHardLinks(error)) return plainSwap(path, expected, text, temporary) ? { done: true } : failed();
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        return failed();
      }
    }
    try {
      linkSync(path, held);
    } catch (error) {
      if (noHardLinks(error)) return plainSwap(path, expected, text, temporary) ? { done: true } : failed();
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      return failed();
    }
    beforeSwap?.();
    // Still the file we hold (not renamed over), and still holding what the edit was made on.
    if (statSync(path, { throwIfNoEntry: false })?.ino !== statSync(held).ino) return failed();
    if (readText(held) !== expected) return failed();
    if (text === undefined) rmSync(path);
    else renameSync(temporary, path);
    if (readText(held) === expected) return { done: true };
    // Written into between the check and the rename: theirs goes back, and the edit is made again.
    renameSync(held, path);
    return failed();
  } finally {
    rmSync(temporary, { force: true });
    rmSync(held, { force: true });
  }
}

/** A file system without hard links (FAT, some network shares) answers link() with one of these. */
function noHardLinks(error: unknown): boolean {
  // EISDIR: how libuv reports Windows' ERROR_INVALID_FUNCTION (CreateHardLink on FAT/exFAT).
  return ["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EISDIR"].includes(
    (error as NodeJS.ErrnoException).code ?? "",
  );
}

/**
 * Where hard links are refused: compare, then rename. The window in which another writer's change is
 * lost is the time between the read and the rename (microseconds), not the whole edit.
 */
function plainSwap(
  path: string,
  expected: string | undefined,
  text: string | undefined,
  temporary: string,
): boolean {
  if (readText(path) !== expected) return false;
  if (text === undefined) rmSync(path, { force: true });
  else renameSync(temporary, path);
  return true;
}

/** Creates `dir` and its missing parents; returns the ones it created, outermost first. */
export function makeDirs(dir: string): string[] {
  const created: string[] = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) created.unshift(d);
  if (created.length) mkdirSync(dir, { recursive: true });
  return created;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}

/** Keeps a timestamped copy of a file we are about to change. */
function backupFile(path: string, text: string, backupsDir: string): string {
  mkdirSync(backupsDir, { recursive: true });
  const name = `${basename(path).replace(/^\./, "")}.${sha256(path).slice(0, 8)}.${timestamp()}`;
  const target = join(backupsDir, name);
  writeFileSync(target, text);
  return target;
}

/** The text a file should hold, made from `current`: edits no longer wanted undone, wanted ones applied. */
function planEdits(
  change: FileChange,
  earlier: FileRecord | undefined,
  current: string | undefined,
): { text: string | undefined; applied: Applied[] } {
  if (current !== undefined) change.validate?.(current);
  const wanted = new Set(change.edits.map(editTarget));
  let text = current;
  for (const stale of [...(earlier?.edits ?? [])].reverse()) {
    if (!wanted.has(editTarget(stale)) && text !== undefined)
      text = revertEdit(text, stale, change.path).text;
  }
  const applied: Applied[] = [];
  for (const edit of change.edits) {
    const result = applyEdit(text, edit, change.path);
    text = result.text;
    const joined = joinApplied(
      earlier?.edits.find((e) => editTarget(e) === editTarget(edit)),
      result.applied,
    );
    if (joined) applied.push(joined);
  }
  if (text !== undefined && text !== current) change.validate?.(text);
  return { text, applied };
}

/**
 * Brings each file to the wanted state and returns the updated record. Edits recorded by an
 * earlier run that this run no longer wants are undone first; a file already in the wanted
 * state is not written at all (a second run changes nothing).
 */
export function applyChanges(
  record: ChangeRecord | undefined,
  changes: FileChange[],
  backupsDir: string,
  options: {
    beforeSwap?: () => void;
    /**
     * Writes the record so far; called after each file written, so a run that fails (or is killed)
     * part-way still leaves a record of the files it changed for uninstall/deactivate to undo.
     */
    save?: (record: ChangeRecord) => void;
  } = {},
) {
  const next: ChangeRecord = record
    ? structuredClone(record)
    : { version: 1, updatedAt: "", files: [], dirs: [], backups: [] };
  // First every new text (a bad file stops the run before anything is written), then the writes.
  const planned = changes.map((change) => {
    const current = readText(change.path);
    const earlier = next.files.find((f) => f.path === change.path);
    const plan = (text: string | undefined) => planEdits(change, earlier, text);
    return { change, current, earlier, plan, planned: plan(current) };
  });
  const outcomes: Outcome[] = [];
  for (const { change, current: read, earlier, plan, planned: first } of planned) {
    const path = change.path;
    const purpose = change.purpose ? { purpose: change.purpose } : {};
    if (first.text === read) {
      outcomes.push({ path, action: "unchanged", ...purpose });
      continue;
    }
    for (const dir of makeDirs(dirname(path))) if (!next.dirs.includes(dir)) next.dirs.push(dir);
    // Backed up before the write: a file written without its backup could not be restored.
    let backup = read === undefined ? undefined : backupFile(path, read, backupsDir);
    // Re-read right before writing: the edit lands on what the file holds then, not on our first read.
    let swapped: ReturnType<typeof swapFile<ReturnType<typeof plan>>>;
    try {
      swapped = swapFile(path, read, plan, options.beforeSwap);
    } catch (error) {
      if (backup) rmSync(backup, { force: true }); // nothing was written: no backup to keep
      throw error;
    }
    const { text, applied, before: current } = swapped;
    if (current !== read) {
      // Changed between our read and the write: what was replaced is what to keep.
      if (backup) rmSync(backup, { force: true });
      backup = current === undefined ? undefined : backupFile(path, current, backupsDir);
    }
    if (text === current) {
      // Someone made the same change meanwhile.
      if (backup) rmSync(backup, { force: true });
      outcomes.push({ path, action: "unchanged", ...purpose });
      continue;
    }
    if (backup) next.backups.push(backup);
    const untouchedSince =
      earlier !== undefined && current !== undefined && sha256(current) === earlier.afterSha256;
    const entry: FileRecord = earlier
      ? {
          ...earlier,
          byteRestore: earlier.byteRestore && untouchedSince,
          afterSha256: sha256(text ?? ""),
          edits: applied,
        }
      : {
          path,
          existed: current !== undefined,
          backup,
          byteRestore: true,
          afterSha256: sha256(text ?? ""),
          edits: applied,
        };
    if (earlier) next.files[next.files.indexOf(earlier)] = entry;
    else next.files.push(entry);
    outcomes.push({ path, action: current === undefined ? "created" : "updated", ...purpose });
    next.updatedAt = new Date().toISOString();
    options.save?.(next);
  }
  next.updatedAt = new Date().toISOString();
  return { record: next, outcomes };
}

/** What undoing one file's record makes of the file as it is now (`current`). */
function revertPlan(
  file: FileRecord,
  current: string | undefined,
): { text: string | undefined; action: Outcome["action"]; note?: string } {
  if (current === undefined) return { text: undefined, action: "missing" };
  if (file.byteRestore && sha256(current) === file.afterSha256) {
    if (!file.existed) return { text: undefined, action: "removed" };
    const original = file.backup ? readText(file.backup) : undefined;
    if (original !== undefined) return { text: original, action: "restored" };
  }
  let text: string | undefined = current;
  const notes: string[] = [];
  for (const edit of [...file.edits].reverse()) {
    if (text === undefined) break;
    const result = revertEdit(text, edit, file.path);
    text = result.text;
    if (result.note) notes.push(result.note);
  }
  // A file triforge created and that is now empty goes, rather than stay as an empty husk.
  if (!file.existed && text?.trim() === "") text = undefined;
  const note = notes.join("; ") || undefined;
  if (text === current) return { text, action: "unchanged", note };
  return { text, action: text === undefined ? "removed" : "reverted", note };
}

/** Undoes everything a record holds, then drops its backups; returns what happened to each file. */
export function revertChanges(record: ChangeRecord, backupsDir: string): Outcome[] {
  const outcomes: Outcome[] = [];
  for (const file of [...record.files].reverse()) {
    const read = readText(file.path);
    const first = revertPlan(file, read);
    // Like install, the undo lands on what the file holds at the moment it is replaced.
    const { action, note } =
      first.text === read ? first : swapFile(file.path, read, (current) => revertPlan(file, current));
    outcomes.push({ path: file.path, action, ...(note ? { note } : {}) });
  }
  for (const backup of record.backups ?? []) rmSync(backup, { force: true });
  removeIfEmpty(backupsDir);
  for (const dir of [...record.dirs].reverse()) removeIfEmpty(dir);
  return outcomes;
}

/**
 * Undoes only the recorded edits `pick` selects (one server among several), on each file as it is now;
 * the rest stays recorded for uninstall/deactivate. Returns the record without them.
 */
export function revertEdits(
  record: ChangeRecord,
  pick: (edit: Applied) => boolean,
): { record: ChangeRecord; outcomes: Outcome[] } {
  const next = structuredClone(record);
  const outcomes: Outcome[] = [];
  for (const file of next.files) {
    const picked = file.edits.filter(pick);
    if (picked.length === 0) continue;
    const read = readText(file.path);
    const kept = file.edits.filter((edit) => !pick(edit));
    if (read === undefined) {
      outcomes.push({ path: file.path, action: "missing" });
      file.edits = kept;
      continue;
    }
    const undo = (current: string | undefined) => {
      let text = current;
      for (const edit of [...picked].reverse())
        if (text !== undefined) text = revertEdit(text, edit, file.path).text;
      return { text };
    };
    const { text, before } = swapFile(file.path, read, undo);
    // Byte-for-byte restore stays possible only when nobody touched the file since our last write.
    file.byteRestore = file.byteRestore && before !== undefined && sha256(before) === file.afterSha256;
    file.afterSha256 = sha256(text ?? "");
    file.edits = kept;
    outcomes.push({ path: file.path, action: text === before ? "unchanged" : "reverted" });
  }
  next.updatedAt = new Date().toISOString();
  return { record: next, outcomes };
}

export function removeIfEmpty(dir: string): void {
  try {
    if (readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    // Already gone or not ours to judge: either way nothing to remove.
  }
}

export function readRecord(path: string): ChangeRecord | undefined {
  const text = readText(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as ChangeRecord;
  } catch (error) {
    throw new Error(`${path}: unreadable record (${(error as Error).message}); move it away to start afresh`);
  }
}

export function writeRecord(path: string, record: ChangeRecord): void {
  mkdirSync(dirname(path), { recursive: true });
  writeAtomic(path, `${JSON.stringify(record, null, 2)}\n`);
}
