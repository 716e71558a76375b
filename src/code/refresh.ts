/**
 * Builds and refreshes a repository's code index incrementally: a file whose size and modification
 * time are unchanged is not read; one whose bytes hash the same is not re-chunked; only new and
 * changed files are chunked, tokenised and embedded, and deleted files drop out.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadModel } from "../embed/source.ts";
import { CODE_REDACTION_VERSION, loadProjectRules } from "../privacy/index.ts";
import { mergeBm25 } from "./bm25.ts";
import { type Chunk, cutAtBreaks, fileBreakScores, splitLines, TARGET_CHUNK_CHARS } from "./chunk.ts";
import { ChunkEncoder } from "./chunk-encoder.ts";
import { parseWorkerCount, SharedParse } from "./chunk-pool.ts";
import { RepositoryError } from "./errors.ts";
import type { GrammarName } from "./languages.ts";
import { pathPenalty } from "./rank/penalties.ts";
import { redactKeepingLines } from "./redact.ts";
import { RedactAhead, useRedactWorker } from "./redact-ahead.ts";
import { type CapName, type IndexLimits, indexLimits } from "./limits.ts";
import { type CodeIndex, type FileEntry, type IndexReport, loadIndex, saveIndex } from "./store.ts";
import { type WalkedFile, walkRepository } from "./walk.ts";

/** Files chunked, tokenised and embedded so far, of those that needed it. */
export type Progress = (done: number, total: number) => void;
/** Milliseconds per indexing phase, summed over the pass. */
export type PhaseTimings = Record<string, number>;

/** Bytes looked at for a NUL when deciding that a file is binary (what git and grep look at). */
const BINARY_PROBE_BYTES = 8000;
/**
 * Larger files are chunked by lines: tree-sitter in WASM parses about 7 MB/s, a tenth of everything
 * else in indexing, and big files (generated tables, amalgamations) gain least from syntax. On the
 * development set syntax chunking is worth +0.006 NDCG@10 over lines alone (docs/code-search.md).
 */
const TREE_SITTER_MAX_CHARS = 64_000;
/**
 * From this many characters to index, new ASCII words are split by the WordPiece vocabulary in
 * JavaScript (embedder.ts): reading the vocabulary and building its tables costs about 65 ms once
 * per process, the tokenizer 5–10 µs a word (curl's 5 MB hold 11 k distinct words, abseil-cpp's
 * 10 MB 35 k), so a re-index of a few files keeps the tokenizer.
 */
const SPLIT_WORDS_MIN_CHARS = 4_000_000;
/** Chunks embedded per call: large enough to amortise the tokenizer call, small enough for progress. */
const EMBED_BATCH = 512;
/**
 * Characters chunked between two full garbage collections. A cold index leaves garbage behind at
 * every file (split lines, break scores, substrings) faster than the collector comes for it: on the
 * generated 100,000-file tree a collection every 16 M characters lowered the peak RSS from
 * 1.35–1.54 GB to 1.08–1.32 GB with no measurable change in time (interleaved runs, same binary).
 */
const COLLECT_EVERY_CHARS = 16_000_000;

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

/** The project's redaction rules; a malformed rules file is the caller's to fix (exit 1, a clear message). */
function projectRules(root: string): string[] {
  try {
    return loadProjectRules(root);
  } catch (error) {
    throw new RepositoryError(
      `${(error as Error).message} (the code index is not built without the project's redaction rules)`,
    );
  }
}

/**
 * Characters parsed with tree-sitter in one pass. Parsing (3–24 MB/s a thread in WASM, slower while each
 * grammar's code warms up) is most of a cold index of a large repository, and syntax chunking is worth
 * +0.006 NDCG@10 over the indentation chunker on the development set. So a repository up to this size
 * (every development repository: the largest, abseil-cpp, parses 8.0 M) is parsed whole, and past it files are parsed in order of importance (source before tests,
 * examples and vendored code) until the budget is spent; the rest are chunked by indentation. A later
 * refresh parses its changed files within a budget of its own.
 * PERF: TRIFORGE_CODE_SYNTAX_BUDGET overrides it (characters; 0 chunks everything by indentation).
 */
const SYNTAX_BUDGET_CHARS = 10_000_000;

function syntaxBudget(): number {
  const configured = Number(process.env.TRIFORGE_CODE_SYNTAX_BUDGET);
  return process.env.TRIFORGE_CODE_SYNTAX_BUDGET && Number.isFinite(configured) && configured >= 0
    ? configured
    : SYNTAX_BUDGET_CHARS;
}

/**
 * The grammar each file is parsed with, or undefined for the line chunker: files over
 * TREE_SITTER_MAX_CHARS, and those past the syntax budget. Files within one chunk's size are never
 * parsed (chunk.ts) and cost the budget nothing.
 */
function syntaxGrammars(files: { walked: WalkedFile; text: string }[]): {
  grammars: (GrammarName | undefined)[];
  overBudget: number;
} {
  const grammars = files.map(({ walked, text }) =>
    text.length <= TREE_SITTER_MAX_CHARS ? walked.language.grammar : undefined,
  );
  const order = files
    .map((f, i) => ({ i, chars: grammars[i] && f.text.length > TARGET_CHUNK_CHARS ? f.text.length : 0 }))
    .filter((f) => f.chars > 0);
  let left = syntaxBudget();
  if (order.reduce((sum, f) => sum + f.chars, 0) <= left) return { grammars, overBudget: 0 };
  // Source first: a test or vendored file ranks low (pathPenalty) and gains least from better chunks.
  const ranked = order
    .map((f) => ({ ...f, penalty: pathPenalty(files[f.i].walked.path) }))
    .sort((a, b) => b.penalty - a.penalty || a.i - b.i);
  let overBudget = 0;
  for (const f of ranked) {
    if (f.chars <= left) left -= f.chars;
    else {
      grammars[f.i] = undefined;
      overBudget++;
    }
  }
  return { grammars, overBudget };
}

/**
 * Break scores for each file, asked for in order. On a large job the syntax parsing is shared with
 * workers (chunk-pool.ts); `close` stops them.
 */
function syntaxScores(files: { text: string; grammar: GrammarName | undefined }[]): {
  scoresOf: (index: number, lines: string[]) => Promise<Int8Array>;
  /** Stops the workers; returns how many files they parsed. */
  close: () => number;
  workers: number;
} {
  const parse = (i: number, lines: string[]) => fileBreakScores(files[i].text, lines, files[i].grammar);
  const parsed: { text: string; grammar: GrammarName }[] = [];
  const parsedIndex = new Int32Array(files.length).fill(-1);
  let chars = 0;
  files.forEach((f, i) => {
    // A file within one chunk is never parsed (chunk.ts): it is neither work to share nor a reason for workers.
    if (!f.grammar || f.text.length <= TARGET_CHUNK_CHARS) return;
    parsedIndex[i] = parsed.length;
    parsed.push({ text: f.text, grammar: f.grammar });
    chars += f.text.length;
  });
  const workers = parsed.length ? parseWorkerCount(chars) : 0;
  if (!workers) return { scoresOf: parse, close: () => 0, workers };
  const shared = new SharedParse(parsed, workers);
  return {
    scoresOf: (i, lines) =>
      parsedIndex[i] < 0 ? parse(i, lines) : shared.scores(parsedIndex[i], () => parse(i, lines)),
    close: () => {
      shared.close();
      return shared.delivered;
    },
    workers,
  };
}

function isBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_PROBE_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lenientUtf8 = new TextDecoder("utf-8");

/**
 * Adds the time since the previous lap to a phase: one object per pass, handed to each phase
 * (benchmark/code-speed.ts prints the sums). Without `timings` it measures nothing.
 */
class PhaseTimer {
  private last: number;

  constructor(
    private readonly timings: PhaseTimings | undefined,
    private readonly clock: () => number,
  ) {
    this.last = clock();
  }

  lap(phase: string): void {
    if (!this.timings) return;
    const now = this.clock();
    this.timings[phase] = (this.timings[phase] ?? 0) + now - this.last;
    this.last = now;
  }
}

/** A file whose text is to be (re)chunked. */
interface FreshFile {
  walked: WalkedFile;
  hash: string;
  text: string;
}

/** Files kept from the previous index (maybe with a new mtime), with their place in it. */
interface KeptFile {
  file: FileEntry;
  oldIndex: number;
}

/**
 * Sorts the walked files into those the previous index still holds (same size and mtime: not read;
 * same bytes: not re-chunked) and those to chunk, with their text. Binary and unreadable files are
 * counted in `skipped`.
 */
function readChanged(
  root: string,
  walked: WalkedFile[],
  previous: CodeIndex | undefined,
  skipped: IndexReport["skipped"],
): { kept: KeptFile[]; fresh: FreshFile[]; invalidUtf8: number } {
  const oldByPath = new Map<string, { entry: FileEntry; index: number }>();
  previous?.files.forEach((entry, index) => {
    oldByPath.set(entry.path, { entry, index });
  });
  const kept: KeptFile[] = [];
  const fresh: FreshFile[] = [];
  let invalidUtf8 = 0;
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
  return { kept, fresh, invalidUtf8 };
}

/**
 * The kept files' entries, first and in their old order (so chunk renumbering is monotone and
 * postings stay sorted), and where each old chunk goes (`keep`, -1 for a dropped one).
 */
function renumberKept(
  kept: KeptFile[],
  previous: CodeIndex | undefined,
): { files: FileEntry[]; keep: Int32Array | undefined; keptChunkCount: number } {
  kept.sort((a, b) => a.oldIndex - b.oldIndex);
  const keep = previous ? new Int32Array(previous.texts.length).fill(-1) : undefined;
  const files: FileEntry[] = [];
  let keptChunkCount = 0;
  for (const { file } of kept) {
    for (let c = 0; c < file.chunkCount; c++) keep![file.firstChunk + c] = keptChunkCount + c;
    files.push({ ...file, firstChunk: keptChunkCount });
    keptChunkCount += file.chunkCount;
  }
  return { files, keep, keptChunkCount };
}

/** What chunking the fresh files made, and how the work was shared. */
interface Encoded {
  added: Chunk[];
  addedFile: number[];
  addedVectors: Float32Array[];
  encoder: ChunkEncoder;
  redactedFiles: number;
  parsedInWorkers: number;
  redactedInWorker: number;
  overSyntaxBudget: number;
  /** Set when the pass ran out of time before every fresh file was chunked. */
  outOfTime: boolean;
}

/**
 * Chunks, tokenises and embeds the fresh files in order, appending their entries to `files`; on
 * large jobs workers parse syntax trees (chunk-pool.ts) or redact (redact-ahead.ts) ahead of this
 * loop. Stops before a file once `deadline` has passed: the files done are the index's.
 */
async function encodeFresh(
  fresh: FreshFile[],
  files: FileEntry[],
  firstChunk: number,
  context: {
    model: Awaited<ReturnType<typeof loadModel>>;
    rules: string[];
    timer: PhaseTimer;
    deadline: number;
    onProgress?: Progress;
  },
): Promise<Encoded> {
  const { model, rules, timer } = context;
  const { grammars, overBudget } = syntaxGrammars(fresh);
  const { scoresOf, close, workers } = syntaxScores(
    fresh.map((f, i) => ({ text: f.text, grammar: grammars[i] })),
  );
  const freshChars = fresh.reduce((sum, f) => sum + f.text.length, 0);
  const ahead = useRedactWorker(freshChars, workers)
    ? new RedactAhead(
        fresh.map((f) => f.text),
        rules,
      )
    : undefined;
  // Each chunk's BM25 document and the words of its vector come from one scan (chunk-encoder.ts).
  const encoder = new ChunkEncoder(model, freshChars >= SPLIT_WORDS_MIN_CHARS);
  const encoded: Encoded = {
    added: [],
    addedFile: [],
    addedVectors: [],
    encoder,
    redactedFiles: 0,
    parsedInWorkers: 0,
    redactedInWorker: 0,
    overSyntaxBudget: overBudget,
    outOfTime: false,
  };
  const flush = async () => {
    if (encoder.pending) encoded.addedVectors.push(await encoder.embed());
  };
  let charsSinceCollection = 0;
  try {
    for (let i = 0; i < fresh.length; i++) {
      if (performance.now() > context.deadline) {
        encoded.outOfTime = true;
        break;
      }
      const { walked: file, hash, text } = fresh[i];
      // Privacy: chunks are cut from the redacted text, so nothing downstream (the index file, BM25,
      // vectors, snippets handed to the agent's remote LLM) holds a secret. Redaction keeps every
      // line, so the break scores workers compute from the original text (in memory only) still fit;
      // redacting here overlaps it with their parsing (or a worker redacts ahead: redact-ahead.ts).
      const redacted = ahead ? await ahead.text(i) : redactKeepingLines(text, rules);
      if (redacted.redactions) encoded.redactedFiles++;
      timer.lap("redact secrets");
      const lines = splitLines(redacted.text);
      // Scores come from the original lines wherever they are computed, so a worker's and the main
      // thread's agree (a redacted key's blank lines would change indentation hints).
      const originalLines = redacted.text === text ? lines : splitLines(text);
      timer.lap("chunk: other");
      const scores = await scoresOf(i, originalLines);
      timer.lap("chunk: syntax parse (main thread share + waiting for workers)");
      const chunks = cutAtBreaks(lines, scores);
      timer.lap("chunk: other");
      files.push({
        path: file.path,
        hash,
        size: file.size,
        mtimeMs: file.mtimeMs,
        language: file.language.language,
        kind: file.language.kind,
        firstChunk: firstChunk + encoded.added.length,
        chunkCount: chunks.length,
      });
      for (const chunk of chunks) {
        encoded.added.push(chunk);
        encoded.addedFile.push(files.length - 1);
        encoder.add(file.path, chunk.text);
        timer.lap("tokenise (BM25 terms, embedding words)");
        if (encoder.pending >= EMBED_BATCH) await flush();
        timer.lap("embed");
      }
      context.onProgress?.(i + 1, fresh.length);
      charsSinceCollection += text.length;
      if (charsSinceCollection >= COLLECT_EVERY_CHARS) {
        charsSinceCollection = 0;
        Bun.gc(true);
      }
    }
    await flush();
    timer.lap("embed");
  } finally {
    encoded.parsedInWorkers = close();
    ahead?.close();
    encoded.redactedInWorker = ahead?.delivered ?? 0;
  }
  return encoded;
}

/** The kept chunks (moved to their new numbers) and the new ones, as the index's flat arrays. */
function assemble(
  previous: CodeIndex | undefined,
  kept: KeptFile[],
  keep: Int32Array | undefined,
  keptChunkCount: number,
  encoded: Encoded,
  dim: number,
): Pick<CodeIndex, "chunkFile" | "chunkStart" | "chunkEnd" | "texts" | "vectors"> {
  const { added, addedFile, addedVectors } = encoded;
  const total = keptChunkCount + added.length;
  const chunkFile = new Int32Array(total);
  const chunkStart = new Int32Array(total);
  const chunkEnd = new Int32Array(total);
  const texts = new Array<string>(total);
  const vectors = new Float32Array(total * dim);
  if (previous && keep) {
    for (let fileIndex = 0; fileIndex < kept.length; fileIndex++) {
      const oldFile = kept[fileIndex].file;
      for (let c = 0; c < oldFile.chunkCount; c++) {
        const from = oldFile.firstChunk + c;
        const to = keep[from];
        chunkFile[to] = fileIndex;
        chunkStart[to] = previous.chunkStart[from];
        chunkEnd[to] = previous.chunkEnd[from];
        texts[to] = previous.texts[from];
        vectors.set(previous.vectors.subarray(from * dim, (from + 1) * dim), to * dim);
      }
    }
  }
  for (let c = 0; c < added.length; c++) {
    const to = keptChunkCount + c;
    chunkFile[to] = addedFile[c];
    chunkStart[to] = added[c].startLine;
    chunkEnd[to] = added[c].endLine;
    texts[to] = added[c].text;
  }
  let at = keptChunkCount * dim;
  for (const batch of addedVectors) {
    vectors.set(batch, at);
    at += batch.length;
  }
  return { chunkFile, chunkStart, chunkEnd, texts, vectors };
}

/**
 * Brings the saved index of `root` up to date with the files on disk and saves it when anything
 * changed. `previous` skips loading from disk (a process that keeps its index in memory). The pass
 * stops at the caps of `limits` (limits.ts) and its report says which one.
 */
export async function refreshIndex(
  root: string,
  options: {
    previous?: CodeIndex;
    onProgress?: Progress;
    force?: boolean;
    limits?: IndexLimits;
    timings?: PhaseTimings;
    /** What timings are measured with, in ms: wall time by default (a benchmark may pass a thread's CPU clock). */
    clock?: () => number;
  } = {},
): Promise<CodeIndex> {
  const started = performance.now();
  const timer = new PhaseTimer(options.timings, options.clock ?? (() => performance.now()));
  const limits = options.limits ?? indexLimits();
  const deadline = started + limits.maxSeconds * 1000;
  const model = await loadModel();
  // The project's own rules (.triforge/exclude.txt, config `exclude`) apply to its code too; a bad
  // config is an error rather than an index without them. Changed rules, or a new version of code
  // mode's own rules, re-redact everything.
  const rules = projectRules(root);
  const redactionRules = Bun.hash.xxHash64(JSON.stringify([CODE_REDACTION_VERSION, rules])).toString(16);
  const cached = options.force ? undefined : (options.previous ?? loadIndex(root, model.id));
  const previous = cached?.redactionRules === redactionRules ? cached : undefined;
  const walk = walkRepository(root, { maxFiles: limits.maxFiles, maxBytes: limits.maxBytes, deadline });
  timer.lap("walk");
  const skipped = { ...walk.skipped, binary: 0 };
  const { kept, fresh, invalidUtf8 } = readChanged(root, walk.files, previous, skipped);
  timer.lap("read, hash, decode");
  const present = new Set([...kept.map((k) => k.file.path), ...fresh.map((f) => f.walked.path)]);
  const removed = previous ? previous.files.filter((f) => !present.has(f.path)).length : 0;
  const capOf = (name: CapName | undefined) =>
    name
      ? { name, limit: { files: limits.maxFiles, bytes: limits.maxBytes, seconds: limits.maxSeconds }[name] }
      : undefined;
  const reportOf = (files: number, chunks: number, changed: number, encoded?: Encoded): IndexReport => {
    const capped = capOf(walk.capped ?? (encoded?.outOfTime ? "seconds" : undefined));
    return {
      files,
      chunks,
      changed,
      parsedInWorkers: encoded?.parsedInWorkers ?? 0,
      overSyntaxBudget: encoded?.overSyntaxBudget ?? 0,
      removed,
      skipped,
      invalidUtf8,
      redactedFiles: encoded?.redactedFiles ?? 0,
      redactedInWorker: encoded?.redactedInWorker ?? 0,
      ...(capped ? { capped } : {}),
      indexedAt: new Date().toISOString(),
      durationMs: Math.round(performance.now() - started),
    };
  };
  if (previous && fresh.length === 0 && removed === 0) {
    // Nothing to re-index; save only when modification times moved (a touch, a checkout).
    const byPath = new Map(kept.map((k) => [k.file.path, k.file]));
    const files = previous.files.map((f) => byPath.get(f.path) ?? f);
    const same = { ...previous, files, report: reportOf(files.length, previous.texts.length, 0) };
    if (files.some((f, i) => f !== previous.files[i])) saveIndex(same);
    return same;
  }
  const { files, keep, keptChunkCount } = renumberKept(kept, previous);
  const encoded = await encodeFresh(fresh, files, keptChunkCount, {
    model,
    rules,
    timer,
    deadline,
    onProgress: options.onProgress,
  });
  const arrays = assemble(previous, kept, keep, keptChunkCount, encoded, model.dim);
  timer.lap("assemble");
  const { encoder } = encoded;
  const bm25 = mergeBm25(previous?.bm25, keep, keptChunkCount, encoder.additions, encoder.interner.terms);
  timer.lap("BM25 postings");
  const index: CodeIndex = {
    root,
    modelId: model.id,
    dim: model.dim,
    files,
    ...arrays,
    bm25,
    redactionRules,
    report: reportOf(files.length, arrays.texts.length, files.length - kept.length, encoded),
  };
  saveIndex(index);
  timer.lap("save");
  return index;
}
