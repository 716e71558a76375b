/**
 * The on-disk code index: one file per repository, `dataDir()/code/<projectKey>/index.bin`, written
 * whole to a temporary name and renamed, so a reader sees the old index or the new one, never half.
 * Layout: magic, a JSON header (files, vocabulary, report), then 4-byte-aligned typed-array sections
 * that load as views without parsing.
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
import { averageOf, type Bm25Index, termIdsOf } from "./bm25.ts";
import type { ContentKind } from "./languages.ts";
import type { SkipCounts } from "./walk.ts";

/**
 * Bumped whenever chunking, tokens or layout change, so an old index is rebuilt, not misread.
 * 3: chunk texts are redacted; an index of format 2 may hold secrets verbatim, so it must not survive.
 */
export const INDEX_FORMAT = 3;
const MAGIC = "TFCODE01";

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
}

const align4 = (n: number) => (n + 3) & ~3;

export function saveIndex(index: CodeIndex): void {
  const n = index.texts.length;
  const textOffsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) textOffsets[i + 1] = textOffsets[i] + index.texts[i].length;
  const textBlob = new TextEncoder().encode(index.texts.join(""));
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
    textBytes: textBlob.length,
  };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const sections: ArrayBufferView[] = [
    index.chunkFile,
    index.chunkStart,
    index.chunkEnd,
    textOffsets,
    index.bm25.lengths,
    index.vectors,
    index.bm25.offsets,
    index.bm25.docs,
    index.bm25.freqs,
    textBlob,
  ];
  const prefix = new Uint8Array(12);
  prefix.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(prefix.buffer).setUint32(8, headerBytes.length, true);
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
    for (const part of [prefix, headerBytes, ...sections]) {
      const bytes = new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
      for (let written = 0; written < bytes.length; )
        written += writeSync(fd, bytes, written, bytes.length - written);
      at += bytes.length;
      const padding = align4(at) - at;
      if (padding) writeSync(fd, zeros, 0, padding);
      at += padding;
    }
  } catch (error) {
    // A full disk: a partial index of hundreds of MB must not stay behind on it at every retry.
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, file);
}

/**
 * The saved index of `root`, or undefined when there is none, it was built by another format or
 * model, or it is damaged (the caller rebuilds; a damaged file is removed).
 */
export function loadIndex(root: string, modelId: string): CodeIndex | undefined {
  const file = indexFile(root);
  if (!existsSync(file)) return undefined;
  try {
    const raw = readFileSync(file);
    // Typed-array views need 4-byte alignment of the underlying buffer.
    const bytes = raw.byteOffset % 4 === 0 ? raw : new Uint8Array(raw);
    if (new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC) throw new Error("bad magic");
    const headerLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength))) as Header;
    if (header.format !== INDEX_FORMAT || header.modelId !== modelId || header.root !== root)
      return undefined;
    const n = header.chunkCount;
    const p = header.postingCount;
    const v = header.terms.length;
    let at = bytes.byteOffset + align4(12 + headerLength);
    const take = <T>(
      make: (buffer: ArrayBuffer, offset: number, length: number) => T,
      length: number,
      width: number,
    ): T => {
      const view = make(bytes.buffer as ArrayBuffer, at, length);
      at = align4(at + length * width);
      return view;
    };
    const int32 = (b: ArrayBuffer, o: number, l: number) => new Int32Array(b, o, l);
    const chunkFile = take(int32, n, 4);
    const chunkStart = take(int32, n, 4);
    const chunkEnd = take(int32, n, 4);
    const textOffsets = take((b, o, l) => new Uint32Array(b, o, l), n + 1, 4);
    const lengths = take((b, o, l) => new Float32Array(b, o, l), n, 4);
    const vectors = take((b, o, l) => new Float32Array(b, o, l), n * header.dim, 4);
    const offsets = take(int32, v + 1, 4);
    const docs = take(int32, p, 4);
    const freqs = take((b, o, l) => new Uint16Array(b, o, l), p, 2);
    const blob = take((b, o, l) => new Uint8Array(b, o, l), header.textBytes, 1);
    if (at - bytes.byteOffset > align4(bytes.byteLength)) throw new Error("truncated");
    const allText = new TextDecoder().decode(blob);
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
  } catch {
    rmSync(file, { force: true });
    return undefined;
  }
}
