import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexLockPath, projectDataDir, storePath } from "../src/home/paths.ts";
import { tryLock } from "../src/memory/lock.ts";
import { memoryStatus } from "../src/memory/status.ts";
import { tempDir } from "./support/helpers.ts";

/** status must answer at every moment of an indexer's run, including the one where it creates the store. */
describe("memoryStatus while the indexer writes", () => {
  let project: string;
  const previousHome = process.env.TRIFORGE_HOME;
  beforeEach(() => {
    const root = tempDir();
    process.env.TRIFORGE_HOME = join(root, "data");
    project = join(root, "project");
    mkdirSync(join(project, ".triforge"), { recursive: true });
    writeFileSync(
      join(project, ".triforge", "config.json"),
      '{"storage":"local","llm":"none","exclude":[]}\n',
    );
    mkdirSync(projectDataDir(project), { recursive: true });
    // A store file that exists but holds no schema yet: what a reader sees just after the indexer created it.
    writeFileSync(storePath(project), "");
  });
  afterEach(() => {
    process.env.TRIFORGE_HOME = previousHome;
  });

  test("with the index lock held, a half-made store reads as indexing, not as damage", async () => {
    const lock = tryLock(indexLockPath(project), "test indexer");
    expect(lock).toBeDefined();
    try {
      const status = await memoryStatus(project);
      expect(status.indexing).toBe(true);
      expect(status.reason).toStartWith("the indexer is writing");
      expect(status.chunks).toBe(0);
    } finally {
      lock?.release();
    }
  });

  test("with no indexer running, the same store is reported as damaged with the fix", async () => {
    const status = await memoryStatus(project);
    expect(status.indexing).toBe(false);
    expect(status.reason).toStartWith("the memory index is damaged (");
    expect(status.reason).toContain(`run \`triforge index --project ${project}\` to rebuild it`);
  });
});
