import { halfToFloatTable, readSafetensors, type Tensor } from "./safetensors.ts";
import { WordPieceTable } from "./wordpiece.ts";

/**
 * Inputs longer than this many tokens are truncated (model2vec's own default for `encode`).
 * Static embeddings mean-pool, so the tail of a very long text adds little; the cap bounds cost.
 */
export const MAX_TOKENS = 512;
/** Characters kept before tokenising: a generous bound on MAX_TOKENS tokens, so huge inputs stay cheap. */
const MAX_CHARS = MAX_TOKENS * 16;

export interface ModelFiles {
  /** A name for people and for index compatibility checks, e.g. `potion-base-2M-int8`. */
  id: string;
  config: string;
  tokenizer: string;
  weights: Uint8Array;
  /** Where the files came from, for error messages. */
  origin: string;
  /** The vocabulary table of `tokenizer`, when one derived earlier was kept (source.ts caches it). */
  vocabulary?: WordPieceTable;
}

interface Tokenizer {
  encodeBatch(texts: string[], options: { addSpecialTokens: boolean }): Promise<{ getIds(): number[] }[]>;
  getVocabSize(withAddedTokens?: boolean): number;
  tokenToId(token: string): number | null;
}

export class ModelError extends Error {}

/** A WordPiece vocabulary and the rules its tokenizer applies to one word (see wordPieceVocabulary). */
export interface WordPieceVocabulary {
  ids: Map<string, number>;
  /** Marks a piece that continues a word (`##`). */
  continuation: string;
  /** Longer words are unknown as a whole. */
  maxChars: number;
  /** Characters of the longest vocabulary entry: no longer piece needs looking up. */
  longestPiece: number;
}

/** A model2vec static embedding model: token rows, mean-pooled, optionally L2-normalised. */
export class StaticModel {
  readonly id: string;
  readonly dim: number;
  readonly normalize: boolean;
  private readonly rowOf: Int32Array | undefined;
  private readonly scale: Float32Array | Float64Array | undefined;
  private readonly rows: Tensor;
  private readonly unkId: number;
  private readonly tokenizerJson: string;
  private wordPiece: WordPieceVocabulary | null | undefined;

  /** Built on first need: a batch, or text the vocabulary table does not reproduce. */
  private native: Promise<Tokenizer> | undefined;

  private constructor(
    private readonly files: ModelFiles,
    /** The pure-TypeScript tokenizer for short texts; undefined for a tokenizer it does not reproduce. */
    readonly vocabulary: WordPieceTable | undefined,
    native: Tokenizer | undefined,
    tensors: Map<string, Tensor>,
    normalize: boolean,
  ) {
    if (native) this.native = Promise.resolve(native);
    this.id = files.id;
    this.normalize = normalize;
    const rows = tensors.get("embeddings");
    if (rows?.shape.length !== 2)
      throw new ModelError(`${files.origin}/model.safetensors: no 2-D 'embeddings' tensor`);
    if (!["F32", "F16", "I8"].includes(rows.dtype)) {
      throw new ModelError(`${files.origin}/model.safetensors: unsupported embeddings dtype ${rows.dtype}`);
    }
    this.rows = rows;
    this.dim = rows.shape[1];
    const vocab = vocabulary ? vocabulary.size : native!.getVocabSize(true);
    const mapping = tensors.get("mappings") ?? tensors.get("mapping");
    if (mapping) {
      if (mapping.data instanceof BigInt64Array) this.rowOf = Int32Array.from(mapping.data, Number);
      else if (mapping.data instanceof Int32Array) this.rowOf = mapping.data;
      else
        throw new ModelError(
          `${files.origin}/model.safetensors: mapping must be I64 or I32, not ${mapping.dtype}`,
        );
      if (this.rowOf.length < vocab) {
        throw new ModelError(
          `${files.origin}/model.safetensors: mapping has ${this.rowOf.length} entries for a vocabulary of ${vocab}`,
        );
      }
      for (const row of this.rowOf) {
        if (row < 0 || row >= rows.shape[0])
          throw new ModelError(`${files.origin}/model.safetensors: mapping points outside embeddings`);
      }
    } else if (rows.shape[0] < vocab) {
      throw new ModelError(
        `${files.origin}/model.safetensors: embeddings have ${rows.shape[0]} rows for a vocabulary of ${vocab}`,
      );
    }
    const weights = tensors.get("weights");
    if (weights) {
      if (!(weights.data instanceof Float32Array || weights.data instanceof Float64Array)) {
        throw new ModelError(
          `${files.origin}/model.safetensors: weights must be F32 or F64, not ${weights.dtype}`,
        );
      }
      if (weights.data.length < vocab)
        throw new ModelError(`${files.origin}/model.safetensors: weights shorter than the vocabulary`);
      this.scale = weights.data;
    }
    this.unkId = vocabulary
      ? vocabulary.settings.unk
      : (native!.tokenToId("[UNK]") ?? native!.tokenToId("<unk>") ?? -1);
    this.tokenizerJson = files.tokenizer;
  }

  /**
   * The model of `files`. With a vocabulary table (kept from an earlier load, or derived from the
   * tokenizer's JSON) the native tokenizer is built only when first needed; a tokenizer the table does
   * not reproduce is built at once.
   */
  static async load(files: ModelFiles): Promise<StaticModel> {
    let config: { normalize?: boolean };
    try {
      config = JSON.parse(files.config);
    } catch {
      throw new ModelError(`${files.origin}/config.json: not valid JSON`);
    }
    let vocabulary = files.vocabulary;
    try {
      vocabulary ??= WordPieceTable.fromTokenizerJson(files.tokenizer);
    } catch (error) {
      throw new ModelError(
        `${files.origin}/tokenizer.json: cannot load tokenizer (${(error as Error).message})`,
      );
    }
    const native = vocabulary ? undefined : await nativeTokenizer(files);
    let tensors: Map<string, Tensor>;
    try {
      tensors = readSafetensors(files.weights, `${files.origin}/model.safetensors`);
    } catch (error) {
      throw new ModelError((error as Error).message);
    }
    return new StaticModel(files, vocabulary, native, tensors, config.normalize ?? true);
  }

  private tokenizer(): Promise<Tokenizer> {
    this.native ??= nativeTokenizer(this.files);
    return this.native;
  }

  /** Token ids as the model sees them: no special tokens, unknown tokens dropped, truncated to MAX_TOKENS. */
  async tokenize(texts: string[]): Promise<number[][]> {
    const inputs = texts.map((t) => (t.length > MAX_CHARS ? t.slice(0, MAX_CHARS) : t));
    // One text (a query) the table reproduces is split here; batches go to the native tokenizer, which
    // runs them on its own thread while the indexer works.
    const table = this.vocabulary;
    const encoded =
      table && inputs.length === 1 && table.canEncode(inputs[0])
        ? [table.encode(inputs[0])]
        : (await (await this.tokenizer()).encodeBatch(inputs, { addSpecialTokens: false })).map((e) =>
            e.getIds(),
          );
    return encoded.map((all) => {
      const ids = all.filter((id) => id !== this.unkId);
      return ids.length > MAX_TOKENS ? ids.slice(0, MAX_TOKENS) : ids;
    });
  }

  /**
   * The vocabulary of a lower-casing BERT WordPiece tokenizer (the potion models'), with which a
   * caller may split a lower-cased ASCII word or punctuation mark itself exactly as the tokenizer
   * would (the code indexer meets tens of thousands of new words). Undefined for any other
   * tokenizer, or when an added token could match a whole word.
   */
  wordPieceVocabulary(): WordPieceVocabulary | undefined {
    if (this.wordPiece === undefined) {
      type Config = {
        model?: {
          type?: string;
          vocab?: Record<string, number>;
          continuing_subword_prefix?: string;
          max_input_chars_per_word?: number;
        };
        normalizer?: { type?: string; lowercase?: boolean; clean_text?: boolean } | null;
        pre_tokenizer?: { type?: string } | null;
        added_tokens?: { content: string }[];
      };
      const config = JSON.parse(this.tokenizerJson) as Config;
      const { model, normalizer } = config;
      const bert =
        model?.type === "WordPiece" &&
        model.vocab !== undefined &&
        typeof model.continuing_subword_prefix === "string" &&
        typeof model.max_input_chars_per_word === "number" &&
        normalizer?.type === "BertNormalizer" &&
        normalizer.lowercase === true &&
        normalizer.clean_text === true &&
        config.pre_tokenizer?.type === "BertPreTokenizer" &&
        (config.added_tokens ?? []).every((t) => t.content.length > 1 && /[^a-z0-9]/.test(t.content));
      this.wordPiece = bert
        ? {
            ids: new Map(Object.entries(model.vocab!)),
            continuation: model.continuing_subword_prefix!,
            maxChars: model.max_input_chars_per_word!,
            longestPiece: Math.max(...Object.keys(model.vocab!).map((piece) => piece.length)),
          }
        : null;
    }
    return this.wordPiece ?? undefined;
  }

  /** Embeds many texts into one row-major Float32Array of `texts.length × dim`. */
  async embedBatch(texts: string[]): Promise<Float32Array> {
    const out = new Float32Array(texts.length * this.dim);
    if (texts.length === 0) return out;
    const ids = await this.tokenize(texts);
    for (let i = 0; i < ids.length; i++) this.pool(ids[i], out.subarray(i * this.dim, (i + 1) * this.dim));
    return out;
  }

  /**
   * Embeds token-id lists as `tokenize` returns them. For callers that tokenize each distinct word
   * once and reuse its ids (the memory indexer: a fact reuses its subject's, predicate's and object's).
   */
  embedIds(ids: number[][]): Float32Array {
    const out = new Float32Array(ids.length * this.dim);
    for (let i = 0; i < ids.length; i++) this.pool(ids[i], out.subarray(i * this.dim, (i + 1) * this.dim));
    return out;
  }

  async embed(text: string): Promise<Float32Array> {
    return this.embedBatch([text]);
  }

  /** Mean of the (scaled) rows of `ids` into `target`; all-unknown or empty input leaves zeros. */
  private pool(ids: number[], target: Float32Array): void {
    if (ids.length === 0) return;
    this.addRows(ids, target);
    this.finishPool(target, ids.length, target);
  }

  /**
   * Adds the (scaled) rows of `ids[from, to)` to `sum`. With finishPool, lets a caller pool a text
   * from sums it keeps per word (the code indexer), instead of from every token each time.
   */
  addRows(ids: ArrayLike<number>, sum: Float32Array | Float64Array, from = 0, to = ids.length): void {
    const dim = this.dim;
    const data = this.rows.data;
    const half = this.rows.dtype === "F16" ? halfToFloatTable() : undefined;
    for (let i = from; i < to; i++) {
      const id = ids[i];
      const row = this.rowOf ? this.rowOf[id] : id;
      const scale = this.scale ? this.scale[id] : 1;
      const base = row * dim;
      if (half) for (let d = 0; d < dim; d++) sum[d] += half[(data as Uint16Array)[base + d]] * scale;
      else for (let d = 0; d < dim; d++) sum[d] += (data as Float32Array | Int8Array)[base + d] * scale;
    }
  }

  /** The pooled vector of `count` tokens whose rows add up to `sum`, written to `out` (may be `sum`). */
  finishPool(sum: Float32Array | Float64Array, count: number, out: Float32Array): void {
    const dim = this.dim;
    if (count === 0) {
      out.fill(0, 0, dim);
      return;
    }
    if (this.normalize) {
      let norm = 0;
      for (let d = 0; d < dim; d++) norm += sum[d] * sum[d];
      norm = Math.sqrt(norm);
      if (norm > 0) for (let d = 0; d < dim; d++) out[d] = sum[d] / norm;
      else for (let d = 0; d < dim; d++) out[d] = sum[d];
    } else {
      for (let d = 0; d < dim; d++) out[d] = sum[d] / count;
    }
  }
}

/** The native (HF tokenizers) tokenizer of a tokenizer.json. */
async function nativeTokenizer(files: ModelFiles): Promise<Tokenizer> {
  try {
    // Native code cannot open paths inside the compiled binary, so the tokenizer is built from its JSON text.
    const addon = await import("@anush008/tokenizers");
    // The compiled build swaps in the bare addon (CommonJS), whose exports arrive as `default`.
    const { Tokenizer } = addon.Tokenizer ? addon : (addon as unknown as { default: typeof addon }).default;
    return Tokenizer.fromString(files.tokenizer) as unknown as Tokenizer;
  } catch (error) {
    throw new ModelError(
      `${files.origin}/tokenizer.json: cannot load tokenizer (${(error as Error).message})`,
    );
  }
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
