/**
 * The trigger words where the scan for a named value starts (`assignments.ts`): any of them, anywhere; the
 * identifier around it is then judged whole (`secret-names.ts`). The provider keyword scan
 * (`providers.ts`) reads the text once for its keywords and these words both; `findTriggers` is the same
 * search on its own.
 */
import { cjkNames } from "./secret-names.ts";

/**
 * Words starting with an ASCII letter, in groups that share their first two characters (at most three to
 * a group). `pw` stands for `pwd` too. The second half starts names in other languages: `Kennwort`,
 * `senha`, `segredo`, `contraseña`, `clé`, `clef`, `clave`, `chave`, `llave`, `jeton`, `Geheimnis`,
 * `Zugangsdaten`, `Schlüssel`, `PIN`, `identifiants`.
 */
const TRIGGER_GROUPS = [
  ["pass"],
  ["pw"],
  ["psw"],
  ["secret", "senha", "segred"],
  ["token"],
  ["key", "kennw"],
  ["auth"],
  ["cred"],
  ["bearer"],
  ["salt"],
  ["nonce"],
  ["cookie", "contras"],
  ["login"],
  ["phrase"],
  ["otp"],
  ["api"],
  ["bundle"],
  ["clé", "clef", "clave"],
  ["chave"],
  ["llave"],
  ["jeton"],
  ["geheim"],
  ["zugang"],
  ["schl"],
  ["pin"],
  ["identifiant"],
];
const PW = 1;
/** Each group's words' third characters (`pw` has none: 0), three slots a group. */
const THIRD = Int32Array.from(
  { length: TRIGGER_GROUPS.length * 3 },
  (_, k) => (TRIGGER_GROUPS[Math.floor(k / 3)][k % 3] ?? "").charCodeAt(2) || -1,
);

/** PERF: whether a word of group `w` may start where `c2` comes third, before a call compares the rest. */
export const mayStartTrigger = (w: number, c2: number) =>
  w === PW || THIRD[w * 3] === c2 || THIRD[w * 3 + 1] === c2 || THIRD[w * 3 + 2] === c2;

let byPair: Int8Array | undefined;

/** The group starting with each pair of ASCII characters (`c0 << 7 | c1`), or -1. Built on first use. */
export function triggerPairs(): Int8Array {
  if (!byPair) {
    byPair = new Int8Array(128 * 128).fill(-1);
    for (let w = 0; w < TRIGGER_GROUPS.length; w++) {
      const word = TRIGGER_GROUPS[w][0];
      byPair[(word.charCodeAt(0) << 7) | word.charCodeAt(1)] = w;
    }
  }
  return byPair;
}

/** Whether `word` is at `i` in `lower`, its first two characters known to be there. */
function wordAt(lower: string, i: number, word: string): boolean {
  let j = 2;
  while (j < word.length && lower.charCodeAt(i + j) === word.charCodeAt(j)) j++;
  return j === word.length;
}

/**
 * When a word of group `w` (the one its first two characters name) starts at `i`, pushes `i` and its
 * length; the regex this replaced took `pwd` whole, and a name is read on from the word's end.
 */
export function pushTrigger(lower: string, i: number, w: number, out: number[]): void {
  const group = TRIGGER_GROUPS[w];
  for (let k = 0; k < group.length; k++) {
    if (!wordAt(lower, i, group[k])) continue;
    out.push(i, w === PW && lower.charCodeAt(i + 2) === 100 ? 3 : group[k].length);
    return;
  }
}

/**
 * Names written in scripts other than Latin (`secret-names.ts` holds their families), lower-cased: a
 * Russian stem starts every form of its word, a Chinese, Japanese or Korean word is the name itself.
 */
const RUSSIAN_STEMS = ["парол", "токен", "ключ", "секрет", "пин", "учётн", "учетн"];
let foreignByFirst: Map<number, string[]> | undefined;
let foreignFirst: Uint8Array | undefined;

/** PERF: whether a foreign trigger word starts with the (non-ASCII) character `c0`: one table lookup. */
export function mayStartForeign(c0: number): boolean {
  if (!foreignFirst) {
    foreignFirst = new Uint8Array(0x10000);
    foreignByFirst = new Map();
    for (const word of [...RUSSIAN_STEMS, ...cjkNames()]) {
      const c = word.charCodeAt(0);
      foreignFirst[c] = 1;
      // Longest first: `비밀번호` before `비밀`.
      foreignByFirst.set(
        c,
        [...(foreignByFirst.get(c) ?? []), word].sort((a, b) => b.length - a.length),
      );
    }
  }
  return c0 < 0x10000 && foreignFirst[c0] === 1;
}

/** When a foreign trigger word starts at `i` (its first character passed `mayStartForeign`), pushes it. */
export function pushForeignTrigger(lower: string, i: number, out: number[]): void {
  for (const word of foreignByFirst?.get(lower.charCodeAt(i)) ?? []) {
    if (!lower.startsWith(word, i)) continue;
    out.push(i, word.length);
    return;
  }
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
  for (let i = 0; i <= last; i++) {
    const c0 = c1;
    c1 = i < last ? lower.charCodeAt(i + 1) : 0;
    if (c0 >= 128) {
      if (mayStartForeign(c0)) pushForeignTrigger(lower, i, found);
      continue;
    }
    if (c1 >= 128 || i === last) continue;
    const w = pairs[(c0 << 7) | c1];
    if (w >= 0) pushTrigger(lower, i, w, found);
  }
  return found;
}
