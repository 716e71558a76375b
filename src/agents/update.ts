import { createHash } from "node:crypto";
import { chmodSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { releaseAsset, unpackBinary } from "./archive.ts";

/**
 * Self-update from the newest GitHub release: the asset for this platform, checked against the
 * release's SHA256SUMS, proven to run (`--version`) before and after it replaces this binary.
 */

export const REPOSITORY = "ilyasmukiev/triforge";
export const DEFAULT_API = "https://api.github.com";

export interface Release {
  tag_name: string;
  assets: { name: string; browser_download_url: string }[];
}

/** The build target of a platform (`linux-x64`, `windows-x64`), as build/build.ts names them. */
export function targetOf(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  return `${platform === "win32" ? "windows" : platform}-${arch}`;
}

/** The release asset for a platform: the compressed binary (build/package.ts). */
export function assetName(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  return releaseAsset(targetOf(platform, arch));
}

/** `<sha256>  <name>` lines (sha256sum's format; `*name` for binary mode) → name → hash. */
export function parseChecksums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const match = /^([0-9a-fA-F]{64})\s+\*?(.+?)\s*$/.exec(line);
    if (match) sums.set(match[2], match[1].toLowerCase());
  }
  return sums;
}

/** Compares dotted versions numerically (`v` prefix and pre-release suffix ignored). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/^v/, "")
      .split(/[-+]/)[0]
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

async function get(url: string): Promise<Response> {
  const response = await fetch(url, {
    headers: { Accept: "application/vnd.github+json", "User-Agent": "triforge-update" },
    redirect: "follow",
  });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response;
}

export async function latestRelease(apiBase: string): Promise<Release> {
  const release = (await (
    await get(`${apiBase.replace(/\/$/, "")}/repos/${REPOSITORY}/releases/latest`)
  ).json()) as Release;
  if (typeof release?.tag_name !== "string" || !Array.isArray(release.assets))
    throw new Error("the release answer has no tag_name/assets");
  return release;
}

/**
 * Downloads this platform's asset and refuses it unless SHA256SUMS vouches for exactly these bytes (the
 * compressed file, as downloaded); returns the binary inside it. A release from before the compressed
 * assets has the bare binary, taken as it is.
 */
export async function downloadVerified(
  release: Release,
  target = targetOf(),
  onProgress?: (received: number, total: number) => void,
): Promise<Uint8Array> {
  const url = (asset: string) => release.assets.find((a) => a.name === asset)?.browser_download_url;
  const packed = releaseAsset(target);
  const bare = `triforge-${target}${target.startsWith("windows") ? ".exe" : ""}`;
  const name = url(packed) || !url(bare) ? packed : bare;
  const binaryUrl = url(name);
  if (!binaryUrl) throw new Error(`release ${release.tag_name} has no ${name}`);
  const sumsUrl = url("SHA256SUMS");
  if (!sumsUrl)
    throw new Error(`release ${release.tag_name} has no SHA256SUMS; refusing an unverifiable binary`);
  const expected = parseChecksums(await (await get(sumsUrl)).text()).get(name);
  if (!expected)
    throw new Error(`SHA256SUMS of ${release.tag_name} lists no ${name}; refusing an unverifiable binary`);
  const bytes = await readBody(await get(binaryUrl), onProgress);
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== expected)
    throw new Error(
      `checksum mismatch for ${name}: expected ${expected}, got ${actual}; nothing was changed`,
    );
  if (name === bare) return bytes;
  try {
    return unpackBinary(target, bytes);
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}; nothing was changed`);
  }
}

/** A response's body, reporting bytes received of the announced length (0 when the server gives none). */
async function readBody(
  response: Response,
  onProgress?: (received: number, total: number) => void,
): Promise<Uint8Array> {
  if (!onProgress || !response.body) return new Uint8Array(await response.arrayBuffer());
  const total = Number(response.headers.get("content-length")) || 0;
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    received += chunk.byteLength;
    onProgress(received, Math.max(total, received));
  }
  return Buffer.concat(chunks);
}

/** Runs `<binary> --version`; the binary works when it exits 0 and names itself. */
export function runsVersion(binary: string): string | undefined {
  try {
    const result = Bun.spawnSync([binary, "--version"], { stdout: "pipe", stderr: "pipe", env: process.env });
    const out = result.stdout.toString().trim();
    return result.exitCode === 0 && out.startsWith("triforge ") ? out : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Replaces `target` with `bytes`: written beside it, run once, renamed over it (the old binary
 * kept as `<target>.old` until the new one answers `--version` in place, restored if it does not).
 */
export function swapBinary(target: string, bytes: Uint8Array): string {
  const fresh = `${target}.new`;
  const old = `${target}.old`;
  writeFileSync(fresh, bytes);
  chmodSync(fresh, 0o755);
  const trial = runsVersion(fresh);
  if (!trial) {
    rmSync(fresh, { force: true });
    throw new Error(
      "the downloaded binary does not run on this machine (--version failed); nothing was changed",
    );
  }
  rmSync(old, { force: true });
  renameSync(target, old);
  renameSync(fresh, target);
  const version = runsVersion(target);
  if (!version) {
    renameSync(target, fresh);
    renameSync(old, target);
    rmSync(fresh, { force: true });
    throw new Error("the new binary failed to run in place; the old one is back");
  }
  // Windows cannot delete a running executable: the .old file then goes on the next update.
  try {
    rmSync(old, { force: true });
  } catch {
    // Left for the next update to remove.
  }
  return version;
}
