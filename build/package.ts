#!/usr/bin/env bun
/**
 * The release's downloads: each binary that build.ts wrote to dist/ (signed by then, on macOS) packed
 * into its compressed asset (`triforge-<os>-<arch>.tar.gz`, `triforge-windows-x64.zip`), and SHA256SUMS
 * over those archives, the files users download:
 *
 *   bun run build/package.ts [--dist dist]
 *
 * The linux-x64 binary is about 148 MB raw and 61 MB packed.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { packBinary, releaseAsset } from "../src/agents/archive.ts";
import { TARGETS, type Target } from "./build.ts";

/** The bare binary build.ts writes for a target. */
export function binaryName(target: Target): string {
  return `triforge-${target}${target.startsWith("windows") ? ".exe" : ""}`;
}

/** Packs every target's binary found in `dist`; returns `<sha256>  <asset>` lines, SHA256SUMS's format. */
export function packageDist(dist: string, log: (line: string) => void = () => {}): string[] {
  const sums: string[] = [];
  for (const target of Object.keys(TARGETS) as Target[]) {
    const binary = join(dist, binaryName(target));
    if (!existsSync(binary)) continue;
    const asset = releaseAsset(target);
    const started = performance.now();
    const packed = packBinary(target, readFileSync(binary));
    writeFileSync(join(dist, asset), packed);
    sums.push(`${createHash("sha256").update(packed).digest("hex")}  ${asset}`);
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    log(
      `${asset}  ${mb(packed.length)} (binary ${mb(statSync(binary).size)})  ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  return sums;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { dist: { type: "string", default: "dist" } } });
  const dist = resolve(values.dist!);
  const sums = packageDist(dist, console.log);
  if (sums.length === 0) {
    console.error(`package: no triforge binaries in ${dist}; run 'bun run build' first`);
    process.exit(1);
  }
  writeFileSync(join(dist, "SHA256SUMS"), `${sums.join("\n")}\n`);
}
