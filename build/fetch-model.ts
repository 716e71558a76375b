#!/usr/bin/env bun
/**
 * `bun run fetch-model <name> [--revision <rev>] [--force]` downloads a model2vec model from the
 * Hugging Face hub into models/<name>/, where the build picks it up (see src/embed/source.ts).
 * Every file is checked against the size and sha256 in models/manifest.json when they are known,
 * and the folder appears only once all files are complete and verified (download into a hidden
 * sibling, then rename). TRIFORGE_HF_ENDPOINT (or HF_ENDPOINT) points at a mirror.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  closeSync,
  writeSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ModelError } from "../src/embed/model.ts";
import { resolveModelDir } from "../src/embed/source.ts";

const ROOT = resolve(import.meta.dir, "..");
const DEFAULT_ENDPOINT = "https://huggingface.co";
/** What a model2vec folder needs; the loader reads exactly these. */
export const MODEL_FILES = ["config.json", "tokenizer.json", "model.safetensors"] as const;

export interface FileSpec {
  size: number | null;
  sha256: string | null;
  verified: boolean;
}
export interface ModelSpec {
  repo: string | null;
  revision?: string;
  description?: string;
  files: Record<string, FileSpec>;
}
export interface Manifest {
  models: Record<string, ModelSpec>;
}

/** A clear, expected failure: printed as one line, exit 1. */
export class FetchError extends Error {}

export function readManifest(path = join(ROOT, "models/manifest.json")): Manifest {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Manifest;
  } catch (error) {
    throw new FetchError(`${path}: cannot read the model manifest (${(error as Error).message})`);
  }
}

export function hubEndpoint(): string {
  return (process.env.TRIFORGE_HF_ENDPOINT || process.env.HF_ENDPOINT || DEFAULT_ENDPOINT).replace(
    /\/+$/,
    "",
  );
}

export interface FetchOptions {
  name: string;
  manifest: Manifest;
  modelsDir: string;
  revision?: string;
  force?: boolean;
  endpoint?: string;
  log?: (line: string) => void;
}

export interface FetchResult {
  dir: string;
  skipped: boolean;
  files: { name: string; size: number; sha256: string; checked: boolean }[];
}

export async function fetchModel(options: FetchOptions): Promise<FetchResult> {
  const { name, manifest, modelsDir } = options;
  const log = options.log ?? (() => {});
  const spec = manifest.models[name];
  if (!spec) {
    throw new FetchError(`unknown model '${name}'; one of: ${Object.keys(manifest.models).join(", ")}`);
  }
  if (!spec.repo) {
    throw new FetchError(
      `${name} is not published on the hub: it is a repack shipped in ../shared/models/${name} (the build's fallback model)`,
    );
  }
  const dir = join(modelsDir, name);
  if (existsSync(dir) && !options.force) {
    log(`${dir} already exists; pass --force to download it again`);
    return { dir, skipped: true, files: [] };
  }
  const endpoint = (options.endpoint ?? hubEndpoint()).replace(/\/+$/, "");
  const revision = options.revision ?? spec.revision ?? "main";
  mkdirSync(modelsDir, { recursive: true });
  // A hidden sibling on the same filesystem, so the final rename is atomic and a failure leaves nothing half-written.
  const partial = join(modelsDir, `.${name}.partial-${process.pid}`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  try {
    const files: FetchResult["files"] = [];
    for (const file of MODEL_FILES) {
      const url = `${endpoint}/${spec.repo}/resolve/${encodeURIComponent(revision)}/${file}`;
      log(`${file} ← ${url}`);
      const got = await download(url, join(partial, file));
      const expected = spec.files[file];
      if (expected?.size != null && expected.size !== got.size) {
        throw new FetchError(`${url}: ${got.size} bytes, expected ${expected.size} (models/manifest.json)`);
      }
      if (expected?.sha256 && expected.sha256 !== got.sha256) {
        throw new FetchError(
          `${url}: sha256 ${got.sha256}, expected ${expected.sha256}` +
            (expected.verified
              ? ""
              : " (the manifest's hash is unconfirmed: check the hub and update models/manifest.json)"),
        );
      }
      files.push({ name: file, ...got, checked: Boolean(expected?.sha256) });
    }
    const previous = join(modelsDir, `.${name}.previous-${process.pid}`);
    if (existsSync(dir)) renameSync(dir, previous);
    renameSync(partial, dir);
    rmSync(previous, { recursive: true, force: true });
    return { dir, skipped: false, files };
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** The model a fresh clone's build fetches when it finds none: the release's default. */
export const DEFAULT_BUILD_MODEL = "potion-base-2M";

export interface BuildModelOptions {
  /** How the build finds a model on disk (src/embed/source.ts); throws ModelError when there is none. */
  find?: () => string;
  manifest?: Manifest;
  modelsDir?: string;
  endpoint?: string;
  log?: (line: string) => void;
}

/**
 * The model folder the build embeds: the one on disk (TRIFORGE_MODEL_DIR, models/, ../shared/models),
 * else, in a fresh clone, the default model fetched from the hub into models/ and verified against the
 * manifest. Where the hub cannot be reached, one FetchError line says what to do instead.
 */
export async function modelForBuild(options: BuildModelOptions = {}): Promise<string> {
  try {
    return (options.find ?? resolveModelDir)();
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
  }
  const endpoint = options.endpoint ?? hubEndpoint();
  const log = options.log ?? (() => {});
  log(
    `no embedding model on disk (models/, ../shared/models): fetching ${DEFAULT_BUILD_MODEL} from ${endpoint}`,
  );
  try {
    const fetched = await fetchModel({
      name: DEFAULT_BUILD_MODEL,
      manifest: options.manifest ?? readManifest(),
      modelsDir: options.modelsDir ?? join(ROOT, "models"),
      endpoint,
      log,
    });
    return fetched.dir;
  } catch (error) {
    if (!(error instanceof FetchError)) throw error;
    throw new FetchError(
      `no embedding model to build with, and fetching ${DEFAULT_BUILD_MODEL} failed: ${error.message}. Run 'bun run fetch-model ${DEFAULT_BUILD_MODEL}' where the hub is reachable, or point TRIFORGE_MODEL_DIR at a model2vec folder (config.json, tokenizer.json, model.safetensors)`,
    );
  }
}

/** Streams `url` into `path`, hashing as it goes; returns the byte count and sha256. */
async function download(url: string, path: string): Promise<{ size: number; sha256: string }> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: "follow" });
  } catch (error) {
    throw new FetchError(
      `cannot reach ${new URL(url).origin} (${(error as Error).message}): check the network, or set TRIFORGE_HF_ENDPOINT to a reachable mirror`,
    );
  }
  if (!response.ok || !response.body) {
    throw new FetchError(`${url}: HTTP ${response.status} ${response.statusText}`.trim());
  }
  const hash = createHash("sha256");
  const fd = openSync(path, "w");
  let size = 0;
  try {
    for await (const chunk of response.body) {
      hash.update(chunk);
      writeSync(fd, chunk);
      size += chunk.byteLength;
    }
  } catch (error) {
    throw new FetchError(`${url}: download interrupted after ${size} bytes (${(error as Error).message})`);
  } finally {
    closeSync(fd);
  }
  return { size, sha256: hash.digest("hex") };
}

const USAGE =
  "usage: bun run fetch-model <name> [--revision <rev>] [--force] [--models-dir <dir>] [--manifest <file>]";

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ allowPositionals: true; options: typeof OPTIONS }>>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    console.error(`fetch-model: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  try {
    const manifest = readManifest(values.manifest);
    if (values.help || positionals.length !== 1) {
      const list = Object.entries(manifest.models).map(([n, m]) => `  ${n.padEnd(26)}${m.description ?? ""}`);
      (values.help ? console.log : console.error)(`${USAGE}\n\nModels:\n${list.join("\n")}`);
      return values.help ? 0 : 2;
    }
    const result = await fetchModel({
      name: positionals[0],
      manifest,
      modelsDir: resolve(values["models-dir"] ?? join(ROOT, "models")),
      revision: values.revision,
      force: values.force,
      log: (line) => console.error(line),
    });
    for (const f of result.files) {
      console.log(`${f.sha256}  ${f.size}  ${f.name}${f.checked ? "  (verified)" : "  (no known hash)"}`);
    }
    if (!result.skipped) console.log(`model ready in ${result.dir}: the next 'bun run build' embeds it`);
    return 0;
  } catch (error) {
    if (!(error instanceof FetchError)) throw error;
    console.error(`fetch-model: ${error.message}`);
    return 1;
  }
}

const OPTIONS = {
  revision: { type: "string" },
  force: { type: "boolean" },
  "models-dir": { type: "string" },
  manifest: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
