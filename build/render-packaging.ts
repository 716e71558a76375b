#!/usr/bin/env bun
/**
 * Renders the Homebrew formula and the Scoop manifest for a release from the templates beside this
 * file and the release's SHA256SUMS:
 *
 *   bun run build/render-packaging.ts --version 0.2.0 --sums dist/SHA256SUMS --out packaging/
 *
 * Placeholders: {{version}}, {{url:<target>}} and {{sha256:<target>}} for the targets in build.ts.
 * Any placeholder left unfilled, or a target missing from the sums, is an error: a formula with a
 * wrong hash would fail for every user, so nothing is written unless everything is known.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { releaseAsset } from "../src/agents/archive.ts";
import { TARGETS, type Target } from "./build.ts";

const RELEASES = "https://github.com/ilyasmukiev/triforge/releases/download";
const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export const PACKAGES = [
  { template: "homebrew.rb.tmpl", output: "triforge.rb" },
  { template: "scoop.json.tmpl", output: "triforge.json" },
] as const;

export class PackagingError extends Error {}

/** The compressed asset the release publishes for a target (what the formula and manifest download). */
export function assetName(target: Target): string {
  return releaseAsset(target);
}

/** `sha256sum` output (`<hash>  <name>`, or `<hash> *<name>`) → name → hash. */
export function parseSums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!line) continue;
    const match = line.match(/^([0-9a-fA-F]{64}) [ *](.+)$/);
    if (!match) throw new PackagingError(`SHA256SUMS line ${i + 1} is not '<sha256>  <file>': ${line}`);
    sums.set(match[2], match[1].toLowerCase());
  }
  return sums;
}

export interface Release {
  /** Without a leading v. */
  version: string;
  sums: Map<string, string>;
  /** Where the assets are downloaded from; defaults to the GitHub release of `version`. */
  baseUrl?: string;
}

export function normalizeVersion(version: string): string {
  const bare = version.replace(/^v/, "");
  if (!VERSION.test(bare)) throw new PackagingError(`'${version}' is not a release version such as 1.2.3`);
  return bare;
}

export function render(template: string, release: Release): string {
  const base = (release.baseUrl ?? `${RELEASES}/v${release.version}`).replace(/\/+$/, "");
  return template.replace(/\{\{\s*([\w:-]+)\s*\}\}/g, (_, key: string) => {
    if (key === "version") return release.version;
    const [kind, target] = key.split(":") as [string, Target | undefined];
    if (!target || !(target in TARGETS) || (kind !== "url" && kind !== "sha256")) {
      throw new PackagingError(`unknown placeholder {{${key}}}`);
    }
    if (kind === "url") return `${base}/${assetName(target)}`;
    const hash = release.sums.get(assetName(target));
    if (!hash) throw new PackagingError(`SHA256SUMS has no entry for ${assetName(target)}`);
    return hash;
  });
}

/** Renders every package; returns output name → content. JSON outputs are checked to parse. */
export function renderAll(release: Release, templatesDir = import.meta.dir): Map<string, string> {
  const out = new Map<string, string>();
  for (const { template, output } of PACKAGES) {
    const text = render(readFileSync(join(templatesDir, template), "utf8"), release);
    if (output.endsWith(".json")) {
      try {
        JSON.parse(text);
      } catch (error) {
        throw new PackagingError(`${template} does not render to valid JSON (${(error as Error).message})`);
      }
    }
    out.set(output, text);
  }
  return out;
}

if (import.meta.main) {
  try {
    const { values } = parseArgs({
      options: {
        version: { type: "string" },
        sums: { type: "string", default: "dist/SHA256SUMS" },
        out: { type: "string", default: "dist/packaging" },
        "base-url": { type: "string" },
      },
    });
    if (!values.version)
      throw new PackagingError("--version is required (e.g. --version 0.2.0 or the tag v0.2.0)");
    let sumsText: string;
    try {
      sumsText = readFileSync(values.sums!, "utf8");
    } catch (error) {
      throw new PackagingError(`cannot read ${values.sums} (${(error as Error).message})`);
    }
    const rendered = renderAll({
      version: normalizeVersion(values.version),
      sums: parseSums(sumsText),
      baseUrl: values["base-url"],
    });
    const out = resolve(values.out!);
    mkdirSync(out, { recursive: true });
    for (const [name, text] of rendered) {
      writeFileSync(join(out, name), text);
      console.log(join(out, name));
    }
  } catch (error) {
    if (!(error instanceof PackagingError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")))
      throw error;
    console.error(`render-packaging: ${(error as Error).message}`);
    process.exit(1);
  }
}
