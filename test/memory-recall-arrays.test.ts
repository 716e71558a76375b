import { expect, test } from "bun:test";
import { arrayTerms, encodedTerms } from "../src/memory/recall/bm25.ts";
import { addNormalised, minMax } from "../src/memory/recall/snapshot.ts";
import { seededRandom } from "./support/random.ts";

/** A term table as recall.bin stores it: the terms in JavaScript's order, as UTF-8 bytes with offsets. */
function encoded(sorted: string[]) {
  const encoder = new TextEncoder();
  const parts = sorted.map((term) => encoder.encode(term));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((part, i) => {
    offsets[i + 1] = offsets[i] + part.length;
  });
  const bytes = new Uint8Array(offsets[parts.length]);
  parts.forEach((part, i) => {
    bytes.set(part, offsets[i]);
  });
  return encodedTerms(bytes, offsets);
}

test("stored terms are found by their UTF-8 bytes exactly where the in-memory table finds them, whatever the script", () => {
  const random = seededRandom(7);
  // ASCII, accented Latin, Cyrillic, CJK, characters past U+E000 and ones outside the BMP (surrogate
  // pairs): the two last sort one way by code point (UTF-8's bytes) and the other by UTF-16 unit.
  const alphabet = [
    "a",
    "b",
    "z",
    "_",
    "0",
    "9",
    "é",
    "ü",
    "ж",
    "я",
    "中",
    "文",
    "\ue000",
    "\uff5e",
    "😀",
    "𝒳",
  ];
  const word = () =>
    Array.from(
      { length: 1 + Math.floor(random() * 5) },
      () => alphabet[Math.floor(random() * alphabet.length)],
    ).join("");
  const words = [...new Set(Array.from({ length: 600 }, word))];
  const stored = words.filter((_, i) => i % 3 !== 0).sort();
  const absent = words.filter((_, i) => i % 3 === 0);
  const fromBytes = encoded(stored);
  const inMemory = arrayTerms(stored);
  expect(fromBytes.count).toBe(stored.length);
  for (const term of stored) expect(fromBytes.indexOf(term)).toBe(inMemory.indexOf(term));
  for (const term of absent) expect(fromBytes.indexOf(term)).toBe(-1);
  // Prefixes of stored terms, and terms longer than any stored one.
  for (const term of stored.slice(0, 50)) {
    expect(fromBytes.indexOf(`${term}\u0000`)).toBe(stored.indexOf(`${term}\u0000`));
    expect(fromBytes.indexOf(term.repeat(30))).toBe(stored.indexOf(term.repeat(30)));
  }
  stored.forEach((term, i) => {
    expect(fromBytes.at(i)).toBe(term);
  });
});

test("scores normalised in place add exactly what minMax's array adds, ties and all-equal lists too", () => {
  const random = seededRandom(11);
  for (let trial = 0; trial < 200; trial++) {
    const n = 1 + Math.floor(random() * 300);
    const kind = trial % 4;
    // Spread values, all equal (positive, or zero), and lists with many ties.
    const values = Float64Array.from({ length: n }, () =>
      kind === 0 ? random() * 10 - 2 : kind === 1 ? 3 : kind === 2 ? 0 : Math.floor(random() * 3),
    );
    const weight = random();
    const start = Float64Array.from({ length: n }, () => random());
    const expected = Float64Array.from(start);
    const normalised = minMax(values);
    for (let i = 0; i < n; i++) expected[i] += weight * normalised[i];
    const got = Float64Array.from(start);
    addNormalised(got, values, weight);
    expect([...got]).toEqual([...expected]);
  }
});
