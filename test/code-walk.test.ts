import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { walkRepository } from "../src/code/walk.ts";
import { tempDir } from "./support/helpers.ts";

/** Writes files (path → content) under a fresh folder and returns it. */
function repo(files: Record<string, string | Uint8Array>): string {
  const root = tempDir("triforge-walk-");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const paths = (root: string) => walkRepository(root).files.map((f) => f.path);

describe("walking a repository", () => {
  test("honours .gitignore patterns, negations and anchoring", () => {
    const root = repo({
      ".gitignore": "*.log.ts\n!keep.log.ts\n/build/\ngen_*.py\n",
      "a.ts": "export const a = 1;",
      "debug.log.ts": "x",
      "keep.log.ts": "kept",
      "build/out.ts": "built",
      "src/build/real.ts": "real source under a nested build folder",
      "gen_models.py": "generated",
      "src/gen_models.py": "also ignored: unanchored pattern",
    });
    expect(paths(root)).toEqual(["a.ts", "keep.log.ts", "src/build/real.ts"]);
  });

  test("a nested .gitignore adds rules for its folder and can re-include what a parent ignored", () => {
    const root = repo({
      ".gitignore": "*.py\n",
      "top.py": "ignored",
      "pkg/.gitignore": "!*.py\nsecret.py\n",
      "pkg/mod.py": "re-included by the nested negation",
      "pkg/secret.py": "ignored by the nested file",
      "other/mod.py": "still ignored",
    });
    expect(paths(root)).toEqual(["pkg/mod.py"]);
    expect(walkRepository(root).skipped.ignored).toBe(3);
  });

  test("nothing inside an ignored folder can be re-included, as in git", () => {
    const root = repo({
      ".gitignore": "vendor/\n!vendor/keep.go\n",
      "vendor/keep.go": "x",
      "main.go": "package main",
    });
    expect(paths(root)).toEqual(["main.go"]);
  });

  test(".triforgeignore excludes beyond .gitignore and wins over it in the same folder", () => {
    const root = repo({
      ".gitignore": "*.rb\n",
      ".triforgeignore": "fixtures/\n!special.rb\n",
      "special.rb": "re-included",
      "other.rb": "ignored",
      "fixtures/data.ts": "excluded from search only",
      "lib.ts": "x",
    });
    expect(paths(root)).toEqual(["lib.ts", "special.rb"]);
  });

  test("VCS and dependency folders are skipped without any ignore file", () => {
    const root = repo({
      ".git/config.ts": "x",
      "node_modules/dep/index.js": "x",
      ".venv/lib/site.py": "x",
      "__pycache__/m.py": "x",
      "app.js": "x",
    });
    expect(paths(root)).toEqual(["app.js"]);
  });

  test("files over 1 MB, lock files and unknown types are skipped and counted", () => {
    const root = repo({
      "big.ts": "x".repeat(1_000_001),
      "package-lock.json": "{}",
      "yarn.lock": "x",
      "bundle.min.js": "x",
      "image.png": new Uint8Array([137, 80, 78, 71]),
      "ok.ts": "x",
    });
    const { files, skipped } = walkRepository(root);
    expect(files.map((f) => f.path)).toEqual(["ok.ts"]);
    expect(skipped.tooLarge).toBe(1);
    expect(skipped.lockFiles).toBe(3);
    expect(skipped.unsupported).toBe(1);
  });

  test("symbolic links are never followed, so nothing outside the root is indexed", () => {
    const outside = repo({ "secret.ts": "export const outsideSecret = 1;", "dir/inner.ts": "x" });
    const root = repo({ "main.ts": "x" });
    symlinkSync(join(outside, "secret.ts"), join(root, "link.ts"));
    symlinkSync(join(outside, "dir"), join(root, "linked-dir"));
    symlinkSync(root, join(root, "loop"));
    const { files, skipped } = walkRepository(root);
    expect(files.map((f) => f.path)).toEqual(["main.ts"]);
    expect(skipped.symlinks).toBe(3);
  });

  test("a FIFO is not opened (reading it would block) and extension-less scripts are recognised by shebang", () => {
    const root = repo({ tool: "#!/usr/bin/env bash\necho hi\n", LICENSE: "MIT License" });
    Bun.spawnSync(["mkfifo", join(root, "pipe.ts")]);
    const { files } = walkRepository(root);
    expect(files.map((f) => [f.path, f.language.language])).toEqual([["tool", "bash"]]);
  });

  test("the walk stops at a cap of files, of bytes or of time, says which, and keeps the same first files", () => {
    const root = repo(
      Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`d${i % 3}/f${String(i).padStart(2, "0")}.ts`, "x".repeat(10)]),
      ),
    );
    const all = walkRepository(root).files.map((f) => f.path);
    expect(all).toHaveLength(12);
    const byFiles = walkRepository(root, { maxFiles: 5 });
    expect(byFiles.capped).toBe("files");
    expect(byFiles.files.map((f) => f.path)).toEqual(all.slice(0, 5));
    const byBytes = walkRepository(root, { maxBytes: 35 });
    expect(byBytes.capped).toBe("bytes");
    expect(byBytes.files.map((f) => f.path)).toEqual(all.slice(0, 3));
    const byTime = walkRepository(root, { deadline: performance.now() - 1 });
    expect(byTime).toMatchObject({ files: [], capped: "seconds" });
    expect(walkRepository(root, { maxFiles: 12, maxBytes: 120 }).capped).toBeUndefined();
  });
});
