/**
 * The on-disk code index: one file per repository, `dataDir()/code/<projectKey>/index.bin`, written
 * whole to a temporary name and renamed, so a reader sees the old index or the new one, never half.
 * Layout: magic, the header's length and CRC-32, a JSON header (files, vocabulary, report, a CRC-32
 * of every section), then 4-byte-aligned typed-array sections that load as views without parsing.
 * Every byte that is read is checked: a damaged file is rebuilt, never served.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { dataDir, projectKey } from "../home/paths.ts";
import { logError } from "../home/log.ts";
import { findProjectRoot } from "../project/config.ts";
import { averageOf, type Bm25Index, termIdsOf } from "./bm25.ts";
import type { ContentKind } from "./languages.ts";
import type { CapName } from "./limits.ts";
import type { SkipCounts } from "./walk.ts";

/**
 * Bumped whenever chunking, tokens or layout change, so an old index is rebuilt, not misread.
 * 3: chunk texts are redacted; an index of format 2 may hold secrets verbatim, so it must not survive.
 * 4: checksums over the header and every section (the magic changed with the prefix).
 * 5: a chunk's vector also embeds the names it defines (chunk-encoder.ts): format-4 vectors lack them.
 */
export const INDEX_FORMAT = 5;
const MAGIC = "TFCODE02";
/** The magic of formats 1–3, whose files are rebuilt without a word: they are old, not damaged. */
const OLD_MAGIC = "TFCODE01";
/** Magic, header length, header CRC-32. */
const PREFIX_BYTES = 16;

export interface FileEntry {
  path: string;
  /** xxHash64 of the bytes, hex. */
  hash: string;
  size: number;
  mtimeMs: number;
  language: string;
  kind: ContentKind;
  firstChunk: number;
  chunkCount: number;
}

/** What the last indexing pass did and left out. */
export interface IndexReport {
  files: number;
  chunks: number;
  /** Files re-read, re-chunked and re-embedded by the last pass (all of them on a first index). */
  changed: number;
  removed: number;
  /** Files of the last pass whose syntax was parsed by a worker thread (chunk-pool.ts). */
  parsedInWorkers: number;
  /** Files of the last pass chunked by indentation because the syntax budget was spent (indexer.ts). */
  overSyntaxBudget?: number;
  skipped: SkipCounts & { binary: number };
  /** Files that were not valid UTF-8: indexed with replacement characters. */
  invalidUtf8: number;
  /** Files of the last pass in which secrets were found and replaced by `[REDACTED:<kind>]`. */
  redactedFiles: number;
  /** Files of the last pass redacted by the worker that runs ahead of the main thread (redact-ahead.ts). */
  redactedInWorker: number;
  /** The cap the last pass stopped at (limits.ts), when one did: the index lacks files past it. */
  capped?: { name: CapName; limit: number };
  indexedAt: string;
  durationMs: number;
}

export interface CodeIndex {
  /** Real absolute path of the repository. */
  root: string;
  modelId: string;
  dim: number;
  files: FileEntry[];
  chunkFile: Int32Array;
  /** 1-based inclusive line range of each chunk. */
  chunkStart: Int32Array;
  chunkEnd: Int32Array;
  texts: string[];
  /** Row-major chunks × dim, L2-normalised. */
  vectors: Float32Array;
  bm25: Bm25Index;
  /** Fingerprint of the project's own redaction rules the texts were redacted with (indexer.ts). */
  redactionRules: string;
  report: IndexReport;
}

export function indexDir(root: string): string {
  return join(dataDir(), "code", projectKey(root));
}

export function indexFile(root: string): string {
  return join(indexDir(root), "index.bin");
}

interface Header {
  format: number;
  root: string;
  modelId: string;
  dim: number;
  files: FileEntry[];
  terms: string[];
  redactionRules: string;
  report: IndexReport;
  chunkCount: number;
  postingCount: number;
  textBytes: number;
  /** CRC-32 of each section, in SECTIONS order. */
  checksums: number[];
}

/** The typed-array sections after the header, in file order. */
const SECTIONS = [
  "chunk files",
  "chunk starts",
  "chunk ends",
  "text offsets",
  "BM25 lengths",
  "vectors",
  "BM25 offsets",
  "BM25 postings",
  "BM25 frequencies",
  "texts",
] as const;

const align4 = (n: number) => (n + 3) & ~3;

/**
 * Chunk texts encoded per batch while saving, instead of one string of all of them and its UTF-8
 * copy: on the 100,000-file tree those two were the last step up of the peak (about 180 MB).
 */
const TEXT_BATCH = 4096;

/** The chunk texts as UTF-8, a batch of texts at a time (each text stays whole, so a batch is valid UTF-8). */
function* textBatches(texts: string[]): Generator<Uint8Array> {
  const encoder = new TextEncoder();
  for (let i = 0; i < texts.length; i += TEXT_BATCH)
    yield encoder.encode(texts.slice(i, i + TEXT_BATCH).join(""));
}

const bytesOf = (view: ArrayBufferView) => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

export function saveIndex(index: CodeIndex): void {
  const n = index.texts.length;
  const textOffsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) textOffsets[i + 1] = textOffsets[i] + index.texts[i].length;
  // The texts' length and checksum go in the header, before them: one encoding pass to measure,
  // another to write.
  let textBytes = 0;
  let textChecksum = 0;
  for (const batch of textBatches(index.texts)) {
    textBytes += batch.length;
    textChecksum = Bun.hash.crc32(batch, textChecksum);
  }
  const header: Header = {
    format: INDEX_FORMAT,
    root: index.root,
    modelId: index.modelId,
    dim: index.dim,
    files: index.files,
    terms: index.bm25.terms,
    redactionRules: index.redactionRules,
    report: index.report,
    chunkCount: n,
    postingCount: index.bm25.docs.length,
    textBytes,
    checksums: [],
  };
  // In SECTIONS order; the texts, the last section, are written after them.
  const arrays: ArrayBufferView[] = [
    index.chunkFile,
    index.chunkStart,
    index.chunkEnd,
    textOffsets,
    index.bm25.lengths,
    index.vectors,
    index.bm25.offsets,
    index.bm25.docs,
    index.bm25.freqs,
  ];
  header.checksums = [...arrays.map((array) => Bun.hash.crc32(bytesOf(array))), textChecksum];
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const prefix = new Uint8Array(PREFIX_BYTES);
  prefix.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(prefix.buffer).setUint32(8, headerBytes.length, true);
  new DataView(prefix.buffer).setUint32(12, Bun.hash.crc32(headerBytes), true);
  const dir = indexDir(index.root);
  mkdirSync(dir, { recursive: true });
  const file = indexFile(index.root);
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  // Each part is written from where it lies, with zeros up to the next 4-byte boundary: no copy of
  // the whole index (hundreds of MB on a large repository) is assembled first.
  const fd = openSync(temporary, "w");
  try {
    let at = 0;
    const zeros = new Uint8Array(3);
    const write = (bytes: Uint8Array) => {
      for (let written = 0; written < bytes.length; )
        written += writeSync(fd, bytes, written, bytes.length - written);
      at += bytes.length;
    };
    const pad = () => {
      const padding = align4(at) - at;
      if (padding) writeSync(fd, zeros, 0, padding);
      at += padding;
    };
    for (const part of [prefix, headerBytes, ...arrays]) {
      write(bytesOf(part));
      pad();
    }
    for (const batch of textBatches(index.texts)) write(batch);
    pad();
  } catch (error) {
    // A full disk: a partial index of hundreds of MB must not stay behind on it at every retry.
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, file);
}

/** Why a saved index cannot be read: it was damaged after it was written. */
class DamagedIndex extends Error {}

/** Where each section of an index file lies (byte offsets into `bytes`), with its header. */
export function indexLayout(bytes: Uint8Array): {
  header: Header;
  /** Where the JSON header's bytes lie (its CRC-32 is in the prefix). */
  headerBytes: { start: number; end: number };
  sections: { name: (typeof SECTIONS)[number]; start: number; end: number }[];
} {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < PREFIX_BYTES) throw new DamagedIndex("shorter than its prefix");
  const headerLength = view.getUint32(8, true);
  const headerBytes = bytes.subarray(PREFIX_BYTES, PREFIX_BYTES + headerLength);
  if (headerBytes.length !== headerLength || Bun.hash.crc32(headerBytes) !== view.getUint32(12, true))
    throw new DamagedIndex("header checksum mismatch");
  const header = JSON.parse(new TextDecoder().decode(headerBytes)) as Header;
  const widths = [4, 4, 4, 4, 4, 4, 4, 4, 2, 1];
  const n = header.chunkCount;
  const p = header.postingCount;
  const counts = [n, n, n, n + 1, n, n * header.dim, header.terms.length + 1, p, p, header.textBytes];
  let at = align4(PREFIX_BYTES + headerLength);
  const sections = SECTIONS.map((name, i) => {
    const start = at;
    at = align4(start + counts[i] * widths[i]);
    return { name, start, end: start + counts[i] * widths[i] };
  });
  if (sections[sections.length - 1].end > bytes.length) throw new DamagedIndex("truncated");
  return { header, headerBytes: { start: PREFIX_BYTES, end: PREFIX_BYTES + headerLength }, sections };
}

/**
 * The saved index of `root`, or undefined when there is none, it was built by another format or
 * model, or it is damaged: a checksum that does not match, a truncated file. The caller rebuilds; a
 * damaged file is removed, with one line in errors.log (the project's when it is active).
 */
export function loadIndex(root: string, modelId: string): CodeIndex | undefined {
  const file = indexFile(root);
  if (!existsSync(file)) return undefined;
  try {
    const raw = readFileSync(file);
    // Typed-array views need 4-byte alignment of the underlying buffer.
    const bytes = raw.byteOffset % 4 === 0 ? raw : new Uint8Array(raw);
    const magic = new TextDecoder().decode(bytes.subarray(0, 8));
    if (magic === OLD_MAGIC) return undefined;
    if (magic !== MAGIC) throw new DamagedIndex("bad magic");
    const { header, sections } = indexLayout(bytes);
    if (header.format !== INDEX_FORMAT || header.modelId !== modelId || header.root !== root)
      return undefined;
    for (const [i, { name, start, end }] of sections.entries())
      if (Bun.hash.crc32(bytes.subarray(start, end)) !== header.checksums[i])
        throw new DamagedIndex(`${name} checksum mismatch`);
    const n = header.chunkCount;
    const base = bytes.byteOffset;
    const section = <T>(
      i: number,
      make: { new (buffer: ArrayBuffer, offset: number, length: number): T; BYTES_PER_ELEMENT: number },
    ): T =>
      new make(
        bytes.buffer as ArrayBuffer,
        base + sections[i].start,
        (sections[i].end - sections[i].start) / make.BYTES_PER_ELEMENT,
      );
    const chunkFile = section(0, Int32Array);
    const chunkStart = section(1, Int32Array);
    const chunkEnd = section(2, Int32Array);
    const textOffsets = section(3, Uint32Array);
    const lengths = section(4, Float32Array);
    const vectors = section(5, Float32Array);
    const offsets = section(6, Int32Array);
    const docs = section(7, Int32Array);
    const freqs = section(8, Uint16Array);
    const allText = new TextDecoder().decode(section(9, Uint8Array));
    const texts = new Array<string>(n);
    for (let i = 0; i < n; i++) texts[i] = allText.slice(textOffsets[i], textOffsets[i + 1]);
    return {
      root: header.root,
      modelId: header.modelId,
      dim: header.dim,
      files: header.files,
      chunkFile,
      chunkStart,
      chunkEnd,
      texts,
      vectors,
      bm25: {
        terms: header.terms,
        termIds: termIdsOf(header.terms),
        offsets,
        docs,
        freqs,
        lengths,
        averageLength: averageOf(lengths),
      },
      redactionRules: header.redactionRules,
      report: header.report,
    };
  } catch (error) {
    logError(
      "code index",
      `${file} is damaged (${(error as Error).message}); rebuilding it from the files`,
      findProjectRoot(root),
    );
    // Whatever is there is ours and derived (a directory too): the index is rebuilt in its place.
    rmSync(file, { recursive: true, force: true });
    return undefined;
  }
}
