import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostTarget } from "../build/build.ts";
import pkg from "../package.json" with { type: "json" };
import { packBinary, releaseAsset, tarGz } from "../src/agents/archive.ts";
import { assetName } from "../build/render-packaging.ts";
import { compiledBinary, ROOT, spawnCollect, tempDir } from "./support/helpers.ts";

// The first test builds the binary it serves; bunfig has no test timeout setting.
setDefaultTimeout(60_000);

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const INSTALL_SH = join(ROOT, "install.sh");
const INSTALL_PS1 = join(ROOT, "install.ps1");
const onWindows = process.platform === "win32";
const host = hostTarget();
const hostAsset = releaseAsset(host);
const bareHostAsset = `triforge-${host}${onWindows ? ".exe" : ""}`;

/**
 * Release folders shaped like a published release (compressed assets + SHA256SUMS over them), served on
 * 127.0.0.1 under /<release>/. `good`: the host binary and a small stand-in for another platform, packed
 * as build/package.ts packs them; `tampered`: the host archive with one byte changed after its sum was
 * taken; `unlisted`: SHA256SUMS without the host asset; `legacy`: the bare binary, as releases before the
 * archives published it; `hollow`: a verified archive that holds no triforge.
 */
const releases = tempDir("triforge-releases-");
const requests: string[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const path = decodeURIComponent(new URL(request.url).pathname);
    requests.push(path);
    const file = join(releases, path);
    if (path.includes("..") || !existsSync(file)) return new Response("Not Found", { status: 404 });
    return new Response(Bun.file(file));
  },
});
afterAll(() => server.stop(true));

let prepared: Promise<Buffer> | undefined;
function prepareReleases(): Promise<Buffer> {
  prepared ??= (async () => {
    const binary = readFileSync(await compiledBinary());
    const standIn = Buffer.from("#!/bin/sh\nexit 3\n");
    const write = (release: string, assets: Record<string, Buffer>, sums: Record<string, Buffer>) => {
      mkdirSync(join(releases, release), { recursive: true });
      for (const [name, bytes] of Object.entries(assets)) writeFileSync(join(releases, release, name), bytes);
      const lines = Object.entries(sums).map(([name, bytes]) => `${sha256(bytes)}  ${name}`);
      writeFileSync(join(releases, release, "SHA256SUMS"), `${lines.join("\n")}\n`);
    };
    const packed = Buffer.from(packBinary(host, binary));
    const assets = {
      [hostAsset]: packed,
      "triforge-darwin-arm64.tar.gz": Buffer.from(packBinary("darwin-arm64", standIn)),
    };
    write("good", assets, assets);
    const tampered = Buffer.from(packed);
    tampered[tampered.length >> 1] ^= 0xff;
    write("tampered", { ...assets, [hostAsset]: tampered }, assets);
    write("unlisted", assets, { "triforge-darwin-arm64.tar.gz": assets["triforge-darwin-arm64.tar.gz"] });
    write("legacy", { [bareHostAsset]: binary }, { [bareHostAsset]: binary });
    const hollow = Buffer.from(tarGz("README", Buffer.from("no binary in here\n")));
    write("hollow", { [hostAsset]: hollow }, { [hostAsset]: hollow });
    return binary;
  })();
  return prepared;
}

/** A folder of fake commands put first on PATH (e.g. a `uname` that reports another platform). */
function fakeBin(commands: Record<string, string>): string {
  const dir = tempDir("triforge-fakebin-");
  for (const [name, script] of Object.entries(commands)) {
    writeFileSync(join(dir, name), `#!/bin/sh\n${script}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

async function runInstallSh(env: Record<string, string>, pathPrefix?: string) {
  const home = tempDir();
  const tmp = join(home, "tmp");
  mkdirSync(tmp);
  const { stdout, stderr, code } = await spawnCollect(["sh", INSTALL_SH], {
    env: {
      HOME: home,
      TMPDIR: tmp,
      PATH: `${pathPrefix ? `${pathPrefix}:` : ""}${process.env.PATH}`,
      TRIFORGE_INSTALL_DIR: join(home, "bin"),
      ...env,
    },
  });
  return { stdout, stderr, code, home, bin: join(home, "bin"), tmp };
}

const url = (release: string) => `http://127.0.0.1:${server.port}/${release}`;

describe.skipIf(onWindows)("install.sh against a local release server", () => {
  test("downloads the host's asset, verifies it and installs a working binary", async () => {
    const binary = await prepareReleases();
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("good") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const installed = join(r.bin, "triforge");
    expect(readFileSync(installed).equals(binary)).toBe(true);
    expect(readdirSync(r.bin)).toEqual(["triforge"]);
    expect(readdirSync(r.tmp)).toEqual([]); // the download folder is cleaned up
    expect(r.stdout).toContain(`Downloading ${hostAsset} (latest) from ${url("good")}`);
    expect(r.stdout).toMatch(/Installed triforge \d+\.\d+\.\d+ to /);
    expect(r.stdout).toContain(`${r.bin} is not on your PATH`);
    expect(r.stdout).toContain(`Next: run \`'${installed}' install\``);
    const run = Bun.spawnSync([installed, "--version"], { env: { HOME: r.home } });
    expect(run.stdout.toString()).toMatch(/^triforge \d+\.\d+\.\d+/);
  });

  test("on PATH, the next step names the bare command", async () => {
    await prepareReleases();
    const home = tempDir();
    const bin = join(home, "bin");
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("good"), TRIFORGE_INSTALL_DIR: bin }, bin);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("is not on your PATH");
    expect(r.stdout).toContain("Next: run `triforge install`");
  });

  test("an install folder with a space and a quote: the printed next step runs as pasted", async () => {
    await prepareReleases();
    const home = tempDir();
    const bin = join(home, "my tools", "it's");
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("good"), TRIFORGE_INSTALL_DIR: bin });
    expect(r.code).toBe(0);
    const next = r.stdout.match(/Next: run `(.+)` to connect/)?.[1];
    expect(next).toBeDefined();
    // Run the printed command under sh, with the subcommand swapped for a harmless one.
    const ran = Bun.spawnSync(["sh", "-c", next!.replace(/ install$/, " --version")], {
      env: { HOME: home },
    });
    expect(ran.exitCode).toBe(0);
    expect(ran.stdout.toString()).toMatch(/^triforge \d+\.\d+\.\d+/);
  });

  test("a tampered asset is refused and nothing is installed", async () => {
    await prepareReleases();
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("tampered") });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`checksum mismatch for ${hostAsset}`);
    expect(r.stderr).toContain("refusing to install");
    expect(existsSync(join(r.bin, "triforge"))).toBe(false);
    expect(readdirSync(r.tmp)).toEqual([]);
  });

  test("a tampered asset does not replace an existing install", async () => {
    await prepareReleases();
    const home = tempDir();
    const bin = join(home, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "triforge"), "previous version");
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("tampered"), TRIFORGE_INSTALL_DIR: bin });
    expect(r.code).toBe(1);
    expect(readFileSync(join(bin, "triforge"), "utf8")).toBe("previous version");
  });

  test("an upgrade replaces the old binary in place and leaves no temporary file", async () => {
    const binary = await prepareReleases();
    const home = tempDir();
    const bin = join(home, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "triforge"), "previous version");
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("good"), TRIFORGE_INSTALL_DIR: bin });
    expect(r.code).toBe(0);
    expect(readFileSync(join(bin, "triforge")).equals(binary)).toBe(true);
    expect(readdirSync(bin)).toEqual(["triforge"]);
  });

  test("a release from before the archives (the bare binary) still installs", async () => {
    const binary = await prepareReleases();
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("legacy") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Downloading ${bareHostAsset} (latest)`);
    expect(readFileSync(join(r.bin, "triforge")).equals(binary)).toBe(true);
  });

  test("a verified archive without the binary in it is refused", async () => {
    await prepareReleases();
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("hollow") });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${hostAsset} holds no triforge binary: refusing to install`);
    expect(existsSync(join(r.bin, "triforge"))).toBe(false);
  });

  test("TRIFORGE_VERSION names what must be installed: another version is refused, the same one installs", async () => {
    await prepareReleases();
    const home = tempDir();
    const bin = join(home, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "triforge"), "previous version");
    const wrong = await runInstallSh({
      TRIFORGE_DOWNLOAD_URL: url("good"),
      TRIFORGE_VERSION: "9.9.9",
      TRIFORGE_INSTALL_DIR: bin,
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      `asked for 9.9.9, but ${url("good")} holds ${pkg.version}: refusing to install`,
    );
    expect(readFileSync(join(bin, "triforge"), "utf8")).toBe("previous version");
    const right = await runInstallSh({
      TRIFORGE_DOWNLOAD_URL: url("good"),
      TRIFORGE_VERSION: `v${pkg.version}`,
    });
    expect(right.code).toBe(0);
    expect(right.stdout).toContain(`Installed triforge ${pkg.version} to `);
  });

  test("a version GitHub has no release of is named as such", async () => {
    // A curl that fails as GitHub's 404 does: no request leaves the machine.
    const curl = fakeBin({ curl: "exit 22" });
    const r = await runInstallSh({ TRIFORGE_VERSION: "9.9.9" }, curl);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "no triforge release 9.9.9 at https://github.com/ilyasmukiev/triforge/releases/download/v9.9.9",
    );
  });

  test("another triforge earlier on PATH is pointed out, and the next step names the new one by its path", async () => {
    await prepareReleases();
    const home = tempDir();
    const bin = join(home, "bin");
    const older = fakeBin({ triforge: "echo 'triforge 0.0.1'" });
    const r = await runInstallSh(
      { TRIFORGE_DOWNLOAD_URL: url("good"), TRIFORGE_INSTALL_DIR: bin },
      `${older}:${bin}`,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `warning: ${join(older, "triforge")} comes first on your PATH, so \`triforge\` runs it (triforge 0.0.1), not the one just installed.`,
    );
    expect(r.stdout).toContain(`Remove it, or put ${bin} before ${older} in PATH.`);
    expect(r.stdout).toContain(`Next: run \`'${join(bin, "triforge")}' install\``);
  });

  test.skipIf(!Bun.which("script"))(
    "on a terminal the download shows a progress bar; piped it stays silent",
    async () => {
      await prepareReleases();
      const home = tempDir();
      const line = `sh '${INSTALL_SH}'`;
      const env = {
        ...process.env,
        HOME: home,
        TRIFORGE_INSTALL_DIR: join(home, "bin"),
        TRIFORGE_DOWNLOAD_URL: url("good"),
      };
      const tty = await spawnCollect(["script", "-qec", line, "/dev/null"], { env });
      expect(tty.code).toBe(0);
      expect(tty.stdout).toMatch(/#{10,}.*100[.,]0%/);
      const piped = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("good") });
      expect(piped.stdout + piped.stderr).not.toContain("100.0%");
    },
  );

  test("an asset missing from SHA256SUMS is refused", async () => {
    await prepareReleases();
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("unlisted") });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`SHA256SUMS has no entry for ${hostAsset}`);
    expect(existsSync(join(r.bin, "triforge"))).toBe(false);
  });

  test("an unreachable release is a clear error", async () => {
    await prepareReleases();
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("no-such-release") });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot download ${url("no-such-release")}/SHA256SUMS`);
  });

  test("the OS and processor pick the asset (macOS on Apple silicon)", async () => {
    await prepareReleases();
    const uname = fakeBin({ uname: 'case "$1" in -s) echo Darwin ;; -m) echo arm64 ;; esac' });
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("good") }, uname);
    expect(r.code).toBe(0);
    expect(requests).toContain("/good/triforge-darwin-arm64.tar.gz");
    // The stand-in asset does not run: the installer says so instead of claiming success.
    expect(r.stdout).toContain("warning: it did not run here");
  });

  test.each([
    ["FreeBSD", "amd64", "no triforge build for FreeBSD"],
    ["Linux", "riscv64", "no triforge build for the riscv64 processor"],
    ["MINGW64_NT-10.0", "x86_64", "install.ps1"],
  ])("%s on %s is refused before downloading", async (os, arch, says) => {
    const uname = fakeBin({ uname: `case "$1" in -s) echo ${os} ;; -m) echo ${arch} ;; esac` });
    const before = requests.length;
    const r = await runInstallSh({ TRIFORGE_DOWNLOAD_URL: url("good") }, uname);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(says);
    expect(requests.length).toBe(before);
  });

  test.each([
    ["", "https://github.com/ilyasmukiev/triforge/releases/latest/download/SHA256SUMS"],
    ["0.3.1", "https://github.com/ilyasmukiev/triforge/releases/download/v0.3.1/SHA256SUMS"],
    ["v0.3.1", "https://github.com/ilyasmukiev/triforge/releases/download/v0.3.1/SHA256SUMS"],
  ])("TRIFORGE_VERSION=%p downloads from GitHub releases", async (version, expected) => {
    // A curl that records its arguments and fails: no request leaves the machine.
    const dir = tempDir();
    const log = join(dir, "curl.log");
    const curl = fakeBin({ curl: `echo "$@" >> "${log}"; exit 22` });
    const r = await runInstallSh(version ? { TRIFORGE_VERSION: version } : {}, curl);
    expect(r.code).toBe(1);
    expect(readFileSync(log, "utf8")).toContain(expected);
  });

  test("is POSIX sh: dash parses it and shellcheck (when installed) finds nothing", () => {
    const dash = Bun.spawnSync(["sh", "-n", INSTALL_SH]);
    expect(dash.stderr.toString()).toBe("");
    expect(dash.exitCode).toBe(0);
    if (Bun.which("shellcheck")) {
      const check = Bun.spawnSync(["shellcheck", "-s", "sh", INSTALL_SH]);
      expect(check.stdout.toString()).toBe("");
      expect(check.exitCode).toBe(0);
    }
  });
});

describe("install.ps1 without PowerShell", () => {
  /** Parses PowerShell with the tree-sitter grammar code search already ships; true when the tree has errors. */
  async function hasSyntaxErrors(source: string): Promise<boolean> {
    const { Language, Parser } = await import("web-tree-sitter");
    await Parser.init();
    const grammar = join(ROOT, "node_modules/@vscode/tree-sitter-wasm/wasm/tree-sitter-powershell.wasm");
    const parser = new Parser();
    parser.setLanguage(await Language.load(grammar));
    return parser.parse(source)!.rootNode.hasError;
  }

  test("parses as PowerShell (and a broken copy does not)", async () => {
    const source = readFileSync(INSTALL_PS1, "utf8");
    expect(await hasSyntaxErrors(source)).toBe(false);
    expect(
      await hasSyntaxErrors(
        source.replace("function Install-Triforge {", "function Install-Triforge {{ if ("),
      ),
    ).toBe(true);
  });

  test("asks for the asset name the build produces for Windows", () => {
    expect(readFileSync(INSTALL_PS1, "utf8")).toContain(`$asset = '${assetName("windows-x64")}'`);
  });
});

const pwsh = Bun.which("pwsh");
if (!pwsh) console.warn("install.test: pwsh is not installed: install.ps1 is checked in CI on Windows only");

describe.skipIf(!pwsh)("install.ps1", () => {
  test("parses without errors", () => {
    const check = Bun.spawnSync([
      pwsh!,
      "-NoProfile",
      "-Command",
      `$errors = $null; [void][System.Management.Automation.Language.Parser]::ParseFile('${INSTALL_PS1}', [ref]$null, [ref]$errors); if ($errors) { $errors | ForEach-Object { $_.ToString() }; exit 1 }`,
    ]);
    expect(check.stdout.toString()).toBe("");
    expect(check.exitCode).toBe(0);
  });

  test.skipIf(!onWindows)("installs the verified binary and refuses a tampered one", async () => {
    const binary = await prepareReleases();
    const home = tempDir();
    const run = (release: string) =>
      Bun.spawnSync([pwsh!, "-NoProfile", "-File", INSTALL_PS1], {
        env: {
          ...process.env,
          TRIFORGE_DOWNLOAD_URL: url(release),
          TRIFORGE_INSTALL_DIR: join(home, "bin"),
          TRIFORGE_NO_MODIFY_PATH: "1",
        },
      });
    const tampered = run("tampered");
    expect(tampered.exitCode).toBe(1);
    expect(tampered.stderr.toString()).toContain("checksum mismatch");
    expect(existsSync(join(home, "bin", "triforge.exe"))).toBe(false);

    const good = run("good");
    expect(good.exitCode).toBe(0);
    expect(readFileSync(join(home, "bin", "triforge.exe")).equals(binary)).toBe(true);
    expect(good.stdout.toString()).toContain("install' to connect triforge");
  });
});
