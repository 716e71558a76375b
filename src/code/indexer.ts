/**
 * Builds and refreshes a repository's code index incrementally: a file whose size and modification
 * time are unchanged is not read; one whose bytes hash the same is not re-chunked; only new and
 * changed files are chunked, tokenised and embedded, and deleted files drop out.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadModel } from "../embed/source.ts";
import { countTerms, mergeBm25, type TermCounts } from "./bm25.ts";
import { ChunkEmbedder } from "./embedder.ts";
import { type Chunk, chunkFile } from "./chunk.ts";
import { RepositoryError } from "./errors.ts";
import { type CodeIndex, type FileEntry, type IndexReport, loadIndex, saveIndex } from "./store.ts";
import { pathTokens, tokenize } from "./tokens.ts";
import { walkRepository, type WalkedFile } from "./walk.ts";

export type Progress = (done: number, total: number) => void;

/** Bytes looked at for a NUL when deciding that a file is binary (what git and grep look at). */
const BINARY_PROBE_BYTES = 8000;
/**
 * Larger files are chunked by lines: tree-sitter in WASM parses about 7 MB/s, a tenth of everything
 * else in indexing, and big files (generated tables, amalgamations) gain least from syntax. On the
 * development set syntax chunking is worth +0.006 NDCG@10 over lines alone (docs/code-search.md).
 */
const TREE_SITTER_MAX_CHARS = 64_000;
/** Chunks embedded per call: large enough to amortise the tokenizer call, small enough for progress. */
const EMBED_BATCH = 512;

/** The real absolute path of a repository folder, or a RepositoryError saying what is wrong. */
export function resolveRepository(path: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw new RepositoryError(`${path} does not exist`);
  }
  if (!statSync(real).isDirectory()) throw new RepositoryError(`${path} is not a directory`);
  return real;
}

/** What a dense vector of a chunk is computed from: its path gives the small model the file's topic. */
export function embeddingText(path: string, text: string): string {
  return `${path}\n${text}`;
}

/** The BM25 document of a chunk: its tokens plus its file stem and folders. */
export function chunkTerms(path: string, text: string): { counts: TermCounts; length: number } {
  const tokens = tokenize(text);
  for (const token of pathTokens(path)) tokens.push(token);
  return { counts: countTerms(tokens), length: tokens.length };
}

function isBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_PROBE_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lenientUtf8 = new TextDecoder("utf-8");

/**
 * Brings the saved index of `root` up to date with the files on disk and saves it when anything
 * changed. `previous` skips loading from disk (a process that keeps its index in memory).
 */
export async function refreshIndex(
  root: string,
  options: { previous?: CodeIndex; onProgress?: Progress; force?: boolean } = {},
): Promise<CodeIndex> {
  const started = performance.now();
  const model = await loadModel();
  const previous = options.force ? undefined : (options.previous ?? loadIndex(root, model.id));
  const { files: walked, skipped: walkSkipped } = walkRepository(root);
  const skipped = { ...walkSkipped, binary: 0 };
  let invalidUtf8 = 0;

  const oldByPath = new Map<string, { entry: FileEntry; index: number }>();
  previous?.files.forEach((entry, index) => {
    oldByPath.set(entry.path, { entry, index });
  });

  /** Files kept as they are (maybe with a new mtime), and files to (re)chunk with their text. */
  const kept: { file: FileEntry; oldIndex: number }[] = [];
  const fresh: { walked: WalkedFile; hash: string; text: string }[] = [];
  for (const file of walked) {
    const old = oldByPath.get(file.path);
    if (old && old.entry.size === file.size && old.entry.mtimeMs === file.mtimeMs) {
      kept.push({ file: old.entry, oldIndex: old.index });
      continue;
    }
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(join(root, file.path));
    } catch {
      skipped.unreadable++;
      continue;
    }
    if (isBinary(bytes)) {
      skipped.binary++;
      continue;
    }
    const hash = Bun.hash.xxHash64(bytes).toString(16);
    if (old && old.entry.hash === hash) {
      kept.push({ file: { ...old.entry, size: file.size, mtimeMs: file.mtimeMs }, oldIndex: old.index });
      continue;
    }
    let text: string;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      invalidUtf8++;
      text = lenientUtf8.decode(bytes);
    }
    fresh.push({ walked: file, hash, text });
  }

  const present = new Set([...kept.map((k) => k.file.path), ...fresh.map((f) => f.walked.path)]);
  const removed = previous ? previous.files.filter((f) => !present.has(f.path)).length : 0;
  const reportOf = (files: number, chunks: number, changed: number): IndexReport => ({
    files,
    chunks,
    changed,
    removed,
    skipped,
    invalidUtf8,
    indexedAt: new Date().toISOString(),
    durationMs: Math.round(performance.now() - started),
  });
  if (previous && fresh.length === 0 && removed === 0) {
    // Nothing to re-index; save only when modification times moved (a touch, a checkout).
    const byPath = new Map(kept.map((k) => [k.file.path, k.file]));
    const files = previous.files.map((f) => byPath.get(f.path) ?? f);
    const same = { ...previous, files, report: reportOf(files.length, previous.texts.length, 0) };
    if (files.some((f, i) => f !== previous.files[i])) saveIndex(same);
    return same;
  }
  // Kept files stay in their old order, so chunk renumbering is monotone and postings stay sorted.
  kept.sort((a, b) => a.oldIndex - b.oldIndex);

  // Chunk the new and changed files.
  const chunked: { walked: WalkedFile; hash: string; chunks: Chunk[] }[] = [];
  let chunkTotal = 0;
  for (let i = 0; i < fresh.length; i++) {
    const { walked: file, hash, text } = fresh[i];
    const chunks = await chunkFile(
      text,
      text.length <= TREE_SITTER_MAX_CHARS ? file.language.grammar : undefined,
    );
    chunked.push({ walked: file, hash, chunks });
    chunkTotal += chunks.length;
  }

  // Assemble: kept files' chunks first (renumbered), then the new ones.
  const previousChunkCount = previous?.texts.length ?? 0;
  const keep = previous ? new Int32Array(previousChunkCount).fill(-1) : undefined;
  const files: FileEntry[] = [];
  let keptChunkCount = 0;
  for (const { file } of kept) {
    const entry = { ...file, firstChunk: keptChunkCount };
    for (let c = 0; c < file.chunkCount; c++) keep![file.firstChunk + c] = keptChunkCount + c;
    keptChunkCount += file.chunkCount;
    files.push(entry);
  }
  const total = keptChunkCount + chunkTotal;
  const chunkFileIds = new Int32Array(total);
  const chunkStart = new Int32Array(total);
  const chunkEnd = new Int32Array(total);
  const texts = new Array<string>(total);
  const vectors = new Float32Array(total * model.dim);
  if (previous && keep) {
    for (let fileIndex = 0; fileIndex < kept.length; fileIndex++) {
      const oldFile = kept[fileIndex].file;
      for (let c = 0; c < oldFile.chunkCount; c++) {
        const from = oldFile.firstChunk + c;
        const to = keep[from];
        chunkFileIds[to] = fileIndex;
        chunkStart[to] = previous.chunkStart[from];
        chunkEnd[to] = previous.chunkEnd[from];
        texts[to] = previous.texts[from];
        vectors.set(previous.vectors.subarray(from * model.dim, (from + 1) * model.dim), to * model.dim);
      }
    }
  }
  const embedder = new ChunkEmbedder(model);
  const addedTerms: { counts: TermCounts; length: number }[] = [];
  const pending: string[] = [];
  let next = keptChunkCount;
  let embedded = keptChunkCount;
  const flush = async () => {
    if (!pending.length) return;
    vectors.set(await embedder.embed(pending), embedded * model.dim);
    embedded += pending.length;
    pending.length = 0;
    options.onProgress?.(embedded - keptChunkCount, chunkTotal);
  };
  for (const { walked: file, hash, chunks } of chunked) {
    files.push({
      path: file.path,
      hash,
      size: file.size,
      mtimeMs: file.mtimeMs,
      language: file.language.language,
      kind: file.language.kind,
      firstChunk: next,
      chunkCount: chunks.length,
    });
    for (const chunk of chunks) {
      chunkFileIds[next] = files.length - 1;
      chunkStart[next] = chunk.startLine;
      chunkEnd[next] = chunk.endLine;
      texts[next] = chunk.text;
      addedTerms.push(chunkTerms(file.path, chunk.text));
      pending.push(embeddingText(file.path, chunk.text));
      next++;
      if (pending.length >= EMBED_BATCH) await flush();
    }
  }
  await flush();

  const index: CodeIndex = {
    root,
    modelId: model.id,
    dim: model.dim,
    files,
    chunkFile: chunkFileIds,
    chunkStart,
    chunkEnd,
    texts,
    vectors,
    bm25: mergeBm25(previous?.bm25, keep, keptChunkCount, addedTerms),
    report: reportOf(files.length, total, fresh.length),
  };
  saveIndex(index);
  return index;
}
