/**
 * The trigger words where the scan for a named value starts (`assignments.ts`): any of them, anywhere; the
 * identifier around it is then judged whole. The provider keyword scan (`providers.ts`) reads the text
 * once for its keywords and these words both; `findTriggers` is the same search on its own.
 */

/** `pw` stands for `pwd` too. No two words share their first two characters. */
const TRIGGER_WORDS = [
  "pass",
  "pw",
  "psw",
  "secret",
  "token",
  "key",
  "auth",
  "cred",
  "bearer",
  "salt",
  "nonce",
  "cookie",
  "login",
  "phrase",
  "otp",
  "api",
  "bundle",
];
const PW = TRIGGER_WORDS.indexOf("pw");
/** Each word's third character (`pw` has none: 0). */
const THIRD = Int32Array.from(TRIGGER_WORDS, (w) => w.charCodeAt(2) || 0);

/** PERF: whether word `w` may start where `c2` comes third, before a call compares the rest. */
export const mayStartTrigger = (w: number, c2: number) => w === PW || THIRD[w] === c2;

let byPair: Int8Array | undefined;

/** The word starting with each pair of ASCII characters (`c0 << 7 | c1`), or -1. Built on first use. */
export function triggerPairs(): Int8Array {
  if (!byPair) {
    byPair = new Int8Array(128 * 128).fill(-1);
    for (let w = 0; w < TRIGGER_WORDS.length; w++)
      byPair[(TRIGGER_WORDS[w].charCodeAt(0) << 7) | TRIGGER_WORDS[w].charCodeAt(1)] = w;
  }
  return byPair;
}

/**
 * When word `w` (the one its first two characters name) starts at `i`, pushes `i` and its length; the
 * regex this replaced took `pwd` whole, and a name is read on from the word's end.
 */
export function pushTrigger(lower: string, i: number, w: number, out: number[]): void {
  const word = TRIGGER_WORDS[w];
  let j = 2;
  while (j < word.length && lower.charCodeAt(i + j) === word.charCodeAt(j)) j++;
  if (j < word.length) return;
  out.push(i, w === PW && lower.charCodeAt(i + 2) === 100 ? 3 : word.length);
}

/**
 * Every trigger word in `lower`, as position and length pairs in order. PERF: a table lookup on each pair
 * of characters and an in-place compare, instead of a regex of 18 alternatives (which the engine tries at
 * every position: 3 ns a character).
 */
export function findTriggers(lower: string): number[] {
  const pairs = triggerPairs();
  const found: number[] = [];
  const last = lower.length - 1;
  let c1 = lower.charCodeAt(0);
  for (let i = 0; i < last; i++) {
    const c0 = c1;
    c1 = lower.charCodeAt(i + 1);
    if ((c0 | c1) >= 128) continue;
    const w = pairs[(c0 << 7) | c1];
    if (w >= 0) pushTrigger(lower, i, w, found);
  }
  return found;
}
