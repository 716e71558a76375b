/**
 * Running a pattern only where a match can start.
 *
 * A regex that opens with a lookbehind or an alternation (`(?<![\w.])(?:25[0-5]|…)`) is tried by the engine
 * at every position of the text: on source code the IPv4 pattern alone cost 6 ns a character. Most
 * positions cannot start a match, and a cheap search finds the ones that can (an `@` for an e-mail
 * address, `://` for a URL's credentials). `matchFrom` tries the pattern, sticky, at those positions only, in order: when `nextStart`
 * yields every position a match can start at, it returns exactly the match a global `exec` from `from`
 * would, so a loop resuming at each match's end sees the same matches as the global loop it replaces.
 */

/** The first position ≥ `from` where a match can start, or -1. It may yield more positions, never fewer. */
export type NextStart = (text: string, from: number) => number;

/** The first match of `sticky` (flag `y`) starting at a position ≥ `from` that `nextStart` yields. */
export function matchFrom(
  text: string,
  sticky: RegExp,
  nextStart: NextStart,
  from: number,
): RegExpExecArray | null {
  for (let s = nextStart(text, from); s >= 0; s = nextStart(text, s + 1)) {
    sticky.lastIndex = s;
    const m = sticky.exec(text);
    if (m) return m;
  }
  return null;
}

/** A global pattern and where its matches can start: `test/privacy-scan.test.ts` checks each pair. */
export interface CandidateScan {
  pattern: RegExp;
  nextStart: NextStart;
}

/** `pattern` compiled sticky, for `matchFrom`. */
export function sticky(pattern: RegExp): RegExp {
  return new RegExp(pattern.source, pattern.flags.replace("g", "") + "y");
}

/**
 * Where the first of `literals` occurs. Each literal's next occurrence is remembered while one scan of a
 * text moves forward, so a literal that is rare is not searched for again at every call (that would be
 * quadratic). A new text, or a scan that starts again further back (the same text redacted a second
 * time), forgets them: what was remembered holds only for positions at or after the last `from`.
 */
export function literalsAt(literals: string[]): NextStart {
  let searched = "";
  let lastFrom = 0;
  const next = literals.map(() => -2);
  return (text, from) => {
    if (text !== searched || from < lastFrom) {
      searched = text;
      next.fill(-2);
    }
    lastFrom = from;
    let first = -1;
    for (let k = 0; k < literals.length; k++) {
      if (next[k] !== -1 && next[k] < from) next[k] = text.indexOf(literals[k], from);
      if (next[k] >= 0 && (first < 0 || next[k] < first)) first = next[k];
    }
    return first;
  };
}

/** White space as a regular expression's `\s` and String.trim see it (ASCII, then the Unicode spaces). */
export function isSpaceCode(c: number): boolean {
  if (c === 32 || (c >= 9 && c <= 13)) return true;
  if (c < 160) return false;
  return (
    c === 160 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

export const isDigitCode = (c: number) => c >= 48 && c <= 57;
export const isHexCode = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
