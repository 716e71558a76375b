/**
 * Embeds many chunks fast. A WordPiece model tokenizes each word on its own, so the token ids of a
 * text are the concatenation of its words' ids: we split texts into words the way the BERT
 * pre-tokenizer does (letter/digit runs, single punctuation marks), ask the model's tokenizer only
 * for words not seen before, and pool the ids. Identifiers repeat across a repository (curl: 1.5 M
 * words, 11 k distinct), so this does a tenth of the tokenizer work of embedding each chunk whole.
 * ASCII text (nearly all code) is split by a scan that finds each word in a RangeTable without making
 * a string; other text goes through the Unicode-aware expression.
 */
import { MAX_TOKENS, type StaticModel } from "../embed/model.ts";
import { EMPTY_HASH, hashString, mixHash, RangeTable } from "./range-table.ts";

const WORD = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu;
const NON_ASCII = /[^\x00-\x7f]/;
/** Bounds the word cache on huge repositories; past it words are tokenized again, never dropped. */
const MAX_CACHED_WORDS = 500_000;
/**
 * New words are tokenized in groups joined by SEPARATOR, one tokenizer input per group instead of
 * per word (each input has a fixed cost near 20 µs). A group holds at most this many characters,
 * separators included: WordPiece makes at most one token per character, so a group never reaches
 * the model's token limit (MAX_TOKENS), which would cut it and force its words to be redone one by
 * one (a fixed 64 words per group did that to 2 % of abseil-cpp's groups: 9,000 single-word inputs).
 */
const GROUP_CHARS = 480;
const SEPARATOR = "|";

/** ASCII classes for the BERT pre-tokenizer: whitespace separates, letters and digits join, the rest stands alone. */
const SPACE = 0;
const ALNUM = 1;
const PUNCT = 2;
const ASCII_CLASS = new Uint8Array(128).map((_, c) =>
  c === 32 || (c >= 9 && c <= 13)
    ? SPACE
    : (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
      ? ALNUM
      : PUNCT,
);

export class ChunkEmbedder {
  private words = new RangeTable();
  /** Token ids of each word of `words`, by its number; undefined until learned. */
  private wordIds: (number[] | undefined)[] = [];
  private separatorId: number | undefined;

  constructor(private readonly model: StaticModel) {}

  async embed(texts: string[]): Promise<Float32Array> {
    if (this.words.size > MAX_CACHED_WORDS) {
      this.words = new RangeTable();
      this.wordIds = [];
    }
    const unseen: number[] = [];
    const lists = texts.map((text) => this.wordsOf(text, unseen));
    if (unseen.length) await this.learn(unseen);
    const ids = lists.map((list) => {
      const out: number[] = [];
      for (let w = 0; w < list.length && out.length < MAX_TOKENS; w++) {
        const wordIds = this.wordIds[list[w]]!;
        for (let k = 0; k < wordIds.length; k++) out.push(wordIds[k]);
      }
      if (out.length > MAX_TOKENS) out.length = MAX_TOKENS;
      return out;
    });
    return this.model.embedIds(ids);
  }

  /** The numbers of the words of a text, in order; words never seen are added and listed in `unseen`. */
  private wordsOf(text: string, unseen: number[]): number[] {
    const list: number[] = [];
    const known = (key: string, start: number, end: number, hash: number, lower: boolean) => {
      let k = this.words.find(key, start, end, hash, lower);
      if (k < 0) {
        const word = lower ? key.slice(start, end).toLowerCase() : key.slice(start, end);
        k = this.words.add(word, hash);
        unseen.push(k);
      }
      list.push(k);
    };
    if (NON_ASCII.test(text)) {
      for (const word of text.toLowerCase().match(WORD) ?? [])
        known(word, 0, word.length, hashString(word), false);
      return list;
    }
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      const kind = ASCII_CLASS[c];
      if (kind === SPACE) {
        i++;
      } else if (kind === PUNCT) {
        known(text, i, i + 1, mixHash(EMPTY_HASH, c), false);
        i++;
      } else {
        const start = i;
        let hash = EMPTY_HASH;
        while (i < n) {
          let code = text.charCodeAt(i);
          if (ASCII_CLASS[code] !== ALNUM) break;
          if (code >= 65 && code <= 90) code |= 32;
          hash = mixHash(hash, code);
          i++;
        }
        known(text, start, i, hash, true);
      }
    }
    return list;
  }

  /** Token ids of new words, a group of words per tokenizer call, split again at the separator's id. */
  private async learn(numbers: number[]): Promise<void> {
    this.separatorId ??= (await this.model.tokenize([SEPARATOR]))[0][0];
    const separator = this.separatorId;
    const plain: number[] = [];
    for (const k of numbers) {
      if (this.words.keys[k] === SEPARATOR) this.wordIds[k] = [separator];
      else plain.push(k);
    }
    const groups: number[][] = [];
    let group: number[] = [];
    let chars = 0;
    for (const k of plain) {
      const length = this.words.keys[k].length + SEPARATOR.length + 2;
      if (group.length && chars + length > GROUP_CHARS) {
        groups.push(group);
        group = [];
        chars = 0;
      }
      group.push(k);
      chars += length;
    }
    if (group.length) groups.push(group);
    const encoded = await this.model.tokenize(
      groups.map((group) => group.map((k) => this.words.keys[k]).join(` ${SEPARATOR} `)),
    );
    const retry: number[] = [];
    groups.forEach((group, g) => {
      const parts: number[][] = [[]];
      for (const id of encoded[g]) {
        if (id === separator) parts.push([]);
        else parts[parts.length - 1].push(id);
      }
      // Truncation at the token limit would lose the tail: such a group is tokenized word by word.
      if (parts.length !== group.length) retry.push(...group);
      else for (let i = 0; i < group.length; i++) this.wordIds[group[i]] = parts[i];
    });
    if (retry.length) {
      const ids = await this.model.tokenize(retry.map((k) => this.words.keys[k]));
      for (let i = 0; i < retry.length; i++) this.wordIds[retry[i]] = ids[i];
    }
  }
}
