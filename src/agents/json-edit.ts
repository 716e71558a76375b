import { findNodeAtLocation, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";

/**
 * Minimal textual edits of JSON / JSONC documents: only the bytes of the property being set or
 * removed change, so comments, key order, indentation and every untouched byte stay as they were.
 * (jsonc-parser's own `modify` re-formats neighbouring lines, which is why we place text ourselves.)
 */

export type JsonPath = string[];

export interface JsonStyle {
  /** One level of indentation as it appears in the file: "  ", "    " or "\t". */
  indent: string;
  eol: "\n" | "\r\n";
}

/** The indentation and line ending the file already uses; two spaces and "\n" for a new file. */
export function detectStyle(text: string): JsonStyle {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const match = /\n([ \t]+)["}\]]/.exec(text);
  let indent = "  ";
  if (match) indent = match[1].startsWith("\t") ? "\t" : " ".repeat(Math.min(match[1].length, 8));
  return { indent, eol };
}

/** Parses JSON/JSONC into a tree with offsets; a syntax error names the file and the position. */
export function parseDocument(text: string, file: string): Node | undefined {
  if (text.trim() === "") return undefined;
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const { error, offset } = errors[0];
    const line = text.slice(0, offset).split("\n").length;
    throw new Error(
      `${file}: invalid JSON (${printParseErrorCode(error)} at line ${line}); fix or move the file, then run again`,
    );
  }
  if (root?.type !== "object") throw new Error(`${file}: expected a JSON object at the top level`);
  return root;
}

function nodeValue(node: Node): unknown {
  switch (node.type) {
    case "object":
      return Object.fromEntries(
        (node.children ?? []).map((p) => [p.children![0].value as string, nodeValue(p.children![1])]),
      );
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

/** The value at `path`, or undefined when any part of the path is missing. */
export function getJsonValue(text: string, path: JsonPath, file = "document"): unknown {
  const root = parseDocument(text, file);
  const node = root && findNodeAtLocation(root, path);
  return node ? nodeValue(node) : undefined;
}

/** The whitespace before the line that holds `offset`. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

function serialize(value: unknown, style: JsonStyle, baseIndent: string): string {
  return JSON.stringify(value, null, style.indent).replaceAll("\n", style.eol + baseIndent);
}

/** Adds `key: value` as the last property of `object` (a node of `text`). */
function insertProperty(text: string, object: Node, key: string, value: unknown, style: JsonStyle): string {
  const closing = object.offset + object.length - 1;
  const outer = lineIndent(text, object.offset);
  const properties = object.children ?? [];
  if (properties.length === 0) {
    const inner = outer + style.indent;
    const body = `${style.eol}${inner}${JSON.stringify(key)}: ${serialize(value, style, inner)}${style.eol}${outer}`;
    return text.slice(0, object.offset + 1) + body + text.slice(closing);
  }
  const last = properties[properties.length - 1];
  const inner = lineIndent(text, last.offset);
  const lastEnd = last.offset + last.length;
  const entry = `${JSON.stringify(key)}: ${serialize(value, style, inner)}`;
  const lineBreak = text.indexOf("\n", lastEnd);
  if (lineBreak >= 0 && lineBreak < closing) {
    const lineEnd = text[lineBreak - 1] === "\r" ? lineBreak - 1 : lineBreak;
    const rest = text.slice(lastEnd, lineEnd);
    // What follows the last property on its line (a comma, a comment) stays on that line.
    if (/^\s*,?\s*(\/\/.*|\/\*.*\*\/\s*)?$/.test(rest)) {
      // JSONC allows a trailing comma after the last property; keep the file's habit.
      if (/^\s*,/.test(rest))
        return `${text.slice(0, lineEnd)}${style.eol}${inner}${entry},${text.slice(lineEnd)}`;
      return `${text.slice(0, lastEnd)},${rest}${style.eol}${inner}${entry}${text.slice(lineEnd)}`;
    }
  }
  // An object written on one line: the new property follows on a line of its own.
  return `${text.slice(0, lastEnd)},${style.eol}${inner}${entry}${text.slice(lastEnd)}`;
}

/**
 * Sets the value at `path`, creating missing parent objects. Returns the new text and how many
 * parent objects it had to create (so that a later removal can take them away again).
 */
export function setJsonValue(
  text: string,
  path: JsonPath,
  value: unknown,
  file = "document",
): { text: string; createdParents: number } {
  const style = detectStyle(text);
  const root = parseDocument(text, file);
  if (!root)
    return {
      text: `${serialize(nest(path, value), style, "")}${style.eol}`,
      createdParents: path.length - 1,
    };
  const existing = findNodeAtLocation(root, path);
  if (existing) {
    if (JSON.stringify(nodeValue(existing)) === JSON.stringify(value)) return { text, createdParents: 0 };
    const indent = lineIndent(text, existing.parent?.offset ?? existing.offset);
    const replaced =
      text.slice(0, existing.offset) +
      serialize(value, style, indent) +
      text.slice(existing.offset + existing.length);
    return { text: replaced, createdParents: 0 };
  }
  // The deepest existing object on the path receives the rest of the path as one nested value.
  let depth = path.length - 1;
  let parent = findNodeAtLocation(root, path.slice(0, depth));
  while (!parent && depth > 0) parent = findNodeAtLocation(root, path.slice(0, --depth));
  parent ??= root;
  if (parent.type !== "object")
    throw new Error(`${file}: ${path.slice(0, depth).join(".")} is not an object`);
  const rest = path.slice(depth);
  return {
    text: insertProperty(text, parent, rest[0], nest(rest.slice(1), value), style),
    createdParents: rest.length - 1,
  };
}

function nest(path: JsonPath, value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/** Removes a property node (the `"key": value` pair) together with the comma that joined it. */
function removePropertyNode(text: string, property: Node): string {
  const object = property.parent!;
  const siblings = object.children!;
  const index = siblings.indexOf(property);
  const end = property.offset + property.length;
  const trailingComma = /^\s*,/.exec(text.slice(end));
  if (siblings.length === 1) {
    const closing = object.offset + object.length - 1;
    // The only property: the object becomes `{}`, unless comments inside it must stay.
    if (!/\/\/|\/\*/.test(text.slice(object.offset + 1, closing)))
      return text.slice(0, object.offset + 1) + text.slice(closing);
    return text.slice(0, property.offset) + text.slice(end + (trailingComma?.[0].length ?? 0));
  }
  if (index > 0) {
    const previousEnd = siblings[index - 1].offset + siblings[index - 1].length;
    const between = text.slice(previousEnd, property.offset);
    if (!between.includes("\n")) return text.slice(0, previousEnd) + text.slice(end); // one-line object
    // Our line goes, from the line break before it, with the comma after us...
    let start = previousEnd + between.lastIndexOf("\n");
    if (text[start - 1] === "\r") start--;
    const commaAfter = /^[ \t]*,/.exec(text.slice(end));
    let result = text.slice(0, start) + text.slice(end + (commaAfter?.[0].length ?? 0));
    // ...and when we were last without a trailing comma, the comma that joined us to the one before.
    const commaBefore = /^\s*,/.exec(between);
    if (!commaAfter && index === siblings.length - 1 && commaBefore) {
      const comma = previousEnd + commaBefore[0].length - 1;
      result = result.slice(0, comma) + result.slice(comma + 1);
    }
    return result;
  }
  // The first of several: cut up to the start of the next property.
  return text.slice(0, property.offset) + text.slice(siblings[index + 1].offset);
}

/**
 * Removes the property at `path`; then removes up to `emptyParents` enclosing objects that were
 * left empty (the ones `setJsonValue` created). A missing path leaves the text as it is.
 */
export function removeJsonValue(text: string, path: JsonPath, emptyParents = 0, file = "document"): string {
  const root = parseDocument(text, file);
  const node = root && findNodeAtLocation(root, path);
  if (!node?.parent) return text;
  let result = removePropertyNode(text, node.parent);
  for (let level = 1; level <= emptyParents; level++) {
    const parentPath = path.slice(0, path.length - level);
    const value = getJsonValue(result, parentPath, file);
    if (
      parentPath.length === 0 ||
      typeof value !== "object" ||
      value === null ||
      Object.keys(value).length > 0
    )
      break;
    result = removeJsonValue(result, parentPath, 0, file);
  }
  return result;
}

/** Appends `value` to the array at `path` (created when missing), unless an equal element is there. */
export function appendJsonArrayItem(
  text: string,
  path: JsonPath,
  value: unknown,
  file = "document",
): { text: string; createdParents: number } {
  const root = parseDocument(text, file);
  const array = root && findNodeAtLocation(root, path);
  if (!array) return setJsonValue(text, path, [value], file);
  if (array.type !== "array") throw new Error(`${file}: ${path.join(".")} is not an array`);
  const items = array.children ?? [];
  if (items.some((item) => JSON.stringify(nodeValue(item)) === JSON.stringify(value)))
    return { text, createdParents: 0 };
  const style = detectStyle(text);
  const outer = lineIndent(text, array.offset);
  const closing = array.offset + array.length - 1;
  if (items.length === 0) {
    const inner = outer + style.indent;
    return {
      text: `${text.slice(0, array.offset + 1)}${style.eol}${inner}${serialize(value, style, inner)}${style.eol}${outer}${text.slice(closing)}`,
      createdParents: 0,
    };
  }
  const last = items[items.length - 1];
  const inner = lineIndent(text, last.offset);
  const lastEnd = last.offset + last.length;
  return {
    text: `${text.slice(0, lastEnd)},${style.eol}${inner}${serialize(value, style, inner)}${text.slice(lastEnd)}`,
    createdParents: 0,
  };
}

/**
 * Removes the elements of the array at `path` equal to `value`; an array left empty goes too when
 * `removeEmpty` (we created it), and then up to `emptyParents` enclosing objects left empty.
 */
export function removeJsonArrayItem(
  text: string,
  path: JsonPath,
  value: unknown,
  removeEmpty: boolean,
  emptyParents: number,
  file = "document",
): string {
  const wanted = JSON.stringify(value);
  for (;;) {
    const root = parseDocument(text, file);
    const array = root && findNodeAtLocation(root, path);
    if (array?.type !== "array") return text;
    const items = array.children ?? [];
    const index = items.findIndex((item) => JSON.stringify(nodeValue(item)) === wanted);
    if (index < 0) return text;
    if (items.length === 1) {
      if (removeEmpty) return removeJsonValue(text, path, emptyParents, file);
      text = text.slice(0, array.offset + 1) + text.slice(array.offset + array.length - 1);
    } else if (index > 0) {
      // Cut from the end of the previous element, taking the comma that joined ours.
      text =
        text.slice(0, items[index - 1].offset + items[index - 1].length) +
        text.slice(items[index].offset + items[index].length);
    } else {
      text = text.slice(0, items[0].offset) + text.slice(items[1].offset);
    }
  }
}
