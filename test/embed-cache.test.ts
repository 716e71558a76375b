import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBinary, tempDir } from "./support/helpers.ts";

/** The extracted copy of the embedded model is a cache: damage to it is repaired, never fatal. */
describe("the embedded model's extracted cache", () => {
  const home = tempDir();
  const modelsCache = join(home, ".claude", "triforge", "cache", "models");
  const extracted = () => {
    // The extracted model is the one folder; the query tokenizer's vocabulary table sits beside it as a file.
    const [folder] = readdirSync(modelsCache, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    return join(modelsCache, folder.name, "model.safetensors");
  };
  const damage = (from: number, length: number) => {
    const bytes = readFileSync(extracted());
    bytes.fill(0, from, from + length);
    writeFileSync(extracted(), bytes);
  };

  test("a damaged header (same size) is extracted again on the next load", async () => {
    const first = await runBinary(["embed", "release notes"], { home });
    expect(first.code).toBe(0);
    const pristine = readFileSync(extracted());
    damage(0, 200);
    const second = await runBinary(["embed", "release notes"], { home });
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(readFileSync(extracted()).equals(pristine)).toBe(true);
  });

  test("damaged weights that still parse are found and repaired by doctor", async () => {
    const before = await runBinary(["embed", "release notes"], { home });
    const pristine = readFileSync(extracted());
    damage(pristine.length - 4096, 4096);
    const doctor = await runBinary(["doctor", "--json"], { home });
    const cacheCheck = (JSON.parse(doctor.stdout) as { name: string; ok: boolean; detail: string }[]).find(
      (c) => c.name === "model cache",
    );
    expect(cacheCheck?.ok).toBe(true);
    expect(cacheCheck?.detail).toContain("extracted again");
    expect(readFileSync(extracted()).equals(pristine)).toBe(true);
    expect((await runBinary(["embed", "release notes"], { home })).stdout).toBe(before.stdout);
    const again = await runBinary(["doctor", "--json"], { home });
    expect(JSON.parse(again.stdout).find((c: { name: string }) => c.name === "model cache").detail).toContain(
      "intact",
    );
  });
});
