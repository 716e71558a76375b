/**
 * A lower-casing BERT WordPiece tokenizer (the potion models') in TypeScript, for short texts such as a
 * recall query, with its vocabulary in a prebuilt table: a fresh process embeds a query without building
 * the native tokenizer from tokenizer.json (~40 ms of CPU) or even parsing that JSON (~12 ms) and filling a
 * Map of its 30 k pieces (~10 ms). The table is three typed arrays — the pieces' UTF-16 code units in id
 * order, their offsets, and an open-addressing hash table of ids — so it loads as bytes, with nothing to
 * decode; a lookup hashes a range of the word and compares code units.
 *
 * It reproduces the native tokenizer (HF tokenizers: added tokens, BertNormalizer, BertPreTokenizer,
 * WordPiece) for text it `canEncode`: characters below U+0250 (Latin and its extensions) and General
 * Punctuation, whose Unicode categories the Rust crates and JavaScript agree on. Other text goes to the
 * native tokenizer. test/embed-wordpiece.test.ts compares both on a corpus.
 */

/** How the tokenizer.json this table was derived from normalises and splits text. */
export interface WordPieceSettings {
  unk: number;
  /** Marks a piece that continues a word (`##`). */
  continuation: string;
  /** Longer words are unknown as a whole. */
  maxChars: number;
  lowercase: boolean;
  stripAccents: boolean;
  /** Added tokens, matched in the raw text before anything else (`[CLS]`, `[MASK]` …). */
  added: [content: string, id: number][];
}

const MAGIC = "TFVOCAB1";
const HEAD_BYTES = 20;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** What this tokenizer reproduces exactly (see the file comment). */
const ENCODABLE = /^[\u0000-\u024f\u2000-\u206f]*$/;
/** Removed by BertNormalizer's clean_text: control, format, private-use, unassigned (not \t \n \r). */
const REMOVED = /[^\t\n\r\P{C}]|\ufffd/gu;
const WHITE_SPACE = /\p{White_Space}/gu;
const NON_SPACING_MARK = /\p{Mn}/gu;
const UPPER_OR_LATIN = /[A-Z\u00c0-\u024f]/g;
const NON_ASCII = /[^\x00-\x7f]/;
/** BertPreTokenizer's punctuation: ASCII punctuation and symbols, and Unicode punctuation. */
const PUNCTUATION = /[!-/:-@[-`{-~]|\p{P}/u;

type TokenizerJson = {
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    unk_token?: string;
    continuing_subword_prefix?: string;
    max_input_chars_per_word?: number;
  };
  normalizer?: {
    type?: string;
    clean_text?: boolean;
    handle_chinese_chars?: boolean;
    strip_accents?: boolean | null;
    lowercase?: boolean;
  } | null;
  pre_tokenizer?: { type?: string } | null;
  added_tokens?: {
    id: number;
    content: string;
    normalized?: boolean;
    single_word?: boolean;
    lstrip?: boolean;
    rstrip?: boolean;
  }[];
};

/** A table that does not check out (damaged, of another layout). */
export class WordPieceTableError extends Error {}

function fnv(hash: number, code: number): number {
  return Math.imul(hash ^ code, FNV_PRIME);
}

export class WordPieceTable {
  private readonly mask: number;
  private readonly continuationHash: number;

  private constructor(
    /** The pieces' UTF-16 code units, concatenated in id order. */
    private readonly units: Uint16Array,
    /** Piece `id` is `units[offsets[id], offsets[id + 1])`. */
    private readonly offsets: Int32Array,
    /** Open addressing by FNV-1a of the piece's code units: id + 1, 0 for an empty slot. */
    private readonly slots: Int32Array,
    readonly settings: WordPieceSettings,
  ) {
    this.mask = slots.length - 1;
    let hash = FNV_OFFSET;
    for (let i = 0; i < settings.continuation.length; i++)
      hash = fnv(hash, settings.continuation.charCodeAt(i));
    this.continuationHash = hash;
  }

  /** Number of pieces (ids 0 … size − 1). */
  get size(): number {
    return this.offsets.length - 1;
  }

  /**
   * The table of a tokenizer.json, or undefined when it is not a tokenizer this class reproduces (another
   * model type, normaliser or pre-tokenizer, added tokens that are normalised or match whole words only,
   * ids with gaps). Throws on text that is not JSON.
   */
  static fromTokenizerJson(json: string): WordPieceTable | undefined {
    // Another kind of tokenizer is told apart without parsing its JSON (~12 ms for 700 KB, cold).
    if (!json.includes('"BertPreTokenizer"') || !json.includes('"WordPiece"')) return undefined;
    const config = JSON.parse(json) as TokenizerJson;
    const { model, normalizer } = config;
    const vocab = model?.vocab;
    if (
      model?.type !== "WordPiece" ||
      !vocab ||
      typeof model.unk_token !== "string" ||
      typeof model.continuing_subword_prefix !== "string" ||
      typeof model.max_input_chars_per_word !== "number" ||
      normalizer?.type !== "BertNormalizer" ||
      normalizer.clean_text !== true ||
      typeof normalizer.lowercase !== "boolean" ||
      config.pre_tokenizer?.type !== "BertPreTokenizer"
    )
      return undefined;
    const added = config.added_tokens ?? [];
    if (added.some((t) => t.normalized !== false || t.single_word || t.lstrip || t.rstrip || !t.content))
      return undefined;
    const pieces = Object.keys(vocab);
    const byId: string[] = new Array(pieces.length);
    for (const piece of pieces) {
      const id = vocab[piece];
      if (!Number.isInteger(id) || id < 0 || id >= pieces.length || byId[id] !== undefined) return undefined;
      byId[id] = piece;
    }
    const unk = vocab[model.unk_token];
    if (unk === undefined) return undefined;
    const offsets = new Int32Array(byId.length + 1);
    for (let id = 0; id < byId.length; id++) offsets[id + 1] = offsets[id] + byId[id].length;
    const units = new Uint16Array(offsets[byId.length]);
    for (let id = 0; id < byId.length; id++)
      for (let i = 0; i < byId[id].length; i++) units[offsets[id] + i] = byId[id].charCodeAt(i);
    let capacity = 1;
    while (capacity < byId.length * 2) capacity *= 2;
    const slots = new Int32Array(capacity);
    for (let id = 0; id < byId.length; id++) {
      let hash = FNV_OFFSET;
      for (let i = 0; i < byId[id].length; i++) hash = fnv(hash, byId[id].charCodeAt(i));
      let slot = hash & (capacity - 1);
      while (slots[slot] !== 0) slot = (slot + 1) & (capacity - 1);
      slots[slot] = id + 1;
    }
    return new WordPieceTable(units, offsets, slots, {
      unk,
      continuation: model.continuing_subword_prefix,
      maxChars: model.max_input_chars_per_word,
      lowercase: normalizer.lowercase,
      // HF: strip_accents unset follows lowercase.
      stripAccents: normalizer.strip_accents ?? normalizer.lowercase,
      added: added.map((t) => [t.content, t.id]),
    });
  }

  /** The table as bytes (a cache file): head, settings as JSON, then the three arrays, with a CRC-32. */
  toBytes(): Uint8Array {
    const settings = new TextEncoder().encode(
      JSON.stringify({ ...this.settings, pieces: this.size, slots: this.slots.length }),
    );
    const arraysAt = (HEAD_BYTES + settings.length + 3) & ~3;
    const bytes = new Uint8Array(
      arraysAt + this.offsets.byteLength + this.slots.byteLength + this.units.byteLength,
    );
    bytes.set(new TextEncoder().encode(MAGIC));
    const view = new DataView(bytes.buffer);
    view.setUint32(8, settings.length, true);
    bytes.set(settings, HEAD_BYTES);
    let at = arraysAt;
    for (const array of [this.offsets, this.slots, this.units]) {
      bytes.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), at);
      at += array.byteLength;
    }
    view.setUint32(12, bytes.length, true);
    view.setUint32(16, Bun.hash.crc32(bytes.subarray(HEAD_BYTES)), true);
    return bytes;
  }

  /** The table `toBytes` wrote; throws WordPieceTableError for bytes that do not check out. */
  static fromBytes(bytes: Uint8Array): WordPieceTable {
    if (bytes.length < HEAD_BYTES || new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC)
      throw new WordPieceTableError("not a vocabulary table");
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(12, true) !== bytes.length) throw new WordPieceTableError("truncated");
    if (Bun.hash.crc32(bytes.subarray(HEAD_BYTES)) !== view.getUint32(16, true))
      throw new WordPieceTableError("damaged");
    const settingsLength = view.getUint32(8, true);
    const header = JSON.parse(
      new TextDecoder().decode(bytes.subarray(HEAD_BYTES, HEAD_BYTES + settingsLength)),
    );
    const {
      pieces,
      slots: capacity,
      ...settings
    } = header as WordPieceSettings & { pieces: number; slots: number };
    // Copied out of the file's bytes (a Buffer's slice would be a view into a shared pool): aligned.
    const arraysAt = (HEAD_BYTES + settingsLength + 3) & ~3;
    const body = new Uint8Array(bytes.subarray(arraysAt));
    const offsets = new Int32Array(body.buffer, 0, pieces + 1);
    const slots = new Int32Array(body.buffer, offsets.byteLength, capacity);
    const units = new Uint16Array(body.buffer, offsets.byteLength + slots.byteLength, offsets[pieces]);
    return new WordPieceTable(units, offsets, slots, settings);
  }

  /** Whether `encode` gives exactly the native tokenizer's ids for this text. */
  canEncode(text: string): boolean {
    return ENCODABLE.test(text);
  }

  /** The id of a piece, or -1. */
  idOf(piece: string): number {
    return this.find(piece, 0, piece.length, false);
  }

  /** Token ids as the native tokenizer gives them with no special tokens added ([UNK] included). */
  encode(text: string): number[] {
    const ids: number[] = [];
    const { added } = this.settings;
    let from = 0;
    while (from < text.length) {
      // The leftmost added token, the longest where two start at the same place.
      let at = -1;
      let match: [string, number] | undefined;
      for (const token of added) {
        const found = text.indexOf(token[0], from);
        if (found >= 0 && (at < 0 || found < at || (found === at && token[0].length > match![0].length))) {
          at = found;
          match = token;
        }
      }
      this.encodeSegment(text.slice(from, at < 0 ? text.length : at), ids);
      if (!match) break;
      ids.push(match[1]);
      from = at + match[0].length;
    }
    return ids;
  }

  private encodeSegment(segment: string, ids: number[]): void {
    for (const word of this.words(this.normalize(segment))) this.wordPieces(word, ids);
  }

  /** BertNormalizer: clean text, strip accents, lower-case (Chinese characters are never encodable). */
  private normalize(text: string): string {
    let out = text.replace(REMOVED, "").replace(WHITE_SPACE, " ");
    const ascii = !NON_ASCII.test(out);
    if (this.settings.stripAccents && !ascii) out = out.normalize("NFD").replace(NON_SPACING_MARK, "");
    // Character by character, as Rust's char::to_lowercase (no final-sigma rule).
    if (this.settings.lowercase)
      out = ascii ? out.toLowerCase() : out.replace(UPPER_OR_LATIN, (c) => c.toLowerCase());
    return out;
  }

  /** BertPreTokenizer: split at white space, every punctuation character a word of its own. */
  private *words(text: string): Generator<string> {
    for (const chunk of text.split(" ")) {
      let start = 0;
      for (let i = 0; i < chunk.length; i++) {
        if (!PUNCTUATION.test(chunk[i])) continue;
        if (i > start) yield chunk.slice(start, i);
        yield chunk[i];
        start = i + 1;
      }
      if (start < chunk.length) yield chunk.slice(start);
    }
  }

  /** WordPiece: the longest pieces from the left, later ones marked as continuations; else [UNK]. */
  private wordPieces(word: string, ids: number[]): void {
    if (word.length > this.settings.maxChars) {
      ids.push(this.settings.unk);
      return;
    }
    const first = ids.length;
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let id = -1;
      for (; end > start; end--) {
        id = this.find(word, start, end, start > 0);
        if (id >= 0) break;
      }
      if (id < 0) {
        ids.length = first;
        ids.push(this.settings.unk);
        return;
      }
      ids.push(id);
      start = end;
    }
  }

  /** Id of `word[start, end)`, behind the continuation mark when `continues`; -1 when not a piece. */
  private find(word: string, start: number, end: number, continues: boolean): number {
    let hash = continues ? this.continuationHash : FNV_OFFSET;
    for (let i = start; i < end; i++) hash = fnv(hash, word.charCodeAt(i));
    const mark = continues ? this.settings.continuation.length : 0;
    const length = mark + end - start;
    for (let slot = hash & this.mask; this.slots[slot] !== 0; slot = (slot + 1) & this.mask) {
      const id = this.slots[slot] - 1;
      const from = this.offsets[id];
      if (this.offsets[id + 1] - from !== length) continue;
      let same = true;
      for (let i = 0; i < mark && same; i++)
        same = this.units[from + i] === this.settings.continuation.charCodeAt(i);
      for (let i = start; i < end && same; i++)
        same = this.units[from + mark + i - start] === word.charCodeAt(i);
      if (same) return id;
    }
    return -1;
  }
}
