import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
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

/**
 * Brings each file to the wanted state and returns the updated record. Edits recorded by an
 * earlier run that this run no longer wants are undone first; a file already in the wanted
 * state is not written at all (a second run changes nothing).
 */
export function applyChanges(record: ChangeRecord | undefined, changes: FileChange[], backupsDir: string) {
  const next: ChangeRecord = record
    ? structuredClone(record)
    : { version: 1, updatedAt: "", files: [], dirs: [], backups: [] };
  // First every new text (a bad file stops the run before anything is written), then the writes.
  const planned = changes.map((change) => {
    const current = readText(change.path);
    if (current !== undefined) change.validate?.(current);
    const earlier = next.files.find((f) => f.path === change.path);
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
    return { path: change.path, current, earlier, text, applied };
  });
  const outcomes: Outcome[] = [];
  for (const { path, current, earlier, text, applied } of planned) {
    if (text === current) {
      outcomes.push({ path, action: "unchanged" });
      continue;
    }
    for (const dir of makeDirs(dirname(path))) if (!next.dirs.includes(dir)) next.dirs.push(dir);
    const backup = current === undefined ? undefined : backupFile(path, current, backupsDir);
    if (backup) next.backups.push(backup);
    if (text === undefined) rmSync(path, { force: true });
    else writeAtomic(path, text);
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
    outcomes.push({ path, action: current === undefined ? "created" : "updated" });
  }
  next.updatedAt = new Date().toISOString();
  return { record: next, outcomes };
}

/** Undoes everything a record holds, then drops its backups; returns what happened to each file. */
export function revertChanges(record: ChangeRecord, backupsDir: string): Outcome[] {
  const outcomes: Outcome[] = [];
  for (const file of [...record.files].reverse()) {
    const current = readText(file.path);
    if (current === undefined) {
      outcomes.push({ path: file.path, action: "missing" });
      continue;
    }
    if (file.byteRestore && sha256(current) === file.afterSha256) {
      const original = file.existed && file.backup ? readText(file.backup) : undefined;
      if (!file.existed) {
        rmSync(file.path, { force: true });
        outcomes.push({ path: file.path, action: "removed" });
        continue;
      }
      if (original !== undefined) {
        writeAtomic(file.path, original);
        outcomes.push({ path: file.path, action: "restored" });
        continue;
      }
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
    if (text === current) {
      outcomes.push({ path: file.path, action: "unchanged", note: notes.join("; ") || undefined });
      continue;
    }
    if (text === undefined) rmSync(file.path, { force: true });
    else writeAtomic(file.path, text);
    outcomes.push({
      path: file.path,
      action: text === undefined ? "removed" : "reverted",
      note: notes.join("; ") || undefined,
    });
  }
  for (const backup of record.backups ?? []) rmSync(backup, { force: true });
  removeIfEmpty(backupsDir);
  for (const dir of [...record.dirs].reverse()) removeIfEmpty(dir);
  return outcomes;
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
