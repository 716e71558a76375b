import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TARGETS, type Target } from "../build/build.ts";
import { assetName, normalizeVersion, parseSums, render, renderAll } from "../build/render-packaging.ts";
import { ROOT, tempDir } from "./support/helpers.ts";

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
      url: "https://github.com/ilyasmukiev/triforge/releases/download/v1.2.3/triforge-windows-x64.exe#/triforge.exe",
      hash: hashOf("windows-x64"),
    });
  });
});

describe("rendering rules", () => {
  test("a base URL override replaces the GitHub release URL", () => {
    const text = render("{{url:linux-x64}}", { ...release, baseUrl: "http://127.0.0.1:8080/dist/" });
    expect(text).toBe("http://127.0.0.1:8080/dist/triforge-linux-x64");
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
    writeFileSync(join(dir, "SHA256SUMS"), `${hashOf("linux-x64")}  triforge-linux-x64\n`);
    const r = run(["--version", "1.2.3", "--sums", join(dir, "SHA256SUMS"), "--out", join(dir, "out")]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("render-packaging: SHA256SUMS has no entry for triforge-darwin-arm64");
    expect(readdirSync(dir)).toEqual(["SHA256SUMS"]);
  });
});
