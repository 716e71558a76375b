import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { cacheDir } from "../home/paths.ts";
import { ModelError, type ModelFiles, StaticModel } from "./model.ts";
import { WordPieceTable } from "./wordpiece.ts";

const REPO_ROOT = resolve(import.meta.dir, "../..");
/** Preference when several models were fetched into models/: best retrieval quality first. */
export const MODEL_PREFERENCE = [
  "potion-retrieval-32M",
  "potion-code-16M",
  "potion-base-8M",
  "potion-multilingual-128M",
  "potion-base-2M",
];
export const SHARED_DEFAULT_MODEL = resolve(REPO_ROOT, "../shared/models/potion-base-2M-int8");

const MODEL_FILES = ["config.json", "tokenizer.json", "model.safetensors"] as const;

export function isModelDir(dir: string): boolean {
  return MODEL_FILES.every((f) => existsSync(join(dir, f)));
}

/**
 * The model folder a build or a source checkout uses: TRIFORGE_MODEL_DIR, else the best model
 * fetched into models/, else the default potion-base-2M in ../shared.
 */
export function resolveModelDir(): string {
  const fromEnv = process.env.TRIFORGE_MODEL_DIR;
  if (fromEnv) {
    const missing = MODEL_FILES.filter((f) => !existsSync(join(fromEnv, f)));
    if (missing.length) {
      throw new ModelError(
        `${join(resolve(fromEnv), missing[0])}: missing (TRIFORGE_MODEL_DIR must be a model2vec folder with ${MODEL_FILES.join(", ")})`,
      );
    }
    return resolve(fromEnv);
  }
  const modelsDir = join(REPO_ROOT, "models");
  const present = existsSync(modelsDir)
    ? readdirSync(modelsDir).filter((d) => isModelDir(join(modelsDir, d)))
    : [];
  for (const name of MODEL_PREFERENCE) {
    const hit = present.find((d) => d === name || d.startsWith(`${name}-`));
    if (hit) return join(modelsDir, hit);
  }
  if (present.length) return join(modelsDir, present[0]);
  if (isModelDir(SHARED_DEFAULT_MODEL)) return SHARED_DEFAULT_MODEL;
  throw new ModelError(
    "no embedding model found: set TRIFORGE_MODEL_DIR or run 'bun run fetch-model potion-base-8M'",
  );
}

export function readModelDir(dir: string): ModelFiles {
  for (const f of MODEL_FILES) {
    if (!existsSync(join(dir, f))) throw new ModelError(`${join(dir, f)}: missing`);
  }
  return {
    id: basename(dir),
    origin: dir,
    config: readFileSync(join(dir, "config.json"), "utf8"),
    tokenizer: readFileSync(join(dir, "tokenizer.json"), "utf8"),
    weights: mapFile(join(dir, "model.safetensors")),
  };
}

function mapFile(path: string): Uint8Array {
  // Bun.mmap shares pages with the file; fall back to reading where mapping is unavailable.
  try {
    return Bun.mmap(path, { shared: false });
  } catch {
    return new Uint8Array(readFileSync(path));
  }
}

type EmbeddedModel = typeof import("triforge:embedded-model").default;

/** The model built into the binary, if this is a compiled build that embeds one. */
async function embeddedModelInfo(): Promise<EmbeddedModel | undefined> {
  if (!process.env.TRIFORGE_EMBEDDED_MODEL) return undefined;
  return (await import("triforge:embedded-model")).default;
}

/** Where the embedded weights are extracted: keyed by their hash, so a new build never reads an old file. */
function extractedWeightsPath(embedded: EmbeddedModel): string {
  return join(cacheDir(), "models", `${embedded.id}-${embedded.sha256.slice(0, 12)}`, "model.safetensors");
}

/** Writes the embedded weights to the cache atomically, checking their hash on the way. */
async function extractWeights(embedded: EmbeddedModel, weightsPath: string): Promise<void> {
  const bytes = await Bun.file(embedded.weights).bytes();
  const digest = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  if (digest !== embedded.sha256)
    throw new ModelError(`the model embedded in ${process.execPath} is damaged: reinstall triforge`);
  mkdirSync(dirname(weightsPath), { recursive: true });
  const temporary = `${weightsPath}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, weightsPath);
}

/**
 * The embedded model's files: weights extracted once to the cache and memory-mapped on later starts
 * (`refresh` extracts again, replacing a damaged copy).
 */
async function embeddedModelFiles(embedded: EmbeddedModel, refresh = false): Promise<ModelFiles> {
  const weightsPath = extractedWeightsPath(embedded);
  if (refresh || !existsSync(weightsPath) || statSync(weightsPath).size !== embedded.size) {
    await extractWeights(embedded, weightsPath);
  }
  return {
    id: embedded.id,
    origin: `${dirname(weightsPath)} (extracted from the binary)`,
    config: await Bun.file(embedded.config).text(),
    tokenizer: await Bun.file(embedded.tokenizer).text(),
    weights: mapFile(weightsPath),
  };
}

/**
 * Checks the extracted copy of the embedded model against the hash built into the binary and
 * extracts it again when it differs (`triforge doctor`). Undefined when no model is embedded.
 */
export async function repairEmbeddedModelCache(): Promise<
  { path: string; repaired: boolean; firstUse: boolean } | undefined
> {
  const embedded = await embeddedModelInfo();
  if (!embedded) return undefined;
  const path = extractedWeightsPath(embedded);
  // Not there yet is the normal first run of a new binary, not damage: doctor words the two apart.
  const firstUse = !existsSync(path);
  const intact =
    !firstUse && new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex") === embedded.sha256;
  if (!intact) await extractWeights(embedded, path);
  return { path, repaired: !intact && !firstUse, firstUse };
}

/** Where the model that `loadModel()` would use comes from, without loading it. */
export function describeModelSource(): string {
  if (process.env.TRIFORGE_MODEL_DIR) return process.env.TRIFORGE_MODEL_DIR;
  if (process.env.TRIFORGE_EMBEDDED_MODEL) return `${process.env.TRIFORGE_EMBEDDED_MODEL} (embedded)`;
  return resolveModelDir();
}

/**
 * Loads a model with its vocabulary table kept in the cache, keyed by a hash of the tokenizer's JSON:
 * the first load derives it (parsing that JSON), later processes read it as bytes (wordpiece.ts).
 * A table that is missing or does not check out is derived and written again.
 */
async function loadWithKeptVocabulary(files: ModelFiles): Promise<StaticModel> {
  const path = join(cacheDir(), "models", `vocabulary-${Bun.hash(files.tokenizer).toString(16)}.bin`);
  let kept: WordPieceTable | undefined;
  try {
    kept = WordPieceTable.fromBytes(readFileSync(path));
  } catch {
    // Not there yet, or damaged: derived from the JSON below.
  }
  const model = await StaticModel.load({ ...files, vocabulary: kept });
  if (!kept && model.vocabulary) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, model.vocabulary.toBytes());
      renameSync(temporary, path);
    } catch {
      // A cache that cannot be written (read-only home) only costs the next process the derivation.
    }
  }
  return model;
}

let loaded: Promise<StaticModel> | undefined;
/**
 * The process-wide model: TRIFORGE_MODEL_DIR when set (a user's larger model), else the one
 * embedded in the binary, else the source-checkout resolution. Loaded once, on first use.
 */
export function loadModel(): Promise<StaticModel> {
  loaded ??= (async () => {
    const embedded = process.env.TRIFORGE_MODEL_DIR ? undefined : await embeddedModelInfo();
    if (!embedded) return loadWithKeptVocabulary(readModelDir(resolveModelDir()));
    try {
      return await loadWithKeptVocabulary(await embeddedModelFiles(embedded));
    } catch (error) {
      // The extracted copy is a cache: a damaged one (a disk error, a stray edit) is replaced, once.
      if (!(error instanceof ModelError)) throw error;
      return loadWithKeptVocabulary(await embeddedModelFiles(embedded, true));
    }
  })();
  return loaded;
}
