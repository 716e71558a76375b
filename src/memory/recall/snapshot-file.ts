/**
 * The persisted form of a local store's recall arrays (`recall.bin` beside memory.db): written by the
 * indexer after each run, memory-mapped by recall, so a fresh process answers its first query without
 * reading the whole store or tokenising every chunk. Layout: a fixed head (magic, version, header
 * length and CRC), a JSON header (counts, marks, the section table), then page-aligned typed-array
 * sections, and last the CRC-32 of every PAGE_BYTES page of every section (snapshot-pages.ts). Opening
 * checks the head, the header and that table; the pages are checked when a query first reads them
 * (a fresh query reads a few hundred pages, whatever the file's size); the indexer checks what it
 * copies and a window of the rest each run (PAGES_CHECKED_A_RUN), all of it when a reader marked the
 * file damaged. Anything that does not check out is not used: recall answers from the store, the
 * indexer rebuilds the file from nothing.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { GarbageBound } from "../../home/garbage.ts";
import { logError } from "../../home/log.ts";
import {
  snapshotAdditionsPath,
  snapshotCheckPath,
  snapshotDamagePath,
  snapshotFiles,
} from "../../home/paths.ts";
import type { SqliteMemoryStore } from "../../store/sqlite.ts";
import { EDGE_KIND, type SnapshotDelta } from "../../store/types.ts";
import { lexicalTokens } from "../tokens.ts";
import { encodedTerms, type Postings, type TermList } from "./bm25.ts";
import { type ChunkSource, MemoryIndex, type RecallChunk } from "./snapshot.ts";
import { additionsOf, fitsBase, type SnapshotAdditions } from "./snapshot-additions.ts";
import { derive, extendArrays, PostingsBuilder, positionOf, type SnapshotArrays } from "./snapshot-build.ts";
import {
  guardOf,
  PAGE_BYTES,
  PageGuard,
  pageCrcs,
  pagesOf,
  SnapshotFileError,
  setGuard,
} from "./snapshot-pages.ts";
import { countVocatives, emptyVocativeCounts, type VocativeCounts } from "./speakers.ts";

const MAGIC = "TFRECALL";
/** The additions file's: the same layout, other sections. */
const ADDITIONS_MAGIC = "TFRECADD";
/**
 * Bumped when the layout or what the arrays mean changes: an older file is rebuilt. 4: phrase nodes
 * from the passage capacity on, and the additions file beside the base.
 */
export const SNAPSHOT_FILE_VERSION = 4;
const HEAD_BYTES = 24;

type Typed = Int32Array | Uint32Array | Float32Array | Float64Array | Uint8Array;
const KINDS = { i32: Int32Array, u32: Uint32Array, f32: Float32Array, f64: Float64Array, u8: Uint8Array };
type Kind = keyof typeof KINDS;

interface SectionEntry {
  name: string;
  kind: Kind;
  /** Bytes from the data start (a multiple of PAGE_BYTES). */
  offset: number;
  length: number;
  /** Its first page's entry in the page CRC table. */
  firstPage: number;
}

/** A container's header: its own fields, the section table and the page CRC table's place. */
interface ContainerHeader {
  sections: SectionEntry[];
  /** The page CRC table: its offset from the data start, its entries and its own CRC (checked at open). */
  pageTable: { offset: number; length: number; crc: number };
}

/** What the base's header and the additions' both carry: the store state and counts they stand for. */
interface RowsHeader extends ContainerHeader {
  generation: number;
  marks: SnapshotArrays["marks"];
  llmChunks: number;
  edgeCount: number;
  chunkTotalLength: number;
  factTotalLength: number;
  vocatives: VocativeCounts;
}

interface Header extends RowsHeader {
  dim: number;
  model: string;
  passageCapacity: number;
}

interface AdditionsHeader extends RowsHeader {
  base: number;
}

/** RowsHeader's fields of a base's arrays or of its additions. */
function rowsFields(
  a: Pick<
    SnapshotArrays,
    "generation" | "marks" | "llmChunks" | "edgeCount" | "chunkPostings" | "factPostings" | "vocatives"
  >,
): Omit<RowsHeader, keyof ContainerHeader> {
  return {
    generation: a.generation,
    marks: a.marks,
    llmChunks: a.llmChunks,
    edgeCount: a.edgeCount,
    chunkTotalLength: a.chunkPostings.totalLength,
    factTotalLength: a.factPostings.totalLength,
    vocatives: a.vocatives,
  };
}

type Section = [name: string, kind: Kind, data: Typed];

function encodeTerms(terms: TermList): { bytes: Uint8Array; offsets: Uint32Array } {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  const offsets = new Uint32Array(terms.count + 1);
  let total = 0;
  for (let i = 0; i < terms.count; i++) {
    const bytes = encoder.encode(terms.at(i));
    parts.push(bytes);
    total += bytes.length;
    offsets[i + 1] = total;
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, offsets };
}

function postingSections(prefix: string, p: Postings): Section[] {
  const { bytes, offsets } = encodeTerms(p.terms);
  return [
    [`${prefix}TermBytes`, "u8", bytes],
    [`${prefix}TermOffsets`, "u32", offsets],
    [`${prefix}Start`, "u32", p.start],
    [`${prefix}Docs`, "i32", p.docs],
    [`${prefix}Tfs`, "f32", p.tfs],
    [`${prefix}DocLength`, "f32", p.docLength],
  ];
}

function sectionsOf(a: SnapshotArrays): Section[] {
  return [
    ["chunkIds", "i32", a.chunkIds],
    ["previous", "i32", a.previous],
    ["next", "i32", a.next],
    ["vectors", "f32", a.vectors],
    ...postingSections("chunk", a.chunkPostings),
    ["entityIds", "i32", a.entityIds],
    ["factIds", "i32", a.factIds],
    ["factSubjects", "i32", a.factSubjects],
    ["factObjects", "i32", a.factObjects],
    ["factVectors", "f32", a.factVectors],
    ...postingSections("fact", a.factPostings),
    ["edgeIds", "i32", a.edges.ids],
    ["edgeKind", "u8", a.edges.kind],
    ["edgeA", "i32", a.edges.a],
    ["edgeB", "i32", a.edges.b],
    ["edgeWeight", "f64", a.edges.weight],
    ["graphOffsets", "i32", a.graph.offsets],
    ["graphColumn", "i32", a.graph.column],
    ["graphWeight", "f64", a.graph.weight],
    ["graphStrength", "f64", a.graph.strength],
    ["phraseChunks", "i32", a.phraseChunks],
    ["factSubject", "i32", a.factSubject],
    ["factObject", "i32", a.factObject],
  ];
}

function additionSectionsOf(a: SnapshotAdditions): Section[] {
  return [
    ["chunkIds", "i32", a.chunkIds],
    ["vectors", "f32", a.vectors],
    ...postingSections("chunk", a.chunkPostings),
    ["previous", "i32", a.previous],
    ["next", "i32", a.next],
    ["entityIds", "i32", a.entityIds],
    ["factIds", "i32", a.factIds],
    ["factSubject", "i32", a.factSubject],
    ["factObject", "i32", a.factObject],
    ["factVectors", "f32", a.factVectors],
    ...postingSections("fact", a.factPostings),
    ["phraseChunks", "i32", a.phraseChunks],
    ["strength", "f64", a.strength],
    ["rowOffsets", "i32", a.rows.offsets],
    ["rowColumn", "i32", a.rows.column],
    ["rowWeight", "f64", a.rows.weight],
  ];
}

const alignPage = (n: number) => Math.ceil(n / PAGE_BYTES) * PAGE_BYTES;

function bytesOf(data: Typed): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Writes the arrays to `path` atomically (a temporary file renamed over it). */
export function writeSnapshotFile(path: string, arrays: SnapshotArrays, model: string): void {
  writeContainer(path, MAGIC, sectionsOf(arrays), {
    ...rowsFields(arrays),
    dim: arrays.dim,
    model,
    passageCapacity: arrays.passageCapacity,
  });
}

/** Writes a base's additions to `path` atomically. */
export function writeAdditionsFile(path: string, additions: SnapshotAdditions): void {
  writeContainer(path, ADDITIONS_MAGIC, additionSectionsOf(additions), {
    ...rowsFields(additions),
    base: additions.base,
  });
}

/**
 * The layout both files share: a fixed head (magic, version, header length and CRC), a JSON header (its
 * fields, the section table), page-aligned sections, then the CRC-32 of every page of every section;
 * written to a temporary file renamed over `path`.
 */
function writeContainer(
  path: string,
  magic: string,
  sections: Section[],
  fields: Record<string, unknown>,
): void {
  const entries: SectionEntry[] = [];
  const crcs: Uint32Array[] = [];
  let offset = 0;
  let firstPage = 0;
  for (const [name, kind, data] of sections) {
    entries.push({ name, kind, offset, length: data.length, firstPage });
    crcs.push(pageCrcs(bytesOf(data)));
    firstPage += crcs[crcs.length - 1].length;
    offset = alignPage(offset + data.byteLength);
  }
  const table = new Uint32Array(firstPage);
  for (let i = 0, at = 0; i < crcs.length; at += crcs[i++].length) table.set(crcs[i], at);
  const header: ContainerHeader = {
    ...fields,
    sections: entries,
    pageTable: { offset, length: table.length, crc: Bun.hash.crc32(bytesOf(table)) },
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const dataStart = alignPage(HEAD_BYTES + json.length);
  const head = new Uint8Array(dataStart);
  head.set(new TextEncoder().encode(magic));
  const view = new DataView(head.buffer);
  view.setUint32(8, SNAPSHOT_FILE_VERSION, true);
  view.setUint32(12, json.length, true);
  view.setUint32(16, Bun.hash.crc32(json), true);
  head.set(json, HEAD_BYTES);
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, "w");
  try {
    writeSync(fd, head);
    let written = 0;
    const padding = new Uint8Array(PAGE_BYTES);
    const parts: [at: number, data: Typed][] = [
      ...sections.map(([, , data], i): [number, Typed] => [entries[i].offset, data]),
      [offset, table],
    ];
    for (const [at, data] of parts) {
      if (at > written) writeSync(fd, padding, 0, at - written);
      writeSync(fd, bytesOf(data));
      written = at + data.byteLength;
    }
    closeSync(fd);
    renameSync(temporary, path);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(temporary, { force: true });
    throw error;
  }
}

function mapFile(path: string): Uint8Array {
  try {
    return Bun.mmap(path, { shared: false });
  } catch {
    // Where mapping is unavailable, a plain read gives the same bytes.
    try {
      return new Uint8Array(readFileSync(path));
    } catch (error) {
      throw new SnapshotFileError(`${path}: ${(error as Error).message}`);
    }
  }
}

/**
 * The head and header of a container, checked (magic, version, the header's CRC), where its data
 * starts, and the header's CRC (what names this version of the file).
 */
function readHead<H extends ContainerHeader>(
  path: string,
  file: Uint8Array,
  magic = MAGIC,
): { header: H; dataStart: number; crc: number } {
  if (file.length < HEAD_BYTES || new TextDecoder().decode(file.subarray(0, 8)) !== magic)
    throw new SnapshotFileError(`${path}: not a recall snapshot`);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const version = view.getUint32(8, true);
  if (version !== SNAPSHOT_FILE_VERSION) throw new SnapshotFileError(`${path}: version ${version}`);
  const jsonLength = view.getUint32(12, true);
  if (HEAD_BYTES + jsonLength > file.length) throw new SnapshotFileError(`${path}: truncated header`);
  const json = file.subarray(HEAD_BYTES, HEAD_BYTES + jsonLength);
  const crc = view.getUint32(16, true);
  if (Bun.hash.crc32(json) !== crc) throw new SnapshotFileError(`${path}: header damaged`);
  let header: H;
  try {
    header = JSON.parse(new TextDecoder().decode(json)) as H;
    if (!Array.isArray(header.sections) || !header.pageTable) throw new Error("no section table");
  } catch (error) {
    throw new SnapshotFileError(`${path}: header unreadable (${(error as Error).message})`);
  }
  return { header, dataStart: alignPage(HEAD_BYTES + jsonLength), crc };
}

/**
 * A container's header and sections: opening checks the head, the header and the page CRC table; each
 * section's pages are checked when first read (its PageGuard), or all of them now with `all`. Throws
 * SnapshotFileError for anything that does not check out, now or when a damaged page is read.
 */
function openContainer<H extends ContainerHeader>(
  path: string,
  magic: string,
  all: boolean,
): {
  header: H;
  crc: number;
  get: <T extends Typed>(name: string) => T;
  pages: number;
  checkPages: (from: number, to: number) => void;
} {
  const file = mapFile(path);
  const { header, dataStart, crc } = readHead<H>(path, file, magic);
  const tableStart = dataStart + header.pageTable.offset;
  if (tableStart % PAGE_BYTES !== 0 || tableStart + header.pageTable.length * 4 > file.length)
    throw new SnapshotFileError(`${path}: page table out of bounds`);
  const table = new Uint32Array(
    file.buffer as ArrayBuffer,
    file.byteOffset + tableStart,
    header.pageTable.length,
  );
  if (Bun.hash.crc32(bytesOf(table)) !== header.pageTable.crc)
    throw new SnapshotFileError(`${path}: page table damaged`);
  const sections = new Map<string, Typed>();
  const guarded: { firstPage: number; guard: PageGuard }[] = [];
  for (const s of header.sections) {
    const make = Object.hasOwn(KINDS, s.kind) ? KINDS[s.kind] : undefined;
    const start = dataStart + s.offset;
    const bytes = s.length * (make?.BYTES_PER_ELEMENT ?? 0);
    const pages = pagesOf(bytes);
    if (
      !make ||
      start % PAGE_BYTES !== 0 ||
      start + bytes > file.length ||
      s.firstPage + pages > table.length
    )
      throw new SnapshotFileError(`${path}: section ${s.name} out of bounds`);
    const data = new make(file.buffer as ArrayBuffer, file.byteOffset + start, s.length);
    const guard = new PageGuard(
      file.subarray(start, start + bytes),
      table.subarray(s.firstPage, s.firstPage + pages),
      make.BYTES_PER_ELEMENT,
      (page) => `${path}: page ${page} of section ${s.name} damaged`,
    );
    if (all) guard.all();
    else setGuard(data, guard);
    sections.set(s.name, data);
    guarded.push({ firstPage: s.firstPage, guard });
  }
  // Pages [from, to) of the page table, whichever sections hold them.
  const checkPages = (from: number, to: number) => {
    for (const { firstPage, guard } of guarded) guard.pages(from - firstPage, to - firstPage);
  };
  const get = <T extends Typed>(name: string): T => {
    const found = sections.get(name);
    if (!found) throw new SnapshotFileError(`${path}: section ${name} missing`);
    return found as T;
  };
  return { header, crc, get, pages: table.length, checkPages };
}

function postingsOf(
  get: <T extends Typed>(name: string) => T,
  prefix: string,
  totalLength: number,
): Postings {
  return {
    terms: encodedTerms(get(`${prefix}TermBytes`), get(`${prefix}TermOffsets`)),
    start: get(`${prefix}Start`),
    docs: get(`${prefix}Docs`),
    tfs: get(`${prefix}Tfs`),
    docLength: get(`${prefix}DocLength`),
    totalLength,
  };
}

/**
 * The arrays of a snapshot file, its model id and its header's CRC. Opening checks the head, the header
 * and the page CRC table; each array's pages are checked when first read (its PageGuard), all of them
 * now with `all` (tests), or pages by their place in the page table with `checkPages` (the indexer's
 * window). Throws SnapshotFileError for anything that does not check out, now or when a damaged page
 * is read.
 */
export function readSnapshotFile(
  path: string,
  options: { all?: boolean } = {},
): {
  arrays: SnapshotArrays;
  model: string;
  crc: number;
  /** The file's pages (its page table's entries), and a check of pages [from, to) of them. */
  pages: number;
  checkPages: (from: number, to: number) => void;
} {
  const { header, crc, get, pages, checkPages } = openContainer<Header>(path, MAGIC, options.all ?? false);
  const arrays: SnapshotArrays = {
    generation: header.generation,
    marks: header.marks,
    dim: header.dim,
    chunkIds: get("chunkIds"),
    llmChunks: header.llmChunks,
    previous: get("previous"),
    next: get("next"),
    vectors: get("vectors"),
    chunkPostings: postingsOf(get, "chunk", header.chunkTotalLength),
    entityIds: get("entityIds"),
    factIds: get("factIds"),
    factSubjects: get("factSubjects"),
    factObjects: get("factObjects"),
    factVectors: get("factVectors"),
    factPostings: postingsOf(get, "fact", header.factTotalLength),
    edges: {
      ids: get("edgeIds"),
      kind: get("edgeKind"),
      a: get("edgeA"),
      b: get("edgeB"),
      weight: get("edgeWeight"),
    },
    vocatives: header.vocatives,
    passageCapacity: header.passageCapacity,
    graph: {
      nodes: get<Int32Array>("graphOffsets").length - 1,
      offsets: get("graphOffsets"),
      column: get("graphColumn"),
      weight: get("graphWeight"),
      strength: get("graphStrength"),
    },
    edgeCount: header.edgeCount,
    phraseChunks: get("phraseChunks"),
    factSubject: get("factSubject"),
    factObject: get("factObject"),
  };
  return { arrays, model: header.model, crc, pages, checkPages };
}

/**
 * The additions file of the base whose header CRC is `base`, or undefined when there is none or it
 * extends another base. Throws SnapshotFileError as readSnapshotFile does.
 */
export function readAdditionsFile(path: string, base: number): SnapshotAdditions | undefined {
  if (!existsSync(path)) return undefined;
  const { header, get } = openContainer<AdditionsHeader>(path, ADDITIONS_MAGIC, false);
  if (header.base !== base) return undefined;
  return {
    base: header.base,
    generation: header.generation,
    marks: header.marks,
    llmChunks: header.llmChunks,
    vocatives: header.vocatives,
    edgeCount: header.edgeCount,
    chunkIds: get("chunkIds"),
    vectors: get("vectors"),
    chunkPostings: postingsOf(get, "chunk", header.chunkTotalLength),
    previous: get("previous"),
    next: get("next"),
    entityIds: get("entityIds"),
    factIds: get("factIds"),
    factSubject: get("factSubject"),
    factObject: get("factObject"),
    factVectors: get("factVectors"),
    factPostings: postingsOf(get, "fact", header.factTotalLength),
    phraseChunks: get("phraseChunks"),
    strength: get("strength"),
    rows: { offsets: get("rowOffsets"), column: get("rowColumn"), weight: get("rowWeight") },
  };
}

/** Removes a snapshot file and its additions (the store's recall arrays are rebuilt from it). */
export function removeSnapshotFiles(path: string): void {
  for (const file of [...snapshotFiles(path), snapshotCheckPath(path), snapshotDamagePath(path)])
    rmSync(file, { force: true, recursive: true });
}

/**
 * Where each section of a snapshot file lies (byte offset and length in the file, its first page's
 * place in the page table): tests damage one.
 */
export function snapshotSections(
  path: string,
): Map<string, { start: number; bytes: number; firstPage: number }> {
  const file = mapFile(path);
  const magic = new TextDecoder().decode(file.subarray(0, 8)) === ADDITIONS_MAGIC ? ADDITIONS_MAGIC : MAGIC;
  const { header, dataStart } = readHead(path, file, magic);
  return new Map(
    header.sections.map((s) => [
      s.name,
      {
        start: dataStart + s.offset,
        bytes: s.length * KINDS[s.kind].BYTES_PER_ELEMENT,
        firstPage: s.firstPage,
      },
    ]),
  );
}

/**
 * Additions are kept beside a base of at least this many facts; a smaller one is extended whole each
 * run, as a rebuild would write it: at 16× LoCoMo (33,767 facts) a whole run with that costs 0.5 s.
 * Above it, rewriting the base is what a run costs: 1.17 GB at 100,000 synthetic records, 3–4 s of
 * writing alone on the dev box (docs/memory.md, "One new session").
 */
export const ADDITIONS_FROM_FACTS = 50_000;

/**
 * Additions are folded into a new base once they hold more than this share of its facts or passages:
 * a run then writes the additions (up to this share of the base, recomputed from the base and the
 * store each time) instead of the base, and one run in many rewrites the base.
 */
export const ADDITIONS_SHARE = 1 / 16;

/** Passages a base leaves room for (graph nodes before its phrases): the additions' share and more. */
export function passageCapacityFor(passages: number): number {
  return passages + Math.ceil(passages * ADDITIONS_SHARE) + 1024;
}

/** Whether `delta` is kept as additions beside `base` rather than folded into a new base. */
function keptAsAdditions(
  base: SnapshotArrays,
  delta: SnapshotDelta,
  { additionsFrom = ADDITIONS_FROM_FACTS, additionsShare = ADDITIONS_SHARE }: AdditionsOptions,
): boolean {
  const facts = base.factIds.length;
  const chunks = base.chunkIds.length;
  return (
    facts >= additionsFrom &&
    fitsBase(base, delta) &&
    delta.facts.length <= facts * additionsShare &&
    delta.chunks.length <= chunks * additionsShare
  );
}

/**
 * Pages of recall.bin (PAGE_BYTES each, 128 MiB) the indexer checks in a run besides those it copies:
 * a window that moves on from run to run and goes round the file, all of it while the file is no
 * larger. Checking every page every run cost the 1.17 GB file of the 100,000-record store ~0.2 s a
 * run and grew with the store; this way a run's check is bounded (~20 ms), a damaged page no query
 * reads is found within ten runs there, and one a query reads is found by that query, whose process
 * marks the file (markSnapshotDamaged) so the next run checks it whole and rebuilds it.
 */
export const PAGES_CHECKED_A_RUN = 32_768;

/** When additions are kept, and how much is checked (tests lower them to reach them on a small store). */
export interface AdditionsOptions {
  /** The base's facts from which additions are kept (ADDITIONS_FROM_FACTS). */
  additionsFrom?: number;
  /** The share of the base's facts and passages past which they are folded in (ADDITIONS_SHARE). */
  additionsShare?: number;
  /** Pages of the base checked a run besides those it copies (PAGES_CHECKED_A_RUN). */
  pagesChecked?: number;
}

/**
 * Brings the store's snapshot file up to date after a write. When rows were only added since the base
 * (recall.bin) was written: writes them as its additions (recall.add.bin, cost: the rows added since
 * the base) while they stay a small share of a large base, else extends the base by them (cost: the
 * base). Rebuilds the base from nothing when rows were deleted since, the file is missing or damaged,
 * or it was built for another model. Removes the files when the store holds vectors of another model
 * than `model` (recall then re-embeds from the store, as for any backend).
 */
export async function refreshSnapshotFile(
  path: string,
  store: SqliteMemoryStore,
  currentModel: () => Promise<string>,
  options: AdditionsOptions = {},
): Promise<"current" | "added" | "extended" | "rebuilt" | "removed"> {
  const addPath = snapshotAdditionsPath(path);
  let file: ReturnType<typeof readSnapshotFile> | undefined;
  let additions: SnapshotAdditions | undefined;
  try {
    const opened = readSnapshotFile(path);
    checkSnapshotPages(path, opened, options.pagesChecked ?? PAGES_CHECKED_A_RUN);
    file = opened;
  } catch (error) {
    if (!(error instanceof SnapshotFileError)) throw error;
    // Missing or unusable: rebuilt below. Something else in its place (a directory) is ours to clear.
    removeSnapshotFiles(path);
  }
  if (file)
    try {
      additions = readAdditionsFile(addPath, file.crc);
    } catch (error) {
      if (!(error instanceof SnapshotFileError)) throw error;
      rmSync(addPath, { force: true, recursive: true });
    }
  const marks = file?.arrays.marks;
  if (
    file &&
    marks?.store === store.storeId() &&
    marks.deletions === store.deletions() &&
    (additions?.generation ?? file.arrays.generation) === store.generation()
  )
    return "current";
  // Only now the model: a run with nothing new must stay cheap.
  const model = await currentModel();
  const previous = file?.model === model ? file.arrays : undefined;
  const delta = previous ? store.snapshotDelta(previous.marks, model) : undefined;
  if (file && previous && delta)
    try {
      if (keptAsAdditions(previous, delta, options)) {
        // additionsOf checks the pages it reads of the base.
        writeAdditionsFile(addPath, additionsOf(previous, file.crc, delta));
        return "added";
      }
      // A new base is the old one's arrays and more: every page of them is checked first.
      file.checkPages(0, file.pages);
      const passages = previous.chunkIds.length + delta.chunks.length;
      writeSnapshotFile(path, extendArrays(previous, delta, passageCapacityFor(passages)), model);
      rmSync(addPath, { force: true });
      return "extended";
    } catch (error) {
      if (!(error instanceof SnapshotFileError)) throw error;
      // A damaged page it would have copied: the base is rebuilt from the store below.
    }
  if (file) file = undefined; // its mapping is not needed while the store is read whole
  const whole = arraysOfStore(store, model);
  if (!whole) {
    removeSnapshotFiles(path);
    return "removed";
  }
  writeSnapshotFile(path, whole, model);
  rmSync(addPath, { force: true });
  return "rebuilt";
}

/**
 * The run's check of a base (refreshSnapshotFile): every page when the file is no larger than
 * `budget` pages or a reader marked it damaged, else `budget` pages from where the last run's check
 * ended (recall.check, kept per base), round to the start past the end. Throws SnapshotFileError on
 * a damaged page.
 */
function checkSnapshotPages(path: string, file: ReturnType<typeof readSnapshotFile>, budget: number): void {
  const marker = snapshotDamagePath(path);
  const marked = existsSync(marker);
  if (marked || file.pages <= budget) {
    file.checkPages(0, file.pages);
    // Checked whole and sound (a marker from a base since replaced, or a reader's error that was not
    // this file's pages): the mark has done its work.
    if (marked) rmSync(marker, { force: true, recursive: true });
    return;
  }
  const cursorPath = snapshotCheckPath(path);
  let from = 0;
  try {
    const cursor = readFileSync(cursorPath);
    // Another base's place (or a torn write) starts from the beginning.
    if (cursor.length === 8 && cursor.readUInt32LE(0) === file.crc)
      from = cursor.readUInt32LE(4) % file.pages;
  } catch {}
  const to = from + budget;
  file.checkPages(from, Math.min(to, file.pages));
  if (to > file.pages) file.checkPages(0, to - file.pages);
  const cursor = Buffer.alloc(8);
  cursor.writeUInt32LE(file.crc, 0);
  cursor.writeUInt32LE(to % file.pages, 4);
  try {
    writeFileSync(cursorPath, cursor);
  } catch {
    // A read-only or full disk: the next run checks from the start again.
  }
}

/**
 * Marks the recall snapshot at `path` damaged (a reader found a page that does not check out), so
 * that the next index run checks every page of it, finds the damage and rebuilds the file. Never
 * throws: the reader answers from the store whatever happens here.
 */
export function markSnapshotDamaged(path: string): void {
  try {
    writeFileSync(snapshotDamagePath(path), "");
  } catch {}
}

/**
 * The arrays of the whole store (the same as extending nothing by a delta of every row), read slice by
 * slice: rows go into typed arrays as they come, so the build's memory is the arrays themselves plus a
 * slice of rows, the vocabulary and the graph's edge lists while it is derived — not every row as an
 * object (with its text and its tokens) at once. Undefined when a vector is not of `model`.
 */
export function arraysOfStore(
  store: SqliteMemoryStore,
  model: string,
  slice?: number,
): SnapshotArrays | undefined {
  let chunkIds = new Int32Array(0);
  let previous = new Int32Array(0);
  let next = new Int32Array(0);
  let vectors: Float32Array = new Float32Array(0);
  let chunkPostings = new PostingsBuilder(0);
  let factIds = new Int32Array(0);
  let factSubjects = new Int32Array(0);
  let factObjects = new Int32Array(0);
  let factVectors: Float32Array = new Float32Array(0);
  let factPostings = new PostingsBuilder(0);
  let entityIds: Int32Array = new Int32Array(0);
  let edges: SnapshotDelta["edges"] | undefined;
  let counts = { chunks: 0, facts: 0 };
  let dim = 0;
  let llmChunks = 0;
  let chunksRead = 0;
  let factsRead = 0;
  const lastOfSession = new Map<string, number>();
  const vocatives = emptyVocativeCounts();
  const room = (have: Float32Array, rows: number, width: number) =>
    have.length || !width ? have : new Float32Array(rows * width);
  // Each slice's rows, tokens and counts are garbage once in the arrays: collected as the build goes.
  const garbage = new GarbageBound();
  const read = store.snapshotRows(
    model,
    {
      counts(n) {
        counts = n;
        chunkIds = new Int32Array(n.chunks);
        previous = new Int32Array(n.chunks).fill(-1);
        next = new Int32Array(n.chunks).fill(-1);
        chunkPostings = new PostingsBuilder(n.chunks);
        factIds = new Int32Array(n.facts);
        factSubjects = new Int32Array(n.facts);
        factObjects = new Int32Array(n.facts);
        factPostings = new PostingsBuilder(n.facts);
      },
      chunks(rows, slice, width) {
        garbage.step();
        dim ||= width;
        vectors = room(vectors, counts.chunks, width);
        vectors.set(slice, chunksRead * width);
        for (const c of rows) {
          const at = chunksRead++;
          chunkIds[at] = c.id;
          if (c.graphSource === "llm") llmChunks++;
          const before = lastOfSession.get(c.sessionId);
          lastOfSession.set(c.sessionId, at);
          if (before !== undefined) {
            previous[at] = before;
            next[before] = at;
          }
          chunkPostings.add(at, lexicalTokens(c.text));
        }
        countVocatives(
          vocatives,
          rows.flatMap((c) => c.turns.map((t) => ({ role: t.role, text: c.text.slice(t.start, t.end) }))),
        );
      },
      entities(ids) {
        entityIds = ids;
      },
      facts(rows, slice, width) {
        garbage.step();
        factVectors = room(factVectors, counts.facts, width);
        factVectors.set(slice, factsRead * width);
        for (const f of rows) {
          const at = factsRead++;
          factIds[at] = f.id;
          factSubjects[at] = positionOf(entityIds, f.subject);
          factObjects[at] = positionOf(entityIds, f.object);
          factPostings.add(at, lexicalTokens(f.text));
        }
      },
      edges(all) {
        // Row ids to positions in place: a passage index for a context edge's `a`, else phrase positions.
        for (let e = 0; e < all.ids.length; e++) {
          all.a[e] = positionOf(all.kind[e] === EDGE_KIND.context ? chunkIds : entityIds, all.a[e]);
          all.b[e] = positionOf(entityIds, all.b[e]);
        }
        edges = all;
      },
    },
    slice,
  );
  if (!read || !edges) return undefined;
  const stored = {
    generation: read.generation,
    marks: read.marks,
    dim: dim || (factsRead ? factVectors.length / factsRead : 0),
    chunkIds,
    llmChunks,
    previous,
    next,
    vectors,
    chunkPostings: chunkPostings.finish(),
    entityIds,
    factIds,
    factSubjects,
    factObjects,
    factVectors,
    factPostings: factPostings.finish(),
    edges,
    vocatives,
  };
  return { ...stored, ...derive(stored, passageCapacityFor(chunksRead)) };
}

/** Chunks read from the store by row id when a query needs them, kept for later queries (bounded). */
const CACHED_CHUNKS = 4096;

/**
 * The index of a store's snapshot file, or undefined when there is none usable for this store: built
 * for another model, older than a deletion, or older than the store's last write while no indexer is
 * running to refresh it. A file damaged where opening checks it (head, header, page table, the row
 * ids) is logged and not used; a damaged page is found when a query first reads it (SnapshotFileError, which recall
 * answers from the store). Either way the file is marked (markSnapshotDamaged): the next index run
 * checks every page and rebuilds it.
 */
export function persistedIndex(
  path: string,
  store: SqliteMemoryStore,
  model: string,
  indexing: boolean,
  projectRoot: string,
): MemoryIndex | undefined {
  if (!existsSync(path)) return undefined;
  let file: ReturnType<typeof readSnapshotFile>;
  let additions: SnapshotAdditions | undefined;
  try {
    file = readSnapshotFile(path);
    additions = readAdditionsFile(snapshotAdditionsPath(path), file.crc);
    // The row ids, 4 bytes a passage, checked now: each hit's text is read through them, unguarded
    // (index.chunks reads them all), so a damaged page of them is found here, where recall can still
    // read the store.
    guardOf(file.arrays.chunkIds)?.all();
    if (additions) guardOf(additions.chunkIds)?.all();
  } catch (error) {
    if (!(error instanceof SnapshotFileError)) throw error;
    logError("recall: snapshot file unusable, reading the store instead", error, projectRoot);
    markSnapshotDamaged(path);
    return undefined;
  }
  const { arrays } = file;
  const { marks } = arrays;
  if (file.model !== model || marks.store !== store.storeId() || marks.deletions !== store.deletions())
    return undefined;
  if ((additions?.generation ?? arrays.generation) !== store.generation() && !indexing) return undefined;
  const baseChunks = arrays.chunkIds.length;
  const idOf = (index: number) =>
    index < baseChunks
      ? arrays.chunkIds[index]
      : (additions as SnapshotAdditions).chunkIds[index - baseChunks];
  const cache = new Map<number, RecallChunk>();
  const source: ChunkSource = {
    chunk(index) {
      let found = cache.get(index);
      if (!found) {
        if (cache.size >= CACHED_CHUNKS) cache.clear();
        [found] = store.chunksById([idOf(index)]);
        cache.set(index, found);
      }
      return found;
    },
    all: () => store.chunksById([...arrays.chunkIds, ...(additions?.chunkIds ?? [])]),
  };
  return new MemoryIndex(arrays, source, additions);
}
