/**
 * Edits of plain-text files (Markdown instructions, TOML) that touch only our own lines:
 * a section between markers, a single line, a TOML table. Each `add` has a `remove` that undoes it.
 */

export function eolOf(text: string): "\n" | "\r\n" {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

/**
 * How a section's markers are written: as HTML comments (Markdown), or as `#` comment lines for files
 * where `<!--` would be content (git's ignore files).
 */
export type CommentStyle = "html" | "hash";

const markers = (id: string, style: CommentStyle) =>
  style === "hash"
    ? { begin: `# ${id}:begin (managed by triforge; removed by uninstall/deactivate)`, end: `# ${id}:end` }
    : {
        begin: `<!-- ${id}:begin (managed by triforge; removed by uninstall/deactivate) -->`,
        end: `<!-- ${id}:end -->`,
      };

const BEGIN_PATTERN = (id: string, style: CommentStyle) =>
  style === "hash"
    ? new RegExp(`^# ${id}:begin\\b.*$`, "m")
    : new RegExp(`^<!-- ${id}:begin\\b.*-->[ \\t]*$`, "m");
const END_PATTERN = (id: string, style: CommentStyle) =>
  style === "hash" ? new RegExp(`^# ${id}:end[ \\t]*$`, "m") : new RegExp(`^<!-- ${id}:end -->[ \\t]*$`, "m");

/** Where the marked section lies: [start of begin marker, end of end marker line incl. its break]. */
function findSection(text: string, id: string, style: CommentStyle): [number, number] | undefined {
  const begin = BEGIN_PATTERN(id, style).exec(text);
  if (!begin) return undefined;
  const end = END_PATTERN(id, style).exec(text.slice(begin.index));
  if (!end) return undefined;
  let stop = begin.index + end.index + end[0].length;
  if (text.startsWith("\r\n", stop)) stop += 2;
  else if (text[stop] === "\n") stop += 1;
  return [begin.index, stop];
}

/**
 * Puts `body` between the markers of `id`: replaced in place when the section exists, else
 * appended after one blank line. Unchanged text comes back when the section already says `body`.
 */
export function upsertSection(text: string, id: string, body: string, style: CommentStyle = "html"): string {
  const eol = eolOf(text);
  const { begin, end } = markers(id, style);
  const block = [begin, ...body.trimEnd().split("\n"), end].join(eol) + eol;
  const found = findSection(text, id, style);
  if (found) return text.slice(0, found[0]) + block + text.slice(found[1]);
  if (text === "") return block;
  const separator = text.endsWith(eol + eol) ? "" : text.endsWith(eol) ? eol : eol + eol;
  return text + separator + block;
}

/** Removes the section of `id` and the blank line that separated it from the text before it. */
export function removeSection(text: string, id: string, style: CommentStyle = "html"): string {
  const found = findSection(text, id, style);
  if (!found) return text;
  let [start] = found;
  const eol = eolOf(text);
  const before = text.slice(0, start);
  // Take back the separator upsertSection added (one blank line), never the user's own text.
  if (before.endsWith(eol + eol)) start -= eol.length;
  return text.slice(0, start) + text.slice(found[1]);
}

/** Appends `line` unless a line equal to it (ignoring surrounding spaces) is already there. */
export function addLine(text: string, line: string): string {
  const eol = eolOf(text);
  if (text.split(/\r?\n/).some((l) => l.trim() === line)) return text;
  if (text === "") return line + eol;
  const separator = text.endsWith(eol + eol) ? "" : text.endsWith(eol) ? eol : eol + eol;
  return text + separator + line + eol;
}

/** Removes the last line equal to `line`, and the blank line addLine put before it. */
export function removeLine(text: string, line: string): string {
  const eol = eolOf(text);
  const lines = text.split(eol);
  const index = lines.findLastIndex((l) => l.trim() === line);
  if (index < 0) return text;
  const from = index > 0 && lines[index - 1] === "" && index === lines.length - 2 ? index - 1 : index;
  lines.splice(from, index - from + 1);
  return lines.join(eol);
}

/** TOML: `[name]` headers (optionally quoted parts) and where each table's lines end. */
const TOML_HEADER = /^[ \t]*\[(?!\[)\s*([^\]#]+?)\s*\][ \t]*(#.*)?$/;

function tomlKey(header: string): string {
  return header
    .split(".")
    .map((part) =>
      part
        .trim()
        .replace(/^"(.*)"$/, "$1")
        .replace(/^'(.*)'$/, "$1"),
    )
    .join(".");
}

/** [start, end) line indexes of table `name`: its header through the line before the next header. */
function findTable(lines: string[], name: string): [number, number] | undefined {
  const start = lines.findIndex((line) => {
    const m = TOML_HEADER.exec(line);
    return m !== null && tomlKey(m[1]) === name;
  });
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length && !/^[ \t]*\[/.test(lines[end])) end++;
  // Blank lines before the next header belong to the gap, not to the table.
  while (end > start + 1 && lines[end - 1].trim() === "") end--;
  return [start, end];
}

/** A TOML basic string; JSON's escapes are a subset of TOML's. */
export function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** The text of table `name` as it stands (header included), or undefined. */
export function getTomlTable(text: string, name: string): string | undefined {
  const lines = text.split(eolOf(text));
  const found = findTable(lines, name);
  return found ? lines.slice(found[0], found[1]).join(eolOf(text)) : undefined;
}

/** Replaces table `name` with `table` (header + key lines), or appends it after a blank line. */
export function upsertTomlTable(text: string, name: string, table: string): string {
  const eol = eolOf(text);
  const lines = text.split(eol);
  const found = findTable(lines, name);
  const tableLines = table.trimEnd().split("\n");
  if (found) {
    lines.splice(found[0], found[1] - found[0], ...tableLines);
    return lines.join(eol);
  }
  if (text === "") return tableLines.join(eol) + eol;
  const separator = text.endsWith(eol + eol) ? "" : text.endsWith(eol) ? eol : eol + eol;
  return text + separator + tableLines.join(eol) + eol;
}

/** Removes table `name` and the blank line before it; `previous` (a table's text) is put back instead. */
export function removeTomlTable(text: string, name: string, previous?: string): string {
  if (previous !== undefined) return upsertTomlTable(text, name, previous);
  const eol = eolOf(text);
  const lines = text.split(eol);
  const found = findTable(lines, name);
  if (!found) return text;
  let [start, end] = found;
  let after = end;
  while (after < lines.length - 1 && lines[after].trim() === "") after++;
  // More tables follow: the gap after us goes. We were last: the gap before us goes.
  if (after < lines.length - 1) end = after;
  else if (start > 0 && lines[start - 1].trim() === "") start--;
  lines.splice(start, end - start);
  return lines.join(eol);
}
