/**
 * recall.bin's pages checked when a query first reads them, not all at open: each section of the file
 * holds PAGE_BYTES pages with a CRC-32 each, and the arrays mapped from it carry a PageGuard that checks
 * a page the first time its elements are read. A fresh query then checks what it reads (a few hundred
 * pages of a 1.2 GB file), not the file; a damaged page it reads throws SnapshotFileError, and recall
 * answers from the store instead. Arrays built in memory have no guard and cost nothing.
 */

/** One OS page: a query's reads are scattered (postings, fact rows, graph rows), so pages stay small. */
export const PAGE_BYTES = 4096;

/** A file that is not a usable snapshot (damaged, truncated, of another version). */
export class SnapshotFileError extends Error {}

/** The page checks of one mapped array (a section of recall.bin). */
export class PageGuard {
  /** 1 where page p was checked. */
  readonly checked: Uint8Array;
  /** Element i lies on page i >> shift. */
  readonly shift: number;
  private checkedAll = false;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly crcs: Uint32Array,
    elementBytes: number,
    private readonly describe: (page: number) => string,
  ) {
    this.checked = new Uint8Array(crcs.length);
    this.shift = Math.log2(PAGE_BYTES / elementBytes);
  }

  /** Checks the page of element `i`. */
  at(i: number): void {
    const page = i >> this.shift;
    if (!this.checked[page]) this.page(page);
  }

  /** Checks the pages of elements [from, to). */
  range(from: number, to: number): void {
    if (to <= from) return;
    const last = (to - 1) >> this.shift;
    for (let page = from >> this.shift; page <= last; page++) if (!this.checked[page]) this.page(page);
  }

  /** Checks every page (an array a query reads whole: the dense scan's vectors). */
  all(): void {
    if (this.checkedAll) return;
    for (let page = 0; page < this.checked.length; page++) if (!this.checked[page]) this.page(page);
    this.checkedAll = true;
  }

  /** Checks pages [from, to) (the indexer's rolling check). */
  pages(from: number, to: number): void {
    for (let page = Math.max(0, from); page < Math.min(to, this.checked.length); page++)
      if (!this.checked[page]) this.page(page);
  }

  private page(page: number): void {
    const from = page * PAGE_BYTES;
    if (Bun.hash.crc32(this.bytes.subarray(from, from + PAGE_BYTES)) !== this.crcs[page])
      throw new SnapshotFileError(this.describe(page));
    this.checked[page] = 1;
  }
}

/** The CRC-32 of each PAGE_BYTES page of `bytes` (the last one may be short). */
export function pageCrcs(bytes: Uint8Array): Uint32Array {
  const out = new Uint32Array(pagesOf(bytes.length));
  for (let p = 0; p < out.length; p++)
    out[p] = Bun.hash.crc32(bytes.subarray(p * PAGE_BYTES, (p + 1) * PAGE_BYTES));
  return out;
}

export const pagesOf = (byteLength: number) => Math.ceil(byteLength / PAGE_BYTES);

/**
 * Guards by array: the arrays keep their plain typed-array types (the builders, the indexer and the
 * benchmarks use them as such), and the readers that touch them sparsely look their guard up once.
 */
const guards = new WeakMap<ArrayBufferView, PageGuard>();

export function setGuard(data: ArrayBufferView, guard: PageGuard): void {
  guards.set(data, guard);
}

/** The guard of an array mapped from recall.bin; undefined for one built in memory. */
export function guardOf(data: ArrayBufferView): PageGuard | undefined {
  return guards.get(data);
}
