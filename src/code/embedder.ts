/**
 * Embeds many chunks fast. A WordPiece model tokenizes each word on its own, so the token ids of a
 * text are the concatenation of its words' ids: we split texts into words the way the BERT
 * pre-tokenizer does (letter/digit runs, single punctuation marks), ask the model's tokenizer only
 * for words not seen before, and pool the ids. Identifiers repeat across a repository (curl: 1.5 M
 * words, 11 k distinct), so this does a tenth of the tokenizer work of embedding each chunk whole.
 */
import { MAX_TOKENS, type StaticModel } from "../embed/model.ts";

const WORD = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu;
/** Bounds the word cache on huge repositories; past it words are tokenized again, never dropped. */
const MAX_CACHED_WORDS = 500_000;
/**
 * New words are tokenized in groups joined by SEPARATOR, one tokenizer call per group instead of
 * per word (each call has a fixed cost near 20 µs). A group stays well under the model's token limit.
 */
const WORDS_PER_GROUP = 64;
const SEPARATOR = "|";

export class ChunkEmbedder {
  private readonly wordIds = new Map<string, number[]>();
  private separatorId: number | undefined;

  constructor(private readonly model: StaticModel) {}

  async embed(texts: string[]): Promise<Float32Array> {
    const words = texts.map((text) => text.toLowerCase().match(WORD) ?? []);
    const unseen = new Set<string>();
    const collect = () => {
      for (const list of words)
        for (let i = 0; i < list.length; i++) if (!this.wordIds.has(list[i])) unseen.add(list[i]);
    };
    collect();
    if (this.wordIds.size + unseen.size > MAX_CACHED_WORDS) {
      this.wordIds.clear();
      collect();
    }
    if (unseen.size) await this.learn([...unseen]);
    const ids = words.map((list) => {
      const out: number[] = [];
      for (let w = 0; w < list.length && out.length < MAX_TOKENS; w++) {
        const wordIds = this.wordIds.get(list[w]);
        if (wordIds) for (let k = 0; k < wordIds.length; k++) out.push(wordIds[k]);
      }
      if (out.length > MAX_TOKENS) out.length = MAX_TOKENS;
      return out;
    });
    return this.model.embedIds(ids);
  }

  /** Token ids of new words, a group of words per tokenizer call, split again at the separator's id. */
  private async learn(words: string[]): Promise<void> {
    this.separatorId ??= (await this.model.tokenize([SEPARATOR]))[0][0];
    const separator = this.separatorId;
    const plain = words.filter((w) => w !== SEPARATOR);
    if (plain.length < words.length) this.wordIds.set(SEPARATOR, [separator]);
    const groups: string[][] = [];
    for (let i = 0; i < plain.length; i += WORDS_PER_GROUP) groups.push(plain.slice(i, i + WORDS_PER_GROUP));
    const encoded = await this.model.tokenize(groups.map((group) => group.join(` ${SEPARATOR} `)));
    const retry: string[] = [];
    groups.forEach((group, g) => {
      const parts: number[][] = [[]];
      for (const id of encoded[g]) {
        if (id === separator) parts.push([]);
        else parts[parts.length - 1].push(id);
      }
      // Truncation at the token limit would lose the tail: such a group is tokenized word by word.
      if (parts.length !== group.length) retry.push(...group);
      else for (let i = 0; i < group.length; i++) this.wordIds.set(group[i], parts[i]);
    });
    if (retry.length) {
      const ids = await this.model.tokenize(retry);
      for (let i = 0; i < retry.length; i++) this.wordIds.set(retry[i], ids[i]);
    }
  }
}
