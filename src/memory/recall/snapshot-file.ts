/**
 * The persisted form of a local store's recall arrays (`recall.bin` beside memory.db): written by the
 * indexer after each run, memory-mapped by recall, so a fresh process answers its first query without
 * reading the whole store or tokenising every chunk. Layout: a fixed head (magic, version, header
 * length and CRC), a JSON header (counts, marks, the section table), then page-aligned typed-array
 * sections, and last the CRC-32 of every PAGE_BYTES page of every section (snapshot-pages.ts). Opening
 * checks the head, the header and that table; the pages are checked when a query first reads them
 * (a fresh query reads a few hundred pages, whatever the file's size), all of them by the indexer,
 * which extends the arrays. Anything that does not check out is not used: recall answers from the
 * store, the indexer rebuilds the file from nothing.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { GarbageBound } from "../../home/garbage.ts";
import { logError } from "../../home/log.ts";
import type { SqliteMemoryStore } from "../../store/sqlite.ts";
import { EDGE_KIND, type SnapshotDelta } from "../../store/types.ts";
import { lexicalTokens } from "../tokens.ts";
import { arrayTerms, encodedTerms, type Postings, type TermList } from "./bm25.ts";
import { type ChunkSource, MemoryIndex, type RecallChunk } from "./snapshot.ts";
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
/** Bumped when the layout or what the arrays mean changes: an older file is rebuilt. */
export const SNAPSHOT_FILE_VERSION = 3;
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

interface Header {
  generation: number;
  marks: SnapshotArrays["marks"];
  dim: number;
  model: string;
  llmChunks: number;
  edgeCount: number;
  chunkTotalLength: number;
  factTotalLength: number;
  vocatives: VocativeCounts;
  sections: SectionEntry[];
  /** The page CRC table: its offset from the data start, its entries and its own CRC (checked at open). */
  pageTable: { offset: number; length: number; crc: number };
}

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

function sectionsOf(a: SnapshotArrays): [name: string, kind: Kind, data: Typed][] {
  const postings = (prefix: string, p: Postings): [string, Kind, Typed][] => {
    const { bytes, offsets } = encodeTerms(p.terms);
    return [
      [`${prefix}TermBytes`, "u8", bytes],
      [`${prefix}TermOffsets`, "u32", offsets],
      [`${prefix}Start`, "u32", p.start],
      [`${prefix}Docs`, "i32", p.docs],
      [`${prefix}Tfs`, "f32", p.tfs],
      [`${prefix}DocLength`, "f32", p.docLength],
    ];
  };
  return [
    ["chunkIds", "i32", a.chunkIds],
    ["previous", "i32", a.previous],
    ["next", "i32", a.next],
    ["vectors", "f32", a.vectors],
    ...postings("chunk", a.chunkPostings),
    ["entityIds", "i32", a.entityIds],
    ["factIds", "i32", a.factIds],
    ["factSubjects", "i32", a.factSubjects],
    ["factObjects", "i32", a.factObjects],
    ["factVectors", "f32", a.factVectors],
    ...postings("fact", a.factPostings),
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

const alignPage = (n: number) => Math.ceil(n / PAGE_BYTES) * PAGE_BYTES;

function bytesOf(data: Typed): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Writes the arrays to `path` atomically (a temporary file renamed over it). */
export function writeSnapshotFile(path: string, arrays: SnapshotArrays, model: string): void {
  const sections = sectionsOf(arrays);
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
  const header: Header = {
    generation: arrays.generation,
    marks: arrays.marks,
    dim: arrays.dim,
    model,
    llmChunks: arrays.llmChunks,
    edgeCount: arrays.edgeCount,
    chunkTotalLength: arrays.chunkPostings.totalLength,
    factTotalLength: arrays.factPostings.totalLength,
    vocatives: arrays.vocatives,
    sections: entries,
    pageTable: { offset, length: table.length, crc: Bun.hash.crc32(bytesOf(table)) },
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const dataStart = alignPage(HEAD_BYTES + json.length);
  const head = new Uint8Array(dataStart);
  head.set(new TextEncoder().encode(MAGIC));
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

/** The head and header of a snapshot file, checked (magic, version, the header's CRC), and where its data starts. */
function readHead(path: string, file: Uint8Array): { header: Header; dataStart: number } {
  if (file.length < HEAD_BYTES || new TextDecoder().decode(file.subarray(0, 8)) !== MAGIC)
    throw new SnapshotFileError(`${path}: not a recall snapshot`);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const version = view.getUint32(8, true);
  if (version !== SNAPSHOT_FILE_VERSION) throw new SnapshotFileError(`${path}: version ${version}`);
  const jsonLength = view.getUint32(12, true);
  if (HEAD_BYTES + jsonLength > file.length) throw new SnapshotFileError(`${path}: truncated header`);
  const json = file.subarray(HEAD_BYTES, HEAD_BYTES + jsonLength);
  if (Bun.hash.crc32(json) !== view.getUint32(16, true))
    throw new SnapshotFileError(`${path}: header damaged`);
  let header: Header;
  try {
    header = JSON.parse(new TextDecoder().decode(json)) as Header;
    if (!Array.isArray(header.sections) || !header.pageTable) throw new Error("no section table");
  } catch (error) {
    throw new SnapshotFileError(`${path}: header unreadable (${(error as Error).message})`);
  }
  return { header, dataStart: alignPage(HEAD_BYTES + jsonLength) };
}

/**
 * The arrays of a snapshot file and its model id. Opening checks the head, the header and the page CRC
 * table; each array's pages are checked when first read (its PageGuard), or all of them now with `all`
 * (the indexer, which extends every array). Throws SnapshotFileError for anything that does not check
 * out, now or when a damaged page is read.
 */
export function readSnapshotFile(
  path: string,
  options: { all?: boolean } = {},
): { arrays: SnapshotArrays; model: string } {
  const file = mapFile(path);
  const { header, dataStart } = readHead(path, file);
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
    if (options.all) guard.all();
    else setGuard(data, guard);
    sections.set(s.name, data);
  }
  const get = <T extends Typed>(name: string): T => {
    const found = sections.get(name);
    if (!found) throw new SnapshotFileError(`${path}: section ${name} missing`);
    return found as T;
  };
  const postings = (prefix: string, totalLength: number): Postings => ({
    terms: options.all
      ? decodeAll(get(`${prefix}TermBytes`), get(`${prefix}TermOffsets`))
      : encodedTerms(get(`${prefix}TermBytes`), get(`${prefix}TermOffsets`)),
    start: get(`${prefix}Start`),
    docs: get(`${prefix}Docs`),
    tfs: get(`${prefix}Tfs`),
    docLength: get(`${prefix}DocLength`),
    totalLength,
  });
  const arrays: SnapshotArrays = {
    generation: header.generation,
    marks: header.marks,
    dim: header.dim,
    chunkIds: get("chunkIds"),
    llmChunks: header.llmChunks,
    previous: get("previous"),
    next: get("next"),
    vectors: get("vectors"),
    chunkPostings: postings("chunk", header.chunkTotalLength),
    entityIds: get("entityIds"),
    factIds: get("factIds"),
    factSubjects: get("factSubjects"),
    factObjects: get("factObjects"),
    factVectors: get("factVectors"),
    factPostings: postings("fact", header.factTotalLength),
    edges: {
      ids: get("edgeIds"),
      kind: get("edgeKind"),
      a: get("edgeA"),
      b: get("edgeB"),
      weight: get("edgeWeight"),
    },
    vocatives: header.vocatives,
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
  return { arrays, model: header.model };
}

/** Where each section of a snapshot file lies (byte offset and length in the file): tests damage one. */
export function snapshotSections(path: string): Map<string, { start: number; bytes: number }> {
  const { header, dataStart } = readHead(path, mapFile(path));
  return new Map(
    header.sections.map((s) => [
      s.name,
      { start: dataStart + s.offset, bytes: s.length * KINDS[s.kind].BYTES_PER_ELEMENT },
    ]),
  );
}

/** Terms decoded once into strings: extending the arrays walks them all. */
function decodeAll(bytes: Uint8Array, offsets: Uint32Array): TermList {
  const encoded = encodedTerms(bytes, offsets);
  return arrayTerms(Array.from({ length: encoded.count }, (_, i) => encoded.at(i)));
}

/**
 * Brings the store's snapshot file up to date after a write: extends the arrays it holds by the rows
 * added since (cost: the new rows), or rebuilds them from nothing when rows were deleted since, the
 * file is missing or damaged, or it was built for another model. Removes the file when the store holds
 * vectors of another model than `model` (recall then re-embeds from the store, as for any backend).
 */
export async function refreshSnapshotFile(
  path: string,
  store: SqliteMemoryStore,
  currentModel: () => Promise<string>,
): Promise<"current" | "extended" | "rebuilt" | "removed"> {
  let file: ReturnType<typeof readSnapshotFile> | undefined;
  try {
    file = readSnapshotFile(path, { all: true });
  } catch (error) {
    if (!(error instanceof SnapshotFileError)) throw error;
    // Missing or unusable: rebuilt below. Something else in its place (a directory) is ours to clear.
    rmSync(path, { force: true, recursive: true });
  }
  const marks = file?.arrays.marks;
  if (
    file &&
    marks?.store === store.storeId() &&
    marks.deletions === store.deletions() &&
    file.arrays.generation === store.generation()
  )
    return "current";
  // Only now the model: a run with nothing new must stay cheap.
  const model = await currentModel();
  const previous = file?.model === model ? file.arrays : undefined;
  const delta = previous ? store.snapshotDelta(previous.marks, model) : undefined;
  if (previous && delta) {
    writeSnapshotFile(path, extendArrays(previous, delta), model);
    return "extended";
  }
  if (file) file = undefined; // its mapping is not needed while the store is read whole
  const whole = arraysOfStore(store, model);
  if (!whole) {
    rmSync(path, { force: true });
    return "removed";
  }
  writeSnapshotFile(path, whole, model);
  return "rebuilt";
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
  return { ...stored, ...derive(stored) };
}

/** Chunks read from the store by row id when a query needs them, kept for later queries (bounded). */
const CACHED_CHUNKS = 4096;

/**
 * The index of a store's snapshot file, or undefined when there is none usable for this store: built
 * for another model, older than a deletion, or older than the store's last write while no indexer is
 * running to refresh it. A file damaged where opening checks it (head, header, page table, the row
 * ids) is logged and not used; a damaged page is found when a query first reads it (SnapshotFileError, which recall
 * answers from the store). The next index run checks every page and rebuilds a damaged file.
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
  try {
    file = readSnapshotFile(path);
    // The row ids, 4 bytes a passage, checked now: browsing reads them all (index.chunks) outside
    // any query, so a damaged page of them is found here, where recall can still read the store.
    guardOf(file.arrays.chunkIds)?.all();
  } catch (error) {
    if (!(error instanceof SnapshotFileError)) throw error;
    logError("recall: snapshot file unusable, reading the store instead", error, projectRoot);
    return undefined;
  }
  const { arrays } = file;
  const { marks } = arrays;
  if (file.model !== model || marks.store !== store.storeId() || marks.deletions !== store.deletions())
    return undefined;
  if (arrays.generation !== store.generation() && !indexing) return undefined;
  const cache = new Map<number, RecallChunk>();
  const source: ChunkSource = {
    chunk(index) {
      let found = cache.get(index);
      if (!found) {
        if (cache.size >= CACHED_CHUNKS) cache.clear();
        [found] = store.chunksById([arrays.chunkIds[index]]);
        cache.set(index, found);
      }
      return found;
    },
    all: () => store.chunksById(Array.from(arrays.chunkIds)),
  };
  return new MemoryIndex(arrays, source);
}
