import {
  appendJsonArrayItem,
  getJsonValue,
  type JsonPath,
  removeJsonArrayItem,
  removeJsonValue,
  setJsonValue,
} from "./json-edit.ts";
import {
  addLine,
  type CommentStyle,
  getTomlTable,
  removeLine,
  removeSection,
  removeTomlTable,
  upsertSection,
  upsertTomlTable,
} from "./text-edit.ts";

/** One thing triforge wants in a file. Every kind has an exact inverse (see revertEdit). */
export type Edit =
  /** Set the value at a JSON path; with `keepExisting`, a value already there (the user's own) wins. */
  | { kind: "json"; path: JsonPath; value: unknown; keepExisting?: boolean }
  /** Append an element to a JSON array (hooks), unless an equal element is there. */
  | { kind: "json-append"; path: JsonPath; value: unknown }
  /**
   * A section between `<!-- id:begin -->` / `<!-- id:end -->` markers (Markdown), or between
   * `# id:begin` / `# id:end` lines with `comments: "hash"` (git's ignore files).
   */
  | { kind: "section"; id: string; body: string; comments?: CommentStyle }
  /** A single line (e.g. `@AGENTS.md` in CLAUDE.md). */
  | { kind: "line"; line: string }
  /** A TOML table `[name]` (header and key lines). */
  | { kind: "toml-table"; name: string; table: string }
  /**
   * The whole file. `createOnly`: never overwrite a file that exists (the user's config wins).
   * `force`: removed on revert even after someone edited it (its presence alone has an effect).
   */
  | { kind: "file"; content: string; createOnly?: boolean; force?: boolean };

/** An edit as applied, with what its revert needs: the value it replaced, the parents it created. */
export type Applied = Edit & { previous?: unknown; createdParents?: number };

/** The target an edit addresses, so a second install finds its first application. */
export function editTarget(edit: Edit): string {
  switch (edit.kind) {
    case "json":
    case "json-append":
      return `${edit.kind}:${JSON.stringify(edit.path)}${edit.kind === "json-append" ? JSON.stringify(edit.value) : ""}`;
    case "section":
      return `section:${edit.id}`;
    case "line":
      return `line:${edit.line}`;
    case "toml-table":
      return `toml:${edit.name}`;
    case "file":
      return "file";
  }
}

/** Applies one edit to `text` (`undefined`: the file does not exist). `applied` is null when nothing changed. */
export function applyEdit(
  text: string | undefined,
  edit: Edit,
  file: string,
): { text: string | undefined; applied: Applied | null } {
  const current = text ?? "";
  switch (edit.kind) {
    case "json": {
      const previous = current === "" ? undefined : getJsonValue(current, edit.path, file);
      if (
        previous !== undefined &&
        (edit.keepExisting || JSON.stringify(previous) === JSON.stringify(edit.value))
      ) {
        return { text, applied: null };
      }
      const result = setJsonValue(current, edit.path, edit.value, file);
      return { text: result.text, applied: { ...edit, previous, createdParents: result.createdParents } };
    }
    case "json-append": {
      const existed = current !== "" && getJsonValue(current, edit.path, file) !== undefined;
      const result = appendJsonArrayItem(current, edit.path, edit.value, file);
      if (result.text === current) return { text, applied: null };
      // createdParents counts the array itself too when we made it.
      return {
        text: result.text,
        applied: { ...edit, createdParents: existed ? undefined : result.createdParents + 1 },
      };
    }
    case "section": {
      const next = upsertSection(current, edit.id, edit.body, edit.comments);
      return next === current ? { text, applied: null } : { text: next, applied: edit };
    }
    case "line": {
      const next = addLine(current, edit.line);
      return next === current ? { text, applied: null } : { text: next, applied: edit };
    }
    case "toml-table": {
      const previous = getTomlTable(current, edit.name);
      const next = upsertTomlTable(current, edit.name, edit.table);
      return next === current ? { text, applied: null } : { text: next, applied: { ...edit, previous } };
    }
    case "file":
      if (edit.content === text || (edit.createOnly && text !== undefined)) return { text, applied: null };
      return { text: edit.content, applied: { ...edit, previous: text } };
  }
}

/**
 * Undoes one applied edit on the file as it is now (someone may have changed it since).
 * Returns the new text, or `undefined` when the file should be deleted.
 */
export function revertEdit(
  text: string,
  applied: Applied,
  file: string,
): { text: string | undefined; note?: string } {
  switch (applied.kind) {
    case "json":
      if (applied.previous !== undefined)
        return { text: setJsonValue(text, applied.path, applied.previous, file).text };
      return { text: removeJsonValue(text, applied.path, applied.createdParents ?? 0, file) };
    case "json-append": {
      const created = applied.createdParents !== undefined;
      const parents = created ? applied.createdParents! - 1 : 0;
      return { text: removeJsonArrayItem(text, applied.path, applied.value, created, parents, file) };
    }
    case "section":
      return { text: removeSection(text, applied.id, applied.comments) };
    case "line":
      return { text: removeLine(text, applied.line) };
    case "toml-table":
      return { text: removeTomlTable(text, applied.name, applied.previous as string | undefined) };
    case "file":
      if (text === applied.content || applied.force) return { text: applied.previous as string | undefined };
      return { text, note: "changed since it was written; left in place" };
  }
}

/**
 * This run's application of an edit, joined with the earlier run's record of the same target:
 * the earliest `previous` (and parents created) is kept, because that is what the file held
 * before triforge ever touched it.
 */
export function joinApplied(earlier: Applied | undefined, now: Applied | null): Applied | null {
  if (!earlier) return now;
  if (!now) return earlier;
  return { ...now, previous: earlier.previous, createdParents: earlier.createdParents };
}
