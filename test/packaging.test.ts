import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TARGETS, type Target } from "../build/build.ts";
import { binaryName, packageDist } from "../build/package.ts";
import { assetName, normalizeVersion, parseSums, render, renderAll } from "../build/render-packaging.ts";
import { fromTarGz, fromZip, unpackBinary, zip } from "../src/agents/archive.ts";
import { ROOT, tempDir } from "./support/helpers.ts";

const onWindows = process.platform === "win32";

// Two tests spawn bun; bunfig has no test timeout setting.
setDefaultTimeout(30_000);

const targets = Object.keys(TARGETS) as Target[];
/** A distinct, recognisable hash per asset. */
const hashOf = (target: Target) => createHash("sha256").update(target).digest("hex");
const sumsText = `${targets.map((t) => `${hashOf(t)}  ${assetName(t)}`).join("\n")}\n`;
const release = { version: "1.2.3", sums: parseSums(sumsText) };

describe("Homebrew formula", () => {
  const formula = renderAll(release).get("triforge.rb")!;

  test("pins the version and each macOS/Linux asset's URL and hash", () => {
    expect(formula).toContain('version "1.2.3"');
    expect(formula).not.toContain("{{");
    for (const t of targets.filter((t) => !t.startsWith("windows"))) {
      const url = `https://github.com/ilyasmukiev/triforge/releases/download/v1.2.3/${assetName(t)}`;
      // The hash must sit right under its own URL, or Homebrew would check one asset against another's sum.
      expect(formula).toContain(`url "${url}"\n      sha256 "${hashOf(t)}"`);
    }
    expect(formula).not.toContain("windows");
  });

  test("each architecture block holds its own asset", () => {
    const block = (os: string, cpu: string) => {
      const start = formula.indexOf(`on_${os} do`);
      const section = formula.slice(start, formula.indexOf("\n  end\n", start));
      const inner = section.indexOf(`on_${cpu} do`);
      return section.slice(inner, section.indexOf("end", inner));
    };
    expect(block("macos", "arm")).toContain("triforge-darwin-arm64");
    expect(block("macos", "intel")).toContain("triforge-darwin-x64");
    expect(block("linux", "arm")).toContain("triforge-linux-arm64");
    expect(block("linux", "intel")).toContain("triforge-linux-x64");
  });

  test.skipIf(!Bun.which("ruby"))("is valid Ruby", () => {
    const file = join(tempDir(), "triforge.rb");
    writeFileSync(file, formula);
    const check = Bun.spawnSync(["ruby", "-c", file]);
    expect(check.stderr.toString()).toBe("");
    expect(check.stdout.toString()).toContain("Syntax OK");
  });
});

describe("Scoop manifest", () => {
  const manifest = JSON.parse(renderAll(release).get("triforge.json")!);

  test("points at the Windows asset with its hash, installed as triforge.exe", () => {
    expect(manifest.version).toBe("1.2.3");
    expect(manifest.license).toBe("Apache-2.0");
    expect(manifest.bin).toBe("triforge.exe");
    expect(manifest.architecture["64bit"]).toEqual({
      url: "https://github.com/ilyasmukiev/triforge/releases/download/v1.2.3/triforge-windows-x64.zip",
      hash: hashOf("windows-x64"),
    });
  });
});

describe("rendering rules", () => {
  test("a base URL override replaces the GitHub release URL", () => {
    const text = render("{{url:linux-x64}}", { ...release, baseUrl: "http://127.0.0.1:8080/dist/" });
    expect(text).toBe("http://127.0.0.1:8080/dist/triforge-linux-x64.tar.gz");
  });

  test("a target missing from SHA256SUMS is an error naming the asset", () => {
    const partial = parseSums(
      sumsText
        .split("\n")
        .filter((l) => !l.includes("darwin-arm64"))
        .join("\n"),
    );
    expect(() => renderAll({ version: "1.2.3", sums: partial })).toThrow(
      "SHA256SUMS has no entry for triforge-darwin-arm64",
    );
  });

  test("unknown placeholders are errors, not left in the output", () => {
    expect(() => render("{{url:plan9-mips}}", release)).toThrow("unknown placeholder {{url:plan9-mips}}");
    expect(() => render("{{checksum:linux-x64}}", release)).toThrow("unknown placeholder");
  });

  test("versions: a tag's leading v is dropped; anything not x.y.z[-pre] is refused", () => {
    expect(normalizeVersion("v0.2.0")).toBe("0.2.0");
    expect(normalizeVersion("1.0.0-rc.1")).toBe("1.0.0-rc.1");
    expect(() => normalizeVersion("main")).toThrow("not a release version");
    expect(() => normalizeVersion('1.0.0"; system "rm')).toThrow("not a release version");
  });

  test("SHA256SUMS: binary-mode names are accepted, malformed lines refused", () => {
    expect(parseSums(`${"A".repeat(64)} *triforge-linux-x64\n`).get("triforge-linux-x64")).toBe(
      "a".repeat(64),
    );
    expect(() => parseSums("deadbeef  triforge-linux-x64\n")).toThrow("line 1");
  });
});

describe("bun run build/render-packaging.ts", () => {
  const run = (args: string[]) => {
    const proc = Bun.spawnSync(["bun", "run", join(ROOT, "build/render-packaging.ts"), ...args]);
    return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
  };

  test("writes both files from a release's SHA256SUMS", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "SHA256SUMS"), sumsText);
    const r = run(["--version", "v1.2.3", "--sums", join(dir, "SHA256SUMS"), "--out", join(dir, "out")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(readdirSync(join(dir, "out")).sort()).toEqual(["triforge.json", "triforge.rb"]);
    expect(readFileSync(join(dir, "out", "triforge.rb"), "utf8")).toBe(
      renderAll(release).get("triforge.rb")!,
    );
  });

  test("fails with one line and writes nothing when a sum is missing", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "SHA256SUMS"), `${hashOf("linux-x64")}  triforge-linux-x64.tar.gz\n`);
    const r = run(["--version", "1.2.3", "--sums", join(dir, "SHA256SUMS"), "--out", join(dir, "out")]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      "render-packaging: SHA256SUMS has no entry for triforge-darwin-arm64.tar.gz",
    );
    expect(readdirSync(dir)).toEqual(["SHA256SUMS"]);
  });
});

describe("build/package.ts: the compressed release assets", () => {
  /** A dist/ with a small stand-in for every target's binary (distinct bytes, compressible like code). */
  function fakeDist(): { dir: string; binaries: Map<Target, Buffer> } {
    const dir = tempDir();
    const binaries = new Map<Target, Buffer>();
    for (const t of targets) {
      const bytes = Buffer.from(`#!/bin/sh\necho 'triforge 1.2.3 ${t}'\n${"x".repeat(10_000)}\n`);
      binaries.set(t, bytes);
      writeFileSync(join(dir, binaryName(t)), bytes);
    }
    return { dir, binaries };
  }

  test("packs each binary; tar and unzip give back its bytes, executable; SHA256SUMS covers the archives", () => {
    const { dir, binaries } = fakeDist();
    const sums = parseSums(`${packageDist(dir).join("\n")}\n`);
    expect([...sums.keys()].sort()).toEqual(targets.map(assetName).sort());
    for (const t of targets) {
      const archive = readFileSync(join(dir, assetName(t)));
      expect(sums.get(assetName(t))).toBe(createHash("sha256").update(archive).digest("hex"));
      expect(archive.length).toBeLessThan(binaries.get(t)!.length / 10);
      const out = join(tempDir(), "out");
      mkdirSync(out);
      const unpack = t.startsWith("windows")
        ? Bun.spawnSync(["unzip", "-q", join(dir, assetName(t)), "-d", out])
        : Bun.spawnSync(["tar", "-xzf", join(dir, assetName(t)), "-C", out]);
      expect(unpack.exitCode).toBe(0);
      const name = t.startsWith("windows") ? "triforge.exe" : "triforge";
      expect(readdirSync(out)).toEqual([name]);
      expect(readFileSync(join(out, name)).equals(binaries.get(t)!)).toBe(true);
      if (!onWindows) expect(statSync(join(out, name)).mode & 0o111).toBe(0o111);
      expect(Buffer.from(unpackBinary(t, archive)).equals(binaries.get(t)!)).toBe(true);
    }
    // The same binaries give the same archives: the sums of a rebuilt release do not drift.
    expect(packageDist(dir)).toEqual(packageDist(dir));
  });

  test("reads what the system's tar and zip write, and refuses a damaged zip by its CRC", () => {
    const dir = tempDir();
    const bytes = Buffer.from(`binary ${"y".repeat(5000)}`);
    writeFileSync(join(dir, "triforge"), bytes);
    writeFileSync(join(dir, "triforge.exe"), bytes);
    expect(Bun.spawnSync(["tar", "-czf", join(dir, "a.tar.gz"), "-C", dir, "triforge"]).exitCode).toBe(0);
    expect(Bun.spawnSync(["zip", "-qj", join(dir, "a.zip"), join(dir, "triforge.exe")]).exitCode).toBe(0);
    expect(Buffer.from(fromTarGz(readFileSync(join(dir, "a.tar.gz")), "triforge")).equals(bytes)).toBe(true);
    const zipped = readFileSync(join(dir, "a.zip"));
    expect(Buffer.from(fromZip(zipped, "triforge.exe")).equals(bytes)).toBe(true);
    const damaged = Buffer.from(zip("triforge.exe", bytes));
    damaged[30 + "triforge.exe".length + 2] ^= 0xff; // inside the deflated data, after the local header
    expect(() => fromZip(damaged, "triforge.exe")).toThrow();
    expect(() => fromTarGz(readFileSync(join(dir, "a.tar.gz")), "other")).toThrow(
      "the archive holds no other",
    );
  });

  test("with no binaries in dist it fails with one line", () => {
    const dir = tempDir();
    const proc = Bun.spawnSync(["bun", "run", join(ROOT, "build/package.ts"), "--dist", dir]);
    expect(proc.exitCode).toBe(1);
    expect(proc.stderr.toString().trim()).toBe(
      `package: no triforge binaries in ${dir}; run 'bun run build' first`,
    );
  });
});
