import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { TARGETS, type Target } from "../build/build.ts";
import { compiledBinary, ROOT, runBinary, SHARED, spawnCollect, tempDir } from "./support/helpers.ts";

// Building all five targets takes a while on a small, busy machine; bunfig has no test timeout setting.
setDefaultTimeout(180_000);

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function addonPath(target: Target): string {
  const suffix = TARGETS[target].addon;
  return join(ROOT, "node_modules/@anush008", `tokenizers-${suffix}`, `tokenizers.${suffix}.node`);
}

/** 256 bytes from the middle of a target's addon: present in a binary only if that addon is embedded. */
function addonSignature(target: Target): Buffer {
  const bytes = readFileSync(addonPath(target));
  const middle = Math.floor(bytes.length / 2);
  return bytes.subarray(middle, middle + 256);
}

/** The executable format and CPU a file header declares, e.g. `elf-x64`, `macho-arm64`, `pe-x64`. */
function executableKind(file: string): string {
  const head = readFileSync(file).subarray(0, 4096);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (head.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) {
    const machine = view.getUint16(18, true);
    return `elf-${machine === 0x3e ? "x64" : machine === 0xb7 ? "arm64" : machine}`;
  }
  if (view.getUint32(0, true) === 0xfeedfacf) {
    const cpu = view.getUint32(4, true);
    return `macho-${cpu === 0x01000007 ? "x64" : cpu === 0x0100000c ? "arm64" : cpu}`;
  }
  if (head[0] === 0x4d && head[1] === 0x5a) {
    const pe = view.getUint32(0x3c, true);
    return `pe-${view.getUint16(pe + 4, true) === 0x8664 ? "x64" : "other"}`;
  }
  return "unknown";
}

const EXPECTED_KIND: Record<Target, string> = {
  "linux-x64": "elf-x64",
  "linux-arm64": "elf-arm64",
  "darwin-x64": "macho-x64",
  "darwin-arm64": "macho-arm64",
  "windows-x64": "pe-x64",
};

describe("a binary copied alone into an empty folder", () => {
  const folder = tempDir();
  const home = tempDir();

  async function lonely(args: string[]) {
    const binary = join(folder, "triforge");
    if (!existsSync(binary)) copyFileSync(await compiledBinary(), binary);
    // Run the copy, from its own folder: nothing of the checkout or ../shared is reachable by path.
    return spawnCollect([binary, ...args], {
      cwd: folder,
      env: { PATH: "/usr/bin:/bin", HOME: home, USERPROFILE: home, TRIFORGE_HOME: join(home, "data") },
    });
  }

  test("embeds with its built-in model and extracts the weights to the cache once", async () => {
    expect(readdirSync(folder)).toEqual([]);
    const first = await lonely(["embed", "--verbose", "hello world"]);
    expect(first.stderr).toBe("model potion-base-2M-int8, dimension 64\n");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toHaveLength(64);

    const weights = readFileSync(join(SHARED, "models/potion-base-2M-int8/model.safetensors"));
    const cached = join(home, "data/cache/models", `potion-base-2M-int8-${sha256(weights).slice(0, 12)}`);
    const extracted = join(cached, "model.safetensors");
    expect(sha256(readFileSync(extracted))).toBe(sha256(weights));
    const extractedAt = statSync(extracted).mtimeMs;

    const second = await lonely(["embed", "hello world"]);
    expect(second.stdout).toBe(first.stdout);
    expect(statSync(extracted).mtimeMs).toBe(extractedAt);
    expect(readdirSync(cached)).toEqual(["model.safetensors"]);
    expect(readdirSync(folder)).toEqual(["triforge"]);
  });

  test("--version --verbose names the embedded model", async () => {
    const { code, stdout } = await lonely(["--version", "--verbose"]);
    expect(code).toBe(0);
    expect(stdout).toContain("model potion-base-2M-int8 (dimension 64) from potion-base-2M-int8 (embedded)");
  });
});

const missingAddons = (Object.keys(TARGETS) as Target[]).filter((t) => !existsSync(addonPath(t)));
if (missingAddons.length) {
  console.warn(
    `build.test: cross-target checks skipped, addons missing for ${missingAddons.join(", ")}: run bun install --os='*' --cpu='*'`,
  );
}

describe.skipIf(missingAddons.length > 0)("bun run build (all five targets)", () => {
  const outdir = tempDir("triforge-dist-");
  let built: Promise<{ code: number; output: string }> | undefined;
  const build = () =>
    (built ??= (async () => {
      const { code, stdout, stderr } = await spawnCollect(
        ["bun", "run", join(ROOT, "build/build.ts"), "--outdir", outdir],
        { cwd: ROOT },
      );
      return { code, output: stdout + stderr };
    })());

  test("writes one binary per target and SHA256SUMS that matches them", async () => {
    const { code, output } = await build();
    expect(output).not.toContain("error");
    expect(code).toBe(0);
    const names = (Object.keys(TARGETS) as Target[]).map(
      (t) => `triforge-${t}${t.startsWith("windows") ? ".exe" : ""}`,
    );
    expect(readdirSync(outdir).sort()).toEqual([...names, "SHA256SUMS"].sort());
    const sums = readFileSync(join(outdir, "SHA256SUMS"), "utf8").trim().split("\n");
    expect(sums).toHaveLength(names.length);
    for (const line of sums) {
      const [hash, name] = line.split("  ");
      expect(names).toContain(name);
      expect(hash).toBe(sha256(readFileSync(join(outdir, name))));
    }
  });

  test.each(Object.keys(TARGETS) as Target[])(
    "%s: right executable format, its own tokenizers addon and no other",
    async (target) => {
      await build();
      const file = join(outdir, `triforge-${target}${target.startsWith("windows") ? ".exe" : ""}`);
      expect(executableKind(file)).toBe(EXPECTED_KIND[target]);
      const binary = readFileSync(file);
      for (const other of Object.keys(TARGETS) as Target[]) {
        const embedded = binary.indexOf(addonSignature(other)) >= 0;
        expect({ addon: TARGETS[other].addon, embedded }).toEqual({
          addon: TARGETS[other].addon,
          embedded: TARGETS[other].addon === TARGETS[target].addon,
        });
      }
      // The model travels inside every binary.
      const weights = readFileSync(join(SHARED, "models/potion-base-2M-int8/model.safetensors"));
      expect(binary.indexOf(weights.subarray(4096, 4096 + 256))).toBeGreaterThan(0);
    },
  );

  const qemu = ["/usr/bin/qemu-aarch64-static", "/usr/bin/qemu-aarch64"].find(existsSync);
  const arm64Libc = "/usr/aarch64-linux-gnu";
  test.skipIf(!qemu || !existsSync(arm64Libc) || process.arch !== "x64")(
    "linux-arm64 runs under qemu-user and embeds like the host binary",
    async () => {
      await build();
      const home = tempDir();
      const folder = tempDir();
      const binary = join(folder, "triforge");
      copyFileSync(join(outdir, "triforge-linux-arm64"), binary);
      const { stdout, stderr, code } = await spawnCollect(
        [qemu!, "-L", arm64Libc, binary, "embed", "database migration"],
        { env: { HOME: home, TRIFORGE_HOME: join(home, "data") } },
      );
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const host = await runBinary(["embed", "database migration"], { home: tempDir() });
      const a = JSON.parse(stdout) as number[];
      const b = JSON.parse(host.stdout) as number[];
      expect(a).toHaveLength(64);
      for (const [i, x] of a.entries()) expect(x).toBeCloseTo(b[i], 6);
    },
  );

  test("an unknown target is refused before anything is built", async () => {
    const scratch = tempDir();
    mkdirSync(scratch, { recursive: true });
    const { code, stderr } = await spawnCollect(
      ["bun", "run", join(ROOT, "build/build.ts"), "--target", "plan9-mips", "--outdir", scratch],
      { cwd: ROOT },
    );
    expect(code).not.toBe(0);
    expect(stderr).toContain("unknown target plan9-mips");
    expect(readdirSync(scratch)).toEqual([]);
  });
});
