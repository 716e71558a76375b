/**
 * Encodes many chunks fast for both indexes in one scan of each chunk: its BM25 terms and its dense
 * vector. The scan splits a text into runs of identifier characters (`[A-Za-z0-9_]+`), single
 * punctuation marks and whitespace, and looks each run up once in a table (RangeTable: no substring
 * is made for a run seen before). A run knows its BM25 term ids (tokens.ts) and its words as the
 * BERT pre-tokenizer splits it (`flat_hash` → `flat`, `_`, `hash`), and once pooled the sum of its
 * words' token rows. A WordPiece model tokenizes each word on its own, so a text's token ids are the
 * concatenation of its words' ids: the model's tokenizer is asked only for words not seen before,
 * and a chunk's vector is the sum of its runs' sums (identifiers repeat across a repository: the
 * 10,000-file generated repository has 8 M words, 49 k distinct). Text with non-ASCII characters
 * has its words split by the Unicode-aware expression instead.
 */
import { MAX_TOKENS, type StaticModel, type WordPieceVocabulary } from "../embed/model.ts";
import { Bm25Additions } from "./bm25.ts";
import { EMPTY_HASH, hashString, mixHash, RangeTable } from "./range-table.ts";
import { pathTokens, TermInterner } from "./tokens.ts";

/**
 * Words as the BERT pre-tokenizer splits text: runs between white space and punctuation (Unicode `P`
 * and ASCII symbols), each punctuation mark alone; other symbols (`×`, `→`, `©`) and combining marks
 * stay inside their word. What its normaliser deletes (control and format characters, private-use
 * and unassigned ones, U+FFFD) is removed first, joining what is around it.
 */
const WORD = /[^\s\p{P}!-/:-@[-`{-~]+|[\p{P}!-/:-@[-`{-~]/gu;
const DELETED = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\p{Cf}\p{Co}\p{Cn}\ufffd]/gu;
/**
 * Bounds the word table and the run table on huge repositories (each run and word keeps a row sum of
 * 64 floats: 200 k of them hold about 50 MB); past it they start again, losing nothing. The generated
 * 10,000-file repository has 110 k distinct runs.
 */
const MAX_CACHED_RUNS = 200_000;
/**
 * New words are tokenized in groups joined by SEPARATOR, one tokenizer input per group instead of
 * per word (each input has a fixed cost near 20 µs). A group holds at most this many characters,
 * separators included: WordPiece makes at most one token per character, so a group never reaches
 * the model's token limit (MAX_TOKENS), which would cut it and force its words to be redone one by
 * one (a fixed 64 words per group did that to 2 % of abseil-cpp's groups: 9,000 single-word inputs).
 */
const GROUP_CHARS = 480;
const SEPARATOR = "|";

/** ASCII classes of the scan: whitespace separates, identifier characters make runs, the rest stands alone. */
const SPACE = 0;
const IDENTIFIER = 1;
const PUNCT = 2;
const NON_ASCII = 3;
const CLASS = new Uint8Array(128).map((_, c) =>
  c === 32 || c === 9 || c === 10 || c === 13
    ? SPACE
    : (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
      ? IDENTIFIER
      : c < 32 || c === 127
        ? NON_ASCII // a control character, which BERT deletes: the Unicode path handles it
        : PUNCT,
);
const UNDERSCORE = 95;
const OPEN_PAREN = 40;

/**
 * Keywords that introduce a definition in the languages indexed: the identifier after one (and
 * blanks; Go's method receiver `func (r *T) Name` skipped) is a name the chunk defines.
 */
const DEFINITION_KEYWORDS = new Set([
  "def",
  "defp",
  "defmodule",
  "class",
  "function",
  "func",
  "fn",
  "struct",
  "interface",
  "trait",
  "enum",
  "type",
  "module",
  "object",
  "impl",
  "protocol",
  "extension",
  "record",
  "namespace",
  "macro",
]);
/** What a run of identifier characters can be to the names a chunk defines (runKind). */
const RUN_ANY = 0;
const RUN_DEFINITION_KEYWORD = 1;
/** A digit first, or a control-flow word: never a defined name. */
const RUN_NOT_A_NAME = 2;
/** Control-flow words that follow a keyword without being a name. */
const NOT_NAMES = new Set(["if", "for", "while", "switch", "return", "catch", "sizeof", "new", "else"]);
const NEWLINE = 10;
const RETURN = 13;
const SEMICOLON = 59;
const STAR = 42;
const AMPERSAND = 38;
/** Characters that may join the words of a signature's type (`std::map<K, V>`, `char[]`). */
const TYPE_PUNCTUATION = new Uint8Array(128);
for (const c of "<>,:[]") TYPE_PUNCTUATION[c.charCodeAt(0)] = 1;
/** A line's state as a possible C-like signature: before its first `(`, after it, or not one. */
const SIGNATURE_OPEN = 0;
const SIGNATURE_REST = 1;
const SIGNATURE_FAILED = 2;

const NON_ASCII_WORD = /[^\x00-\x7f]/;

/**
 * Splits lower-cased ASCII words and punctuation marks as a lower-casing BERT WordPiece tokenizer
 * does, once unknown tokens are dropped (StaticModel.tokenize): the longest pieces in the vocabulary
 * from the left, later ones with the continuation mark; a word with a piece outside the vocabulary,
 * or longer than the limit, is one unknown token, so none; the normalizer drops control characters.
 * Pieces are looked up by range (prefix hashes, no substrings). Tested against the tokenizer on every
 * word of a real repository.
 */
export class WordPieceSplitter {
  /** Pieces that start a word, and pieces that continue one (without their mark), with their ids. */
  private readonly first = new RangeTable();
  private readonly firstIds: number[] = [];
  private readonly next = new RangeTable();
  private readonly nextIds: number[] = [];
  private readonly hashes: Int32Array;

  constructor(private readonly vocabulary: WordPieceVocabulary) {
    const mark = vocabulary.continuation;
    for (const [piece, id] of vocabulary.ids) {
      const continues = piece.length > mark.length && piece.startsWith(mark);
      const key = continues ? piece.slice(mark.length) : piece;
      const table = continues ? this.next : this.first;
      if (table.findString(key) >= 0) continue;
      table.add(key, hashString(key));
      (continues ? this.nextIds : this.firstIds).push(id);
    }
    this.hashes = new Int32Array(vocabulary.longestPiece + 1);
  }

  ids(word: string): number[] {
    const first = word.charCodeAt(0);
    if (word.length === 1 && (first < 32 || first === 127)) return [];
    if (word.length > this.vocabulary.maxChars) return [];
    const ids: number[] = [];
    const hashes = this.hashes;
    let start = 0;
    while (start < word.length) {
      const longest = Math.min(word.length, start + this.vocabulary.longestPiece);
      let hash = EMPTY_HASH;
      for (let i = start; i < longest; i++) hashes[i - start + 1] = hash = mixHash(hash, word.charCodeAt(i));
      const table = start > 0 ? this.next : this.first;
      let end = longest;
      let k = -1;
      for (; end > start; end--) {
        k = table.find(word, start, end, hashes[end - start]);
        if (k >= 0) break;
      }
      if (k < 0) return [];
      ids.push(start > 0 ? this.nextIds[k] : this.firstIds[k]);
      start = end;
    }
    return ids;
  }
}

/** One splitter per vocabulary, kept by a long-lived process (building one takes milliseconds). */
const splitters = new WeakMap<WordPieceVocabulary, WordPieceSplitter>();

/** A growable Int32Array. */
class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = value;
  }
  grow(atLeast: number): void {
    let size = this.data.length * 2;
    while (size < atLeast) size *= 2;
    const bigger = new Int32Array(size);
    bigger.set(this.data.subarray(0, this.length));
    this.data = bigger;
  }
}

/** Rows of `dim` floats, one per key number, grown on demand. */
class VectorTable {
  data: Float32Array;
  constructor(private readonly dim: number) {
    this.data = new Float32Array(1024 * dim);
  }
  /** Row k, zeroed when new. */
  row(k: number): Float32Array {
    if ((k + 1) * this.dim > this.data.length) {
      let size = this.data.length * 2;
      while (size < (k + 1) * this.dim) size *= 2;
      const bigger = new Float32Array(size);
      bigger.set(this.data);
      this.data = bigger;
    }
    return this.data.subarray(k * this.dim, (k + 1) * this.dim);
  }
}

/**
 * Where the name after a definition keyword ending at `end` starts, or -1: blanks, then a Go
 * receiver in parentheses and blanks, or not, then an identifier character.
 */
function nameAfterKeyword(text: string, end: number): number {
  const n = text.length;
  const blank = (at: number) => at < n && text.charCodeAt(at) < 128 && CLASS[text.charCodeAt(at)] === SPACE;
  let at = end;
  if (!blank(at)) return -1;
  while (blank(at)) at++;
  if (at < n && text.charCodeAt(at) === OPEN_PAREN) {
    const close = text.indexOf(")", at);
    if (close < 0) return -1;
    at = close + 1;
    while (blank(at)) at++;
  }
  return at < n && text.charCodeAt(at) < 128 && CLASS[text.charCodeAt(at)] === IDENTIFIER ? at : -1;
}

/**
 * Chunks in, BM25 documents (`interner`, `additions`) and dense vectors (`embed`) out. A chunk's
 * BM25 document is its tokens plus its file stem and folders; its vector is of
 * `path\nnames\ntext`, where `names` are the names the chunk defines (the identifier after a
 * definition keyword, or a C-like signature's name on a line without one), a contextual header
 * (docs/code-search.md, "What is embedded").
 */
export class ChunkEncoder {
  readonly interner = new TermInterner();
  readonly additions = new Bm25Additions();

  /** Words (lower-cased) with their token ids, token counts and row sums once learned. */
  private words = new RangeTable();
  private wordIds: (Int32Array | undefined)[] = [];
  private wordTokens = new IntList();
  private wordSums: VectorTable;
  /** Word number of each ASCII punctuation mark, or -1. */
  private punctuation = new Int32Array(128).fill(-1);
  /** Runs of identifier characters, case kept. */
  private runs = new RangeTable();
  /** Per run: RUN_DEFINITION_KEYWORD, RUN_NOT_A_NAME or RUN_ANY. */
  private runKind = new IntList();
  /** The runs named after a definition keyword in the chunk being scanned. */
  private defined = new IntList();
  /** BM25 term ids of run k: runTermIds[runTermFrom[k], runTermFrom[k + 1]). */
  private runTermIds = new IntList();
  private runTermFrom = new IntList();
  private runWords: Int32Array[] = [];
  /** Tokens of each run, -1 until its sum is computed. */
  private runTokens = new IntList();
  private runSums: VectorTable;
  /** Words added since the last embed(), to be tokenized. */
  private unseen: number[] = [];
  private separatorId: number | undefined;
  private splitter: WordPieceSplitter | undefined;

  /** Embedding items of the chunks pending: a run as its number, a word w as ~w. */
  private items = new IntList();
  /** End of each pending chunk's items. */
  private chunkEnds: number[] = [];
  private lastPath: string | undefined;
  private pathTerms = new Int32Array(0);
  private pathItems = new Int32Array(0);
  private readonly sum: Float64Array;
  /** Per run and word: its count in the chunk being pooled (zero between chunks), and those counted. */
  private itemCounts = new Int32Array(0);
  private distinct = new IntList();

  /**
   * `splitWords`: split new ASCII words with the model's WordPiece vocabulary here (WordPieceSplitter)
   * rather than in the tokenizer; pays on large jobs only (see the indexer).
   */
  constructor(
    private readonly model: StaticModel,
    private readonly splitWords = false,
  ) {
    this.wordSums = new VectorTable(model.dim);
    this.runSums = new VectorTable(model.dim);
    this.sum = new Float64Array(model.dim);
    this.runTermFrom.push(0);
  }

  /** Chunks added since the last embed(). */
  get pending(): number {
    return this.chunkEnds.length;
  }

  /** Adds one chunk of the file at `path`: its BM25 document now, its vector at the next embed(). */
  add(path: string, text: string): void {
    // Words are bounded too: text with non-ASCII letters adds words without runs (a CJK clause is one word).
    const full = this.runs.size > MAX_CACHED_RUNS || this.words.size > MAX_CACHED_RUNS;
    if (this.chunkEnds.length === 0 && full) this.forget();
    if (path !== this.lastPath) {
      this.lastPath = path;
      this.pathTerms = Int32Array.from(pathTokens(path), (term) => this.interner.idOf(term));
      const start = this.items.length;
      this.scan(path, false);
      this.pathItems = this.items.data.slice(start, this.items.length);
      this.items.length = start;
    }
    const items = this.items;
    if (items.length + this.pathItems.length > items.data.length)
      items.grow(items.length + this.pathItems.length);
    items.data.set(this.pathItems, items.length);
    items.length += this.pathItems.length;
    const textStart = items.length;
    this.defined.length = 0;
    this.scan(text, true);
    this.insertDefined(textStart);
    for (let k = 0; k < this.pathTerms.length; k++) this.additions.addTerm(this.pathTerms[k]);
    this.additions.endDocument();
    this.chunkEnds.push(items.length);
  }

  /** The vectors of the chunks added since the last call, in order, as one row-major array. */
  async embed(): Promise<Float32Array> {
    if (this.unseen.length) await this.learn(this.unseen.splice(0));
    const dim = this.model.dim;
    const out = new Float32Array(this.chunkEnds.length * dim);
    let start = 0;
    for (let c = 0; c < this.chunkEnds.length; c++) {
      this.pool(start, this.chunkEnds[c], out.subarray(c * dim, (c + 1) * dim));
      start = this.chunkEnds[c];
    }
    this.chunkEnds.length = 0;
    this.items.length = 0;
    return out;
  }

  /**
   * Appends the embedding items of `text`; with `terms`, also its BM25 term ids (those of every
   * identifier: a run without its leading digits, `0x1F` → `x1F`).
   */
  private scan(text: string, terms: boolean): void {
    const start = this.items.length;
    let ascii = true;
    const n = text.length;
    let i = 0;
    /** Where the name after a definition keyword starts (nameAfterKeyword), or -1. */
    let namedAt = -1;
    const defined = this.defined;
    // A C-like signature (`static const char *parse_config(int argc,`): the line before its first
    // `(` is checked when that `(` comes (signatureName), a `;` after it on the line undoes it.
    let line = terms ? SIGNATURE_OPEN : SIGNATURE_FAILED;
    let lineStart = 0;
    let lineDefined = defined.length;
    let signature = -1;
    while (i < n) {
      const c = text.charCodeAt(i);
      const kind = c < 128 ? CLASS[c] : NON_ASCII;
      if (kind === IDENTIFIER) {
        const from = i;
        let hash = EMPTY_HASH;
        do {
          hash = mixHash(hash, text.charCodeAt(i));
          i++;
        } while (i < n && text.charCodeAt(i) < 128 && CLASS[text.charCodeAt(i)] === IDENTIFIER);
        let k = this.runs.find(text, from, i, hash);
        if (k < 0) k = this.addRun(text.slice(from, i), hash);
        this.items.push(k);
        if (terms) {
          const runKind = this.runKind.data[k];
          if (from === namedAt) {
            if (runKind !== RUN_NOT_A_NAME) defined.push(k);
          } else if (runKind === RUN_DEFINITION_KEYWORD && from > namedAt)
            namedAt = nameAfterKeyword(text, i);
          const ids = this.runTermIds.data;
          const to = this.runTermFrom.data[k + 1];
          for (let t = this.runTermFrom.data[k]; t < to; t++) this.additions.addTerm(ids[t]);
        }
        continue;
      }
      if (kind === PUNCT) {
        if (line === SIGNATURE_OPEN) {
          if (c === OPEN_PAREN) {
            signature = this.signatureName(text, lineStart, i);
            line = signature >= 0 ? SIGNATURE_REST : SIGNATURE_FAILED;
          } else if (!TYPE_PUNCTUATION[c] && c !== STAR && c !== AMPERSAND) line = SIGNATURE_FAILED; // `=`, `.`: not a signature
        } else if (line === SIGNATURE_REST && c === SEMICOLON) line = SIGNATURE_FAILED;
        this.items.push(~this.punctuationWord(c));
      } else if (kind === NON_ASCII) {
        ascii = false;
        if (line === SIGNATURE_OPEN) line = SIGNATURE_FAILED;
      } else if (c === NEWLINE || c === RETURN) {
        // A signature names the line's definition only where no keyword did (`def f(x):`).
        if (line === SIGNATURE_REST && defined.length === lineDefined) defined.push(signature);
        if (terms) line = SIGNATURE_OPEN;
        lineStart = i + 1;
        lineDefined = defined.length;
      }
      i++;
    }
    if (line === SIGNATURE_REST && defined.length === lineDefined) defined.push(signature);
    if (ascii) return;
    // Unicode letters join words: split the whole text again the way the BERT pre-tokenizer does.
    this.items.length = start;
    for (const word of text.replace(DELETED, "").toLowerCase().match(WORD) ?? []) {
      let w = this.words.find(word, 0, word.length, hashString(word));
      if (w < 0) w = this.addWord(word, hashString(word));
      this.items.push(~w);
    }
  }

  private addRun(run: string, hash: number): number {
    const k = this.runs.add(run, hash);
    this.runKind.push(
      DEFINITION_KEYWORDS.has(run)
        ? RUN_DEFINITION_KEYWORD
        : run.charCodeAt(0) <= 57 || NOT_NAMES.has(run)
          ? RUN_NOT_A_NAME
          : RUN_ANY,
    );
    let identifier = 0;
    while (identifier < run.length && run.charCodeAt(identifier) <= 57) identifier++;
    if (identifier < run.length) {
      const ids = this.interner.idsOf(run.slice(identifier));
      for (let t = 0; t < ids.length; t++) this.runTermIds.push(ids[t]);
    }
    this.runTermFrom.push(this.runTermIds.length);
    const words: number[] = [];
    let i = 0;
    while (i < run.length) {
      if (run.charCodeAt(i) === UNDERSCORE) {
        words.push(this.punctuationWord(UNDERSCORE));
        i++;
        continue;
      }
      const from = i;
      while (i < run.length && run.charCodeAt(i) !== UNDERSCORE) i++;
      const word = run.slice(from, i).toLowerCase();
      const h = hashString(word);
      const w = this.words.find(word, 0, word.length, h);
      words.push(w >= 0 ? w : this.addWord(word, h));
    }
    this.runWords[k] = Int32Array.from(words);
    this.runTokens.push(-1);
    return k;
  }

  /**
   * The run named by a C-like signature whose `(` is at `paren`, or -1: the line from `from` is
   * blanks, then words of a type (each starting with a letter or `_`, joined by `<>,:[]*&`, a word
   * after a blank starting with a letter or `_`), then the name after a blank, `*` or `&`, then
   * blanks. The name is the last run the scan added.
   */
  private signatureName(text: string, from: number, paren: number): number {
    let end = paren;
    while (end > from && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--;
    let i = from;
    while (i < end && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
    if (i === end || CLASS[text.charCodeAt(i)] !== IDENTIFIER) return -1;
    let afterBlank = true; // the first word must start with a letter or `_`, as after a blank
    let afterSeparator = false;
    let name = -1;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c >= 128) return -1;
      if (CLASS[c] === IDENTIFIER) {
        const digit = c <= 57;
        if (digit && afterBlank) return -1;
        name = afterSeparator && !digit ? i : -1;
        afterBlank = afterSeparator = false;
        while (i + 1 < end && text.charCodeAt(i + 1) < 128 && CLASS[text.charCodeAt(i + 1)] === IDENTIFIER)
          i++;
      } else if (c === 32 || c === 9) {
        afterBlank = afterSeparator = true;
        name = -1;
      } else if (c === STAR || c === AMPERSAND) {
        afterSeparator = true;
        name = -1;
      } else if (TYPE_PUNCTUATION[c] && !afterBlank) {
        afterSeparator = false;
        name = -1;
      } else return -1;
    }
    if (name < 0) return -1;
    const run = this.items.data[this.items.length - 1];
    return this.runKind.data[run] === RUN_NOT_A_NAME ? -1 : run;
  }

  /** Puts the chunk's defined names (runs) before its text, which starts at item `textStart`. */
  private insertDefined(textStart: number): void {
    const count = this.defined.length;
    if (count === 0) return;
    const items = this.items;
    if (items.length + count > items.data.length) items.grow(items.length + count);
    const data = items.data;
    for (let at = items.length - 1; at >= textStart; at--) data[at + count] = data[at];
    const names = this.defined.data;
    for (let k = 0; k < count; k++) data[textStart + k] = names[k];
    items.length += count;
  }

  private punctuationWord(c: number): number {
    let w = this.punctuation[c];
    if (w < 0) {
      const word = String.fromCharCode(c);
      w = this.words.find(word, 0, 1, hashString(word));
      if (w < 0) w = this.addWord(word, hashString(word));
      this.punctuation[c] = w;
    }
    return w;
  }

  private addWord(word: string, hash: number): number {
    const w = this.words.add(word, hash);
    this.wordTokens.push(0);
    this.unseen.push(w);
    return w;
  }

  /**
   * The pooled vector of items[start, end) into `out`: at most MAX_TOKENS tokens, in order. Items
   * repeat within a chunk (a third are distinct), so each distinct item's sum is added once, times
   * its count.
   */
  private pool(start: number, end: number, out: Float32Array): void {
    const dim = this.model.dim;
    const sum = this.sum;
    sum.fill(0);
    const items = this.items.data;
    if (this.itemCounts.length < this.runs.size + this.words.size)
      this.itemCounts = new Int32Array(2 * (this.runs.size + this.words.size));
    // Runs count at their number, words after every run.
    const counts = this.itemCounts;
    const wordsAt = this.runs.size;
    const distinct = this.distinct;
    distinct.length = 0;
    let tokens = 0;
    /** The item that reaches MAX_TOKENS, whose first tokens only are pooled. */
    let partial: number | undefined;
    for (let p = start; p < end; p++) {
      const item = items[p];
      let count: number;
      let slot: number;
      if (item >= 0) {
        count = this.runTokens.data[item];
        if (count < 0) count = this.sumRun(item);
        slot = item;
      } else {
        count = this.wordTokens.data[~item];
        slot = wordsAt + ~item;
      }
      if (tokens + count > MAX_TOKENS) {
        partial = item;
        break;
      }
      if (counts[slot]++ === 0) distinct.push(slot);
      tokens += count;
    }
    const runSums = this.runSums.data;
    const wordSums = this.wordSums.data;
    for (let k = 0; k < distinct.length; k++) {
      const slot = distinct.data[k];
      const times = counts[slot];
      counts[slot] = 0;
      const rows = slot < wordsAt ? runSums : wordSums;
      const base = (slot < wordsAt ? slot : slot - wordsAt) * dim;
      for (let d = 0; d < dim; d++) sum[d] += times * rows[base + d];
    }
    if (partial !== undefined) {
      this.addFirstTokens(partial, MAX_TOKENS - tokens);
      tokens = MAX_TOKENS;
    }
    this.model.finishPool(sum, tokens, out);
  }

  /** Adds the rows of the first `limit` tokens of an item (the one that reaches the token limit). */
  private addFirstTokens(item: number, limit: number): void {
    const words = item >= 0 ? this.runWords[item] : [~item];
    for (const w of words) {
      const ids = this.wordIds[w]!;
      const take = Math.min(limit, ids.length);
      this.model.addRows(ids, this.sum, 0, take);
      limit -= take;
      if (limit === 0) return;
    }
  }

  /** Computes run k's row sum from its words' sums; returns its token count. */
  private sumRun(k: number): number {
    const dim = this.model.dim;
    const target = this.runSums.row(k);
    const sums = this.wordSums.data;
    let count = 0;
    for (const w of this.runWords[k]) {
      for (let d = 0; d < dim; d++) target[d] += sums[w * dim + d];
      count += this.wordTokens.data[w];
    }
    this.runTokens.data[k] = count;
    return count;
  }

  /** Starts the word and run tables again (their term ids stay valid: the interner is kept). */
  private forget(): void {
    this.words = new RangeTable();
    this.wordIds = [];
    this.wordTokens.length = 0;
    this.punctuation.fill(-1);
    this.runs = new RangeTable();
    this.runKind.length = 0;
    this.runTermIds.length = 0;
    this.runTermFrom.length = 1;
    this.runWords = [];
    this.runTokens.length = 0;
    this.runSums = new VectorTable(this.model.dim);
    this.wordSums = new VectorTable(this.model.dim);
    this.lastPath = undefined;
  }

  /**
   * Token ids of new words. With `splitWords` and a BERT WordPiece vocabulary, ASCII words are split
   * here (the tokenizer costs 5–10 µs a word through its bindings: 0.7 s for the 72 k words of the
   * generated 10,000-file repository); other words go to the tokenizer, a group of words per call,
   * split again at the separator's id.
   */
  private async learn(numbers: number[]): Promise<void> {
    const vocabulary = this.splitWords ? this.model.wordPieceVocabulary() : undefined;
    if (vocabulary && !this.splitter) {
      this.splitter = splitters.get(vocabulary) ?? new WordPieceSplitter(vocabulary);
      splitters.set(vocabulary, this.splitter);
    }
    const rest: number[] = [];
    for (const k of numbers) {
      const word = this.words.keys[k];
      if (this.splitter && !NON_ASCII_WORD.test(word)) this.setWordIds(k, this.splitter.ids(word));
      else rest.push(k);
    }
    if (!rest.length) return;
    this.separatorId ??= (await this.model.tokenize([SEPARATOR]))[0][0];
    const separator = this.separatorId;
    const plain: number[] = [];
    for (const k of rest) {
      if (this.words.keys[k] === SEPARATOR) this.setWordIds(k, [separator]);
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
      else for (let i = 0; i < group.length; i++) this.setWordIds(group[i], parts[i]);
    });
    if (retry.length) {
      const ids = await this.model.tokenize(retry.map((k) => this.words.keys[k]));
      for (let i = 0; i < retry.length; i++) this.setWordIds(retry[i], ids[i]);
    }
  }

  private setWordIds(w: number, ids: number[]): void {
    this.wordIds[w] = Int32Array.from(ids);
    this.wordTokens.data[w] = ids.length;
    this.model.addRows(ids, this.wordSums.row(w));
  }
}
