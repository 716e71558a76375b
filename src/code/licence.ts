/**
 * Licence and copyright notices at the head of a file: they say nothing about what the file does,
 * so a chunk's vector is pooled without them (chunk-encoder.ts); the chunk's text keeps them.
 *
 * The head is read as comment blocks (line comments `//`, `#`, `--`, `;`, `%`, or a block comment
 * `/* *\/`, `(* *)`, `<!-- -->`, `{- -}`, `--[[ ]]`), separated by blank lines, up to the first line
 * of code. A block's paragraphs are separated by comment lines without a letter or digit (` *`,
 * `//`). In a block, the notice runs from the first paragraph that reads like one (`Copyright`,
 * `SPDX-License-Identifier`, `Licensed under`, `WITHOUT WARRANTY`, …) to the block's end: a
 * description before it stays, and so do blocks without such a paragraph (a Go package comment).
 */

/** Words of licence and copyright boilerplate (MIT, BSD, Apache, GPL, MPL, SPDX tags). */
const NOTICE =
  /\bcopyright\b|\blicen[cs](?:e[ds]?|ing)\b|spdx-license-identifier|all rights reserved|permission is hereby granted|warrant(?:y|ies)|redistribution|free software|\(c\)\s*\d{4}|©/i;
/** How far into a chunk a notice is looked for. */
const HEAD_LINES = 200;
const BLOCK_OPENERS: [string, string][] = [
  ["/*", "*/"],
  ["(*", "*)"],
  ["<!--", "-->"],
  ["{-", "-}"],
  ["--[[", "]]"],
];
/** `#` starts a comment unless a preprocessor directive (`#include`) or attribute (`#[derive]`) follows. */
const LINE_COMMENT = /^(?:\/\/|#(?:[\s#]|$)|--(?:[\s-]|$)|;|%(?:[\s%]|$))/;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/** Lines that may come before the comments: a shebang, `<?php`, an XML declaration. */
const PROLOGUE = /^(?:#!\/|<\?(?:php|xml))/;

/**
 * The character ranges of `text` (a file's head) that are licence notices, as flat
 * [start, end) pairs ending at line ends (newline included), in order; empty when there is none.
 */
export function licenceRanges(text: string): number[] {
  const ranges: number[] = [];
  const n = text.length;
  let pos = 0;
  /** The block being read: where its first notice paragraph starts (-1: none yet) and where it ends. */
  let inBlock = false;
  let noticeFrom = -1;
  let blockEnd = 0;
  let paragraphStart = -1;
  let closer: string | undefined;
  const endBlock = () => {
    if (inBlock && noticeFrom >= 0) ranges.push(noticeFrom, blockEnd);
    inBlock = false;
    noticeFrom = -1;
    paragraphStart = -1;
  };
  for (let line = 0; pos < n && line < HEAD_LINES; line++) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = n;
    const next = Math.min(end + 1, n);
    const content = text.slice(pos, end).trim();
    if (closer !== undefined) {
      const closed = content.indexOf(closer);
      if (closed >= 0) {
        // Code after the comment on its last line: the block is not a header alone.
        if (content.slice(closed + closer.length).trim() !== "") return ranges;
        closer = undefined;
      }
    } else if (content === "") {
      endBlock();
      pos = next;
      continue;
    } else if (PROLOGUE.test(content)) {
      endBlock();
      pos = next;
      continue;
    } else {
      const opener = BLOCK_OPENERS.find(([open]) => content.startsWith(open));
      if (opener) {
        const closed = content.indexOf(opener[1], opener[0].length);
        if (closed < 0) closer = opener[1];
        else if (content.slice(closed + opener[1].length).trim() !== "") break;
      } else if (!LINE_COMMENT.test(content)) break;
    }
    inBlock = true;
    blockEnd = next;
    if (!LETTER_OR_DIGIT.test(content)) paragraphStart = -1;
    else {
      if (paragraphStart < 0) paragraphStart = pos;
      if (noticeFrom < 0 && NOTICE.test(content)) noticeFrom = paragraphStart;
    }
    pos = next;
  }
  // An unclosed block comment is the whole chunk's head: its notice is still one.
  endBlock();
  return keepsWords(text, ranges) ? ranges : [];
}

/**
 * Whether `text` has a letter or digit outside `ranges`. A chunk that is a notice and nothing else
 * (the chunker often cuts a long header off alone) keeps it: pooled from its path alone, it would
 * look like every query about its file's name.
 */
function keepsWords(text: string, ranges: number[]): boolean {
  let from = 0;
  for (let r = 0; r <= ranges.length; r += 2) {
    const to = r < ranges.length ? ranges[r] : text.length;
    if (to > from && LETTER_OR_DIGIT.test(text.slice(from, to))) return true;
    from = ranges[r + 1];
  }
  return false;
}
