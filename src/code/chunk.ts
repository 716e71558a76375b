/**
 * Splits a file into chunks of whole lines at syntax boundaries. Every line gets a break score (how
 * good a place it is to start a new chunk): from the tree-sitter syntax tree when the language has a
 * built-in grammar, from indentation and blank lines otherwise. One greedy pass then cuts the file
 * into chunks near TARGET_CHUNK_CHARS, preferring the best-scored breaks.
 */
import type { Language, Node, Parser } from "web-tree-sitter";
import { isSpaceCode } from "../privacy/scan.ts";
import type { GrammarName } from "./languages.ts";

export interface Chunk {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
}

/**
 * About one function or a screenful: small enough that a hit points at the answer, large enough to
 * carry its context. semble's size, kept so our figures compare with its published ones.
 */
export const TARGET_CHUNK_CHARS = 750;
/** A chunk is not cut before this size unless the file ends: tiny chunks rank on noise. */
const MIN_CHUNK_CHARS = Math.round(TARGET_CHUNK_CHARS * 0.3);
/** A chunk grows past the target up to this size to reach a good break (a whole function). */
const MAX_CHUNK_CHARS = Math.round(TARGET_CHUNK_CHARS * 1.6);
/** How much one step of break quality is worth against drifting from the target size (in targets). */
const DISTANCE_WEIGHT = 1.5;

/** Break scores: a top-level definition is the best place to cut, mid-expression the worst. */
const BREAK_TOP_LEVEL = 4;
const BREAK_END_OF_FILE = BREAK_TOP_LEVEL;
/** Deeper syntax levels score lower: a method in a class (3), a statement in a method (2), then 1. */
const MAX_TREE_DEPTH = 3;
/** Nodes smaller than this are never split, so the walk does not descend into them. */
const DESCEND_ABOVE_CHARS = MIN_CHUNK_CHARS;

/** Comments, decorators and attributes belong with the definition that follows them. */
const LEADING_NODE = /comment|decorator|attribute|annotation/;
/**
 * Node types that lead a definition when they start with `@`: Elixir's `@doc`/`@spec` attributes
 * (`unary_operator`; the same type in Python is `-x`).
 */
const LEADING_WHEN_AT = new Set(["unary_operator"]);
const AT_SIGN = 64;

/** Lines that close a block start no chunk: cut after them instead (also `}`, `]` and `)`). */
const CLOSING_WORDS = ["end", "fi", "done", "esac"];

/** [A-Za-z0-9_], what a regular expression's \b sees as a word character. */
function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** Whether the line's first non-blank character, at `at`, closes a block. */
function closesBlock(line: string, at: number): boolean {
  const c = line.charCodeAt(at);
  if (c === 125 || c === 93 || c === 41) return true;
  for (const word of CLOSING_WORDS) {
    if (line.startsWith(word, at) && !isWordChar(line.charCodeAt(at + word.length))) return true;
  }
  return false;
}

/**
 * Scores from indentation alone, for languages without a grammar (and blank-line hints for all).
 * Character codes rather than regular expressions: every line of every file passes here.
 */
export function lineBreakScores(lines: string[]): Int8Array {
  const scores = new Int8Array(lines.length);
  let previousBlank = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let first = 0;
    while (first < line.length && isSpaceCode(line.charCodeAt(first))) first++;
    const blank = first === line.length;
    if (!blank && !closesBlock(line, first)) {
      if (first === 0) scores[i] = previousBlank ? BREAK_TOP_LEVEL : BREAK_TOP_LEVEL - 1;
      else scores[i] = previousBlank ? 2 : 0;
    }
    previousBlank = blank;
  }
  return scores;
}

/** A node type that never leads, always leads, or leads when its text starts with `@`. */
const NOT_LEADING = 0;
const LEADING = 1;
const LEADING_IF_AT = 2;

/** Per language, by node type id: LEADING for comments, decorators and attributes, and so on. */
const leadingTypes = new WeakMap<Language, Uint8Array>();

function leadingTypesOf(language: Language): Uint8Array {
  let leading = leadingTypes.get(language);
  if (!leading) {
    leading = new Uint8Array(language.types.length);
    for (let id = 0; id < leading.length; id++) {
      // Node.type reads an unknown id as "ERROR".
      const type = language.types[id] || "ERROR";
      leading[id] = LEADING_NODE.test(type)
        ? LEADING
        : LEADING_WHEN_AT.has(type)
          ? LEADING_IF_AT
          : NOT_LEADING;
    }
    leadingTypes.set(language, leading);
  }
  return leading;
}

function leads(leading: Uint8Array, node: Node, text: string): boolean {
  const kind = leading[node.typeId];
  return kind === LEADING || (kind === LEADING_IF_AT && text.charCodeAt(node.startIndex) === AT_SIGN);
}

/** Whether the characters of `text` in [from, to) are all white space. */
function blank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isSpaceCode(text.charCodeAt(i))) return false;
  return true;
}

/**
 * Adds syntax-tree scores: the start line of each node scores by its depth, counted in lines of
 * nesting (a class body opening on the class's own line adds no level), with leading comments
 * attached to the node they describe. Each property read of a node is a call into WASM, so a node's
 * type is looked up by id and its end read only where it is used.
 */
function treeBreakScores(root: Node, lineStarts: Int32Array, text: string, scores: Int8Array): void {
  const leading = leadingTypesOf(root.tree.language);
  const visit = (node: Node, depth: number, isRoot: boolean) => {
    const children = node.namedChildren;
    const nodeRow = node.startPosition.row;
    let unitStart: Node | undefined;
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (!child) continue;
      const childRow = child.startPosition.row;
      const childDepth = isRoot || childRow === nodeRow ? depth : depth + 1;
      const next = children[i + 1];
      // A comment directly above a definition starts that definition's unit.
      if (next && leads(leading, child, text) && next.startPosition.row <= child.endPosition.row + 1) {
        unitStart ??= child;
        continue;
      }
      const start = unitStart ?? child;
      unitStart = undefined;
      const row = start.startPosition.row;
      if (blank(text, lineStarts[row], start.startIndex))
        scores[row] = Math.max(scores[row], BREAK_TOP_LEVEL - childDepth);
      // The definition's own line under its comment is inside the unit: no break there.
      for (let r = row + 1; r <= childRow; r++) scores[r] = Math.min(scores[r], 0);
      if (childDepth < MAX_TREE_DEPTH && child.endIndex - child.startIndex > DESCEND_ABOVE_CHARS) {
        visit(child, childDepth, false);
      }
    }
  };
  visit(root, 0, true);
}

/**
 * A file of at most the target size is one chunk whatever its scores: in cutAtBreaks every earlier
 * end is smaller, so further from the target, and scores no better than the end of the file.
 */
function fitsOneChunk(lines: string[]): boolean {
  let size = 0;
  for (const line of lines) {
    size += line.length + 1;
    if (size > TARGET_CHUNK_CHARS) return false;
  }
  return true;
}

/** Cuts lines into chunks near the target size, at the best-scored breaks. */
export function cutAtBreaks(lines: string[], scores: Int8Array): Chunk[] {
  const chunks: Chunk[] = [];
  const n = lines.length;
  let start = 0;
  while (start < n) {
    let size = 0;
    let best = -1;
    let bestValue = Number.NEGATIVE_INFINITY;
    let end = start;
    while (end < n) {
      size += lines[end].length + 1;
      end++;
      if (size > MAX_CHUNK_CHARS && best !== -1) break;
      const breakScore = end === n ? BREAK_END_OF_FILE : scores[end];
      if (size >= MIN_CHUNK_CHARS || end === n) {
        const value =
          breakScore - (DISTANCE_WEIGHT * Math.abs(size - TARGET_CHUNK_CHARS)) / TARGET_CHUNK_CHARS;
        if (value > bestValue) {
          bestValue = value;
          best = end;
        }
      }
      if (size > MAX_CHUNK_CHARS) break;
    }
    // A single line above the maximum (minified code) still makes one chunk of its own.
    if (best === -1) best = end;
    pushTrimmed(chunks, lines, start, best);
    start = best;
  }
  return chunks;
}

/** Adds lines [start, end) as a chunk without its leading and trailing blank lines; blank-only adds nothing. */
function pushTrimmed(chunks: Chunk[], lines: string[], start: number, end: number): void {
  let first = start;
  let last = end - 1;
  while (first <= last && lines[first].trim() === "") first++;
  while (last >= first && lines[last].trim() === "") last--;
  if (first > last) return;
  chunks.push({ startLine: first + 1, endLine: last + 1, text: lines.slice(first, last + 1).join("\n") });
}

/** The line chunker alone: any text, no grammar. */
export function chunkByLines(text: string): Chunk[] {
  const lines = splitLines(text);
  return cutAtBreaks(lines, lineBreakScores(lines));
}

export function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * Break scores of each line of a file: from its grammar's syntax tree when there is a parser and
 * the parse succeeds, from indentation and blank lines otherwise. `lines` is splitLines(text).
 */
export function breakScores(text: string, lines: string[], parser: Parser | undefined): Int8Array {
  const scores = lineBreakScores(lines);
  // A small file needs no parse (one file in nine with a grammar in the generated 10k-file repository).
  if (!parser || fitsOneChunk(lines)) return scores;
  const tree = (() => {
    try {
      return parser.parse(text);
    } catch {
      return null;
    }
  })();
  if (!tree) return scores;
  try {
    // Syntax decides; indentation keeps only its blank-line hints inside large nodes.
    for (let i = 0; i < scores.length; i++) scores[i] = Math.min(scores[i], 1);
    const lineStarts = new Int32Array(scores.length + 1);
    for (let i = 0, row = 1; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts[row++] = i + 1;
    treeBreakScores(tree.rootNode, lineStarts, text, scores);
  } finally {
    tree.delete();
  }
  return scores;
}

/**
 * Chunks a file with its grammar's syntax tree, falling back to the line chunker when there is no
 * grammar or the parse fails. `parser` comes from grammars.ts (loaded lazily per language).
 */
export function chunkSource(text: string, parser: Parser | undefined): Chunk[] {
  const lines = splitLines(text);
  return cutAtBreaks(lines, breakScores(text, lines, parser));
}

/** Break scores of a file, loading its grammar on first use (what a chunking worker computes). */
export async function fileBreakScores(
  text: string,
  lines: string[],
  grammar: GrammarName | undefined,
): Promise<Int8Array> {
  // A small file needs no parse, so no grammar either (a first search in a small repository then
  // never loads tree-sitter).
  if (!grammar || fitsOneChunk(lines)) return lineBreakScores(lines);
  const { parserFor } = await import("./grammars.ts");
  return breakScores(text, lines, await parserFor(grammar));
}

/** Chunks a file, loading its grammar on first use. */
export async function chunkFile(text: string, grammar: GrammarName | undefined): Promise<Chunk[]> {
  const lines = splitLines(text);
  return cutAtBreaks(lines, await fileBreakScores(text, lines, grammar));
}
