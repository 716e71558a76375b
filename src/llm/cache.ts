/**
 * Where OpenIE results and summaries are kept per chunk hash, so re-indexing never pays twice for the
 * same text. The memory store implements it on its own table; InMemoryResultCache serves tests.
 */
export interface ResultCache {
  get(key: string): string | undefined | null | Promise<string | undefined | null>;
  set(key: string, value: string): void | Promise<void>;
}

/** A cache and the hash of the chunk being processed (the caller already hashes chunks to dedupe them). */
export interface CacheSlot {
  cache: ResultCache;
  chunkHash: string;
}

/**
 * Bump a kind's version when its prompt or output format changes, so old entries are not reused.
 * The model is not part of the key: switching models should not re-bill a whole history.
 */
const CACHE_VERSIONS = { openie: 1, summary: 1 } as const;

export function cacheKey(kind: keyof typeof CACHE_VERSIONS, chunkHash: string): string {
  return `${kind}:v${CACHE_VERSIONS[kind]}:${chunkHash}`;
}

export class InMemoryResultCache implements ResultCache {
  readonly entries = new Map<string, string>();

  get(key: string): string | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: string): void {
    this.entries.set(key, value);
  }
}
