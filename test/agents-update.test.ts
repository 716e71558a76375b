import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { packBinary } from "../src/agents/archive.ts";
import { assetName, targetOf } from "../src/agents/update.ts";
import { compiledBinary, spawnCollect, tempDir } from "./support/helpers.ts";

const sha = (bytes: string | Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A binary as the release publishes it: compressed (the same bytes every time, so its sum is stable). */
const packed = (binary: string) => packBinary(targetOf(), Buffer.from(binary));

/**
 * A release server on 127.0.0.1 that speaks the GitHub releases API, scripted per test: the asset is the
 * packed binary, or with `legacy` the bare binary under its old name (releases before the archives).
 */
let release: { tag: string; binary: string; sums?: string; legacy?: string; asset?: Uint8Array };
const requests: string[] = [];
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      requests.push(url.pathname);
      const base = `http://127.0.0.1:${server.port}`;
      if (url.pathname === "/repos/ilyasmukiev/triforge/releases/latest") {
        const name = release.legacy ?? assetName();
        const assets = [{ name, browser_download_url: `${base}/download/${name}` }];
        if (release.sums !== undefined)
          assets.push({ name: "SHA256SUMS", browser_download_url: `${base}/download/SHA256SUMS` });
        return Response.json({ tag_name: release.tag, assets });
      }
      if (url.pathname === `/download/${release.legacy ?? assetName()}`)
        return new Response(
          release.asset ?? (release.legacy ? Buffer.from(release.binary) : packed(release.binary)),
        );
      if (url.pathname === "/download/SHA256SUMS" && release.sums !== undefined)
        return new Response(release.sums);
      return new Response("not found", { status: 404 });
    },
  });
});
afterAll(() => server.stop(true));

const scratch = tempDir("triforge-update-");

/** The compiled binary copied into a folder of its own (a path with a space), as a user has it. */
async function installedCopy(): Promise<string> {
  const dir = join(scratch, "bin dir");
  mkdirSync(dir);
  const target = join(dir, "triforge");
  copyFileSync(await compiledBinary(), target);
  return target;
}

async function update(target: string, ...args: string[]) {
  const home = join(scratch, "home");
  return spawnCollect([target, "update", "--base-url", `http://127.0.0.1:${server.port}`, ...args], {
    env: { ...process.env, HOME: home, TRIFORGE_HOME: join(home, "data") },
  });
}

const newVersion = "#!/bin/sh\necho 'triforge 9.9.9'\n";

describe("triforge update against a local release server", () => {
  let target: string;
  let original: string;
  beforeAll(async () => {
    target = await installedCopy();
    original = sha(readFileSync(target));
  });
  const unchanged = () => {
    expect(sha(readFileSync(target))).toBe(original);
    expect(readdirSync(join(target, "..")).sort()).toEqual(["triforge"]);
  };

  test("a binary whose checksum does not match is refused and nothing changes", async () => {
    release = { tag: "v9.9.9", binary: newVersion, sums: `${sha("something else")}  ${assetName()}\n` };
    const result = await update(target);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`checksum mismatch for ${assetName()}`);
    unchanged();
  });

  test("a release without SHA256SUMS, or without our line in it, is refused", async () => {
    release = { tag: "v9.9.9", binary: newVersion };
    expect((await update(target)).stderr).toContain("has no SHA256SUMS; refusing an unverifiable binary");
    release = { tag: "v9.9.9", binary: newVersion, sums: `${sha(packed(newVersion))}  triforge-other-os\n` };
    expect((await update(target)).stderr).toContain(`lists no ${assetName()}`);
    unchanged();
  });

  test("a verified binary that does not run is refused; the old one stays", async () => {
    const broken = "#!/bin/sh\nexit 3\n";
    release = { tag: "v9.9.9", binary: broken, sums: `${sha(packed(broken))}  ${assetName()}\n` };
    const result = await update(target);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("does not run on this machine");
    unchanged();
  });

  test("the same version is up to date: nothing is downloaded", async () => {
    release = {
      tag: `v${pkg.version}`,
      binary: newVersion,
      sums: `${sha(packed(newVersion))}  ${assetName()}\n`,
    };
    requests.length = 0;
    const result = await update(target);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`triforge ${pkg.version} is up to date`);
    expect(requests).toEqual(["/repos/ilyasmukiev/triforge/releases/latest"]);
    release.tag = "v9.9.9";
    const check = await update(target, "--check");
    expect(check.stdout).toContain("triforge v9.9.9 is available");
    unchanged();
  });

  test("a newer verified release is swapped in and runs; no .new or .old file is left", async () => {
    release = {
      tag: "v9.9.9",
      binary: newVersion,
      sums: `${"0".repeat(64)}  other\n${sha(packed(newVersion))}  ${assetName()}\n`,
    };
    const result = await update(target);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${pkg.version} -> 9.9.9`);
    expect(readFileSync(target, "utf8")).toBe(newVersion);
    expect(Bun.spawnSync([target, "--version"]).stdout.toString()).toBe("triforge 9.9.9\n");
    expect(existsSync(`${target}.old`) || existsSync(`${target}.new`)).toBe(false);
  });

  test("an archive that verifies but holds no binary is refused; the old one stays", async () => {
    const target2 = join(scratch, "other bin", "triforge");
    mkdirSync(join(target2, ".."));
    copyFileSync(await compiledBinary(), target2);
    const before = sha(readFileSync(target2));
    const empty = Buffer.from("not an archive at all");
    release = { tag: "v9.9.9", binary: newVersion, asset: empty, sums: `${sha(empty)}  ${assetName()}\n` };
    const result = await update(target2);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${assetName()}: `);
    expect(result.stderr).toContain("nothing was changed");
    expect(sha(readFileSync(target2))).toBe(before);
  });

  test("a release from before the archives (a bare binary) still updates", async () => {
    const target3 = join(scratch, "legacy bin", "triforge");
    mkdirSync(join(target3, ".."));
    copyFileSync(await compiledBinary(), target3);
    const legacy = `triforge-${targetOf()}${process.platform === "win32" ? ".exe" : ""}`;
    release = { tag: "v9.9.9", binary: newVersion, legacy, sums: `${sha(newVersion)}  ${legacy}\n` };
    const result = await update(target3);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(target3, "utf8")).toBe(newVersion);
  });

  test.skipIf(!Bun.which("script") || process.platform === "win32")(
    "on a terminal the download shows a bar counted in MB",
    async () => {
      const target4 = join(scratch, "tty bin", "triforge");
      mkdirSync(join(target4, ".."));
      copyFileSync(await compiledBinary(), target4);
      release = { tag: "v9.9.9", binary: newVersion, sums: `${sha(packed(newVersion))}  ${assetName()}\n` };
      const home = join(scratch, "home");
      const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
      const line = `${q(target4)} update --base-url http://127.0.0.1:${server.port}`;
      const result = await spawnCollect(["script", "-qec", line, "/dev/null"], {
        env: { ...process.env, HOME: home, TRIFORGE_HOME: join(home, "data") },
      });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/downloading \[#+\] [\d.]+\/[\d.]+ MB/);
      expect(result.stdout).toContain(`${pkg.version} -> 9.9.9`);
    },
  );
});
