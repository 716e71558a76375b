/**
 * `triforge migrate` between the local store and InsForge (the contract server): a really indexed store
 * copied through InsForge's raw SQL endpoint and verified by count and SHA-256 per table; a server killed
 * half-way through the copy switches nothing and changes no source byte, and the next run copies only
 * the rest; the way back rebuilds a local store equal to the original.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { storePath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { readProjectConfig } from "../src/project/config.ts";
import { InsforgeClient } from "../src/store/insforge-client.ts";
import { InsforgeMemoryStore } from "../src/store/insforge.ts";
import { migrateStore } from "../src/store/migrate.ts";
import { StoreUnavailableError } from "../src/store/pg-client.ts";
import { storageTarget } from "../src/store/settings.ts";
import { SqliteMemoryStore } from "../src/store/sqlite.ts";
import { type FakeInsforge, startFakeInsforge } from "./support/fakes/insforge.ts";
import { compiledBinary, failure, spawnCollect } from "./support/helpers.ts";
import { appendRecords, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";
import { expectCopyResumed, fileHash, indexedSource, type SourceSnapshot } from "./support/migrate-source.ts";

const home = memoryHome();

describe("migrate local ⇄ insforge (contract server)", () => {
  let fake: FakeInsforge;
  let root: string;
  let original: SourceSnapshot;
  let originalHash: string;
  const name = `migrate-insforge-${process.pid}-${Date.now()}`;
  const client = () =>
    new InsforgeClient({ baseUrl: fake.url, apiKey: fake.apiKey }, { backoffMs: 20, retries: 2 });
  const options = () => ({ connect: async () => client(), writer: "laptop:/p", onTable: () => {} });
  const env = () => ({ INSFORGE_BASE_URL: fake.url, INSFORGE_API_KEY: fake.apiKey });

  beforeAll(async () => {
    fake = await startFakeInsforge();
    ({ root, original, originalHash } = await indexedSource(home, name));
  }, 120_000);
  afterAll(async () => {
    await fake?.close();
  });

  test("a server killed half-way through the copy switches nothing and changes no source byte; the next run resumes and verifies", async () => {
    const from = storageTarget("local", readProjectConfig(root), root);
    const to = storageTarget("insforge", readProjectConfig(root), root, env());
    let inserts = 0;
    fake.dropNext({ ran: false, when: (q) => /^\s*INSERT/i.test(q) && ++inserts > 3 });
    const error = await failure(() => migrateStore(root, storePath(root), from, to, options()));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).not.toContain(fake.apiKey);
    expect(readProjectConfig(root).storage).toBe("local");
    expect(fileHash(storePath(root))).toBe(originalHash);

    fake.restart();
    const config = await expectCopyResumed(
      (onTable) => migrateStore(root, storePath(root), from, to, { ...options(), onTable }),
      { root, original, originalHash },
      "insforge",
      name,
    );
    expect(JSON.stringify(config)).not.toContain(fake.apiKey);

    const store = await InsforgeMemoryStore.open(client(), { project: name, writer: "laptop:/p" });
    expect(await store.snapshot()).toEqual(original);
    expect((await store.state()).offset).toBeGreaterThan(0);
    await store.closeAsync();
  }, 120_000);

  test("back to local: the copy replaces the store and equals the original; the next index adds nothing", async () => {
    const from = storageTarget("insforge", readProjectConfig(root), root, env());
    await migrateStore(root, storePath(root), from, { kind: "local" }, options());
    expect(readProjectConfig(root).storage).toBe("local");
    expect(fileHash(`${storePath(root)}.before-migrate`)).toBe(originalHash);
    const store = new SqliteMemoryStore(storePath(root));
    const { generation: _g, ...snapshot } = await store.snapshot();
    const { generation: _o, ...expected } = original;
    expect(snapshot).toEqual(expected);
    store.close();
    const again = await indexProject(root, { llm: null });
    expect(again.chunks).toBe(0);
  }, 120_000);
});

describe("triforge migrate --to=insforge (the CLI, contract server)", () => {
  let fake: FakeInsforge;
  beforeAll(async () => {
    fake = await startFakeInsforge();
  }, 60_000);
  afterAll(async () => {
    await fake?.close();
  });
  /** The CLI: the compiled binary when TRIFORGE_TEST_BINARY names one, else the sources. */
  const cli = async (root: string, env: Record<string, string>) =>
    spawnCollect(
      [
        ...(process.env.TRIFORGE_TEST_BINARY ? [await compiledBinary()] : [process.execPath, "src/index.ts"]),
        "migrate",
        "--to=insforge",
        "--project",
        root,
      ],
      { env: { ...process.env, ...env }, cwd: `${import.meta.dir}/..` },
    );

  test("a wrong key: one line that names the server, never the key; the config unchanged", async () => {
    const root = home.project(`cli-wrong-key-${process.pid}`);
    appendRecords(root, syntheticConversation(1, 2, "key"));
    await indexProject(root, { llm: null });
    const wrong = "ik_wrong0123456789abcdef";
    const result = await cli(root, { INSFORGE_BASE_URL: fake.url, INSFORGE_API_KEY: wrong });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain(wrong);
    expect(result.stderr.trim().split("\n")).toEqual([
      `triforge migrate: insforge at ${fake.url}: the API key was refused (Invalid API key); set INSFORGE_API_KEY to the project's admin key. Nothing was switched; run it again to resume.`,
    ]);
    expect(readProjectConfig(root).storage).toBe("local");
  }, 60_000);

  test("copies, verifies and switches; the key stays out of the config", async () => {
    const root = home.project(`cli-copy-${process.pid}`);
    appendRecords(root, syntheticConversation(2, 3, "cli"));
    await indexProject(root, { llm: null });
    const result = await cli(root, { INSFORGE_BASE_URL: fake.url, INSFORGE_API_KEY: fake.apiKey });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("copied from local to insforge and verified");
    const config = readFileSync(`${root}/.triforge/config.json`, "utf8");
    expect(JSON.parse(config).storage).toBe("insforge");
    expect(config).not.toContain(fake.apiKey);
  }, 60_000);
});
