#!/usr/bin/env bun
/**
 * Builds the single-file binaries: `bun run build [--target linux-x64,...] [--outdir dist]`.
 * Each binary embeds the embedding model (modelForBuild in fetch-model.ts; a fresh clone fetches the
 * default one from the hub) and only its own platform's tokenizers addon. Needs dependencies installed with `bun install --os='*' --cpu='*'` when
 * cross-compiling, so that every platform's addon is on disk.
 */
import { createHash } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BunPlugin } from "bun";
import { FetchError, modelForBuild } from "./fetch-model.ts";

const ROOT = resolve(import.meta.dir, "..");

/** Release targets: Bun's compile target and the tokenizers package that holds that platform's addon. */
export const TARGETS = {
  "linux-x64": { bun: "bun-linux-x64", addon: "linux-x64-gnu" },
  "linux-arm64": { bun: "bun-linux-arm64", addon: "linux-arm64-gnu" },
  "darwin-x64": { bun: "bun-darwin-x64", addon: "darwin-universal" },
  "darwin-arm64": { bun: "bun-darwin-arm64", addon: "darwin-universal" },
  "windows-x64": { bun: "bun-windows-x64", addon: "win32-x64-msvc" },
} as const;
export type Target = keyof typeof TARGETS;

export function hostTarget(): Target {
  const os = process.platform === "win32" ? "windows" : process.platform;
  return `${os}-${process.arch}` as Target;
}

function embeddedModelPlugin(modelDir: string): BunPlugin {
  const weights = join(modelDir, "model.safetensors");
  const bytes = readFileSync(weights);
  const module = `
import config from ${JSON.stringify(join(modelDir, "config.json"))} with { type: "file" };
import tokenizer from ${JSON.stringify(join(modelDir, "tokenizer.json"))} with { type: "file" };
import weights from ${JSON.stringify(weights)} with { type: "file" };
export default { id: ${JSON.stringify(basename(modelDir))}, sha256: ${JSON.stringify(createHash("sha256").update(bytes).digest("hex"))}, size: ${bytes.length}, config, tokenizer, weights };
`;
  return {
    name: "triforge-embedded-model",
    setup(build) {
      build.onResolve({ filter: /^triforge:embedded-model$/ }, () => ({
        path: "embedded-model",
        namespace: "triforge",
      }));
      build.onLoad({ filter: /^embedded-model$/, namespace: "triforge" }, () => ({
        contents: module,
        loader: "ts",
      }));
    },
  };
}

/** Replaces napi-rs's runtime platform probe with a static require of the one addon this target needs. */
function tokenizersAddonPlugin(target: Target): BunPlugin {
  const suffix = TARGETS[target].addon;
  const addon = join(ROOT, "node_modules/@anush008", `tokenizers-${suffix}`, `tokenizers.${suffix}.node`);
  return {
    name: "triforge-tokenizers-addon",
    setup(build) {
      build.onResolve({ filter: /^@anush008\/tokenizers$/ }, () => ({
        path: "tokenizers-addon",
        namespace: "triforge",
      }));
      build.onLoad({ filter: /^tokenizers-addon$/, namespace: "triforge" }, () => {
        if (!existsSync(addon)) {
          throw new Error(
            `${addon} is missing: run bun install --os='*' --cpu='*' to cross-compile for ${target}`,
          );
        }
        return { contents: `module.exports = require(${JSON.stringify(addon)});`, loader: "js" };
      });
    },
  };
}

export async function buildTarget(target: Target, outdir: string, modelDir: string): Promise<string> {
  const outfile = join(outdir, `triforge-${target}${target.startsWith("windows") ? ".exe" : ""}`);
  const result = await Bun.build({
    // The code indexer's parse worker is started by path, so it must be an entrypoint of its own.
    entrypoints: [join(ROOT, "src/index.ts"), join(ROOT, "src/code/chunk-worker.ts")],
    compile: { target: TARGETS[target].bun as Bun.Build.CompileTarget, outfile },
    // PERF: splitting + bytecode + minify measured ~6 ms start versus ~100 ms for a plain --compile.
    splitting: true,
    bytecode: true,
    minify: true,
    format: "esm",
    define: { "process.env.TRIFORGE_EMBEDDED_MODEL": JSON.stringify(basename(modelDir)) },
    plugins: [embeddedModelPlugin(modelDir), tokenizersAddonPlugin(target)],
  });
  if (!result.success) {
    throw new Error(`build for ${target} failed:\n${result.logs.map(String).join("\n")}`);
  }
  if (target.startsWith("darwin") && process.platform === "darwin") adHocSign(outfile);
  return outfile;
}

/**
 * macOS kills (SIGKILL) a binary whose signature does not match its contents, and --compile appends the
 * program after the runtime was signed. Re-sign ad hoc where `codesign` exists (macOS hosts); binaries
 * cross-built elsewhere are signed by the release workflow's macOS job.
 */
function adHocSign(file: string): void {
  Bun.spawnSync(["codesign", "--remove-signature", file]);
  const signed = Bun.spawnSync(["codesign", "--force", "--sign", "-", file], { stderr: "pipe" });
  if (signed.exitCode !== 0) throw new Error(`codesign ${file} failed: ${signed.stderr.toString().trim()}`);
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { target: { type: "string" }, outdir: { type: "string", default: "dist" } },
  });
  // `--target host` builds for this machine only (the README's quick start and CI).
  const targets = (
    values.target
      ? values.target.split(",").map((t) => (t === "host" ? hostTarget() : t))
      : Object.keys(TARGETS)
  ) as Target[];
  for (const t of targets)
    if (!(t in TARGETS)) throw new Error(`unknown target ${t}; one of ${Object.keys(TARGETS).join(", ")}`);
  const outdir = resolve(values.outdir!);
  if (!values.target) rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  let modelDir: string;
  try {
    modelDir = await modelForBuild({ log: (line) => console.log(line) });
  } catch (error) {
    if (!(error instanceof FetchError)) throw error;
    console.error(`build: ${error.message}`);
    process.exit(1);
  }
  console.log(`model: ${modelDir}`);
  const sums: string[] = [];
  for (const target of targets) {
    const started = performance.now();
    const file = await buildTarget(target, outdir, modelDir);
    const hash = createHash("sha256").update(readFileSync(file)).digest("hex");
    sums.push(`${hash}  ${basename(file)}`);
    console.log(
      `${basename(file)}  ${(statSync(file).size / 1e6).toFixed(1)} MB  ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  writeFileSync(join(outdir, "SHA256SUMS"), `${sums.join("\n")}\n`);
  if (values.target === "host") {
    // A stable name for the quick start: dist/triforge(.exe), a hard link to this machine's binary.
    const host = targets[0];
    const exe = host.startsWith("windows") ? ".exe" : "";
    rmSync(join(outdir, `triforge${exe}`), { force: true });
    linkSync(join(outdir, `triforge-${host}${exe}`), join(outdir, `triforge${exe}`));
  }
}
