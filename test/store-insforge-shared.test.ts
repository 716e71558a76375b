/**
 * `storage: insforge` as a team's shared memory, end to end over HTTP: machines index into their own
 * local stores and push to one InsForge project (the contract server); recall, status and doctor read
 * every machine's memory through the local mirror pulled from it. The indexer, recall, forget and the
 * CLI reach InsForge exactly as they would a real one: INSFORGE_BASE_URL and INSFORGE_API_KEY. The cases
 * every shared backend passes alike are in test/support/shared-memory-contract.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { errorLogPath } from "../src/home/paths.ts";
import { forgetSession } from "../src/memory/forget.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes, recall } from "../src/memory/recall/recall.ts";
import { refreshMirror } from "../src/memory/shared.ts";
import { type FakeInsforge, startFakeInsforge } from "./support/fakes/insforge.ts";
import { compiledBinary, spawnCollect } from "./support/helpers.ts";
import { appendRecords, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";
import {
  sharedDump as dump,
  expectPushResumed,
  type SharedBackend,
  sharedMemoryContract,
} from "./support/shared-memory-contract.ts";

const home = memoryHome();

describe("shared memory in InsForge (contract server)", () => {
  let fake: FakeInsforge;
  const saved = { url: process.env.INSFORGE_BASE_URL, key: process.env.INSFORGE_API_KEY };
  beforeAll(async () => {
    fake = await startFakeInsforge();
    process.env.INSFORGE_BASE_URL = fake.url;
    process.env.INSFORGE_API_KEY = fake.apiKey;
  }, 60_000);
  afterAll(async () => {
    closeWarmIndexes();
    await fake?.close();
    for (const [name, value] of [
      ["INSFORGE_BASE_URL", saved.url],
      ["INSFORGE_API_KEY", saved.key],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });
  const name = (what: string) => `${what}-${process.pid}-${Date.now()}`;
  const config = (project: string) => ({ llm: "none", storage: "insforge", insforge: { project } });
  const index = (root: string) => indexProject(root, { llm: null });

  const query = async (sql: string) => (await fake.db.query<Record<string, unknown>>(sql)).rows;
  const sharedDump = (project: string) => dump(query, project);

  const sharedBackend = (): SharedBackend => ({
    home,
    name,
    config,
    index,
    refresh: (root) => refreshMirror(root),
    query,
    forgetReaches: true,
  });
  sharedMemoryContract(sharedBackend);

  test("the server gone mid-push: the local index completes, the next run pushes the rest, nothing lost or doubled", async () => {
    const project = name("faults");
    const root = home.project(name("faults"), config(project));
    const records = syntheticConversation(3, 100, "f");
    appendRecords(root, records);
    // The second batch's script: the server dies as it arrives and stays down.
    let scripts = 0;
    fake.dropNext({
      ran: false,
      when: (q) => q.includes("pg_advisory_xact_lock") && q.includes(".chunks(hash") && ++scripts === 2,
    });
    const cut = await index(root);
    expect(cut.status).toBe("indexed");
    expect(cut.chunks).toBe(300);
    expect(cut.shared?.error).toMatch(
      /insforge at http:\/\/127\.0\.0\.1:\d+ (dropped the connection|cannot be reached)/,
    );
    expect(cut.shared?.error).not.toContain(fake.apiKey);
    expect(readFileSync(errorLogPath(root), "utf8")).not.toContain(fake.apiKey);
    fake.restart();
    await expectPushResumed(sharedBackend(), root, project, records);
  }, 180_000);

  test("forget on one machine removes the session from the shared store and, at its next index, from the other machine", async () => {
    const project = name("forget");
    const one = home.project(name("f1"), config(project));
    const two = home.project(name("f2"), config(project));
    appendRecords(one, syntheticConversation(3, 3, "mine"));
    appendRecords(two, syntheticConversation(2, 3, "yours"));
    await index(one);
    await index(two);
    const report = await forgetSession(two, "mine1");
    expect(report.status).toBe("forgotten");
    expect(report.shared).toBe("forgotten");
    const shared = await sharedDump(project);
    expect(shared.chunks.some((c) => c.endsWith("|mine1"))).toBe(false);
    expect(shared.chunks.length).toBe(12);
    const next = await index(one);
    expect(next.shared?.push?.forgottenHere).toBe(1);
    const { hits } = await recall(one, "mine1 Session 1 step 0", { topK: 20, mode: "bm25" });
    expect(hits.some((h) => h.session_id === "mine1")).toBe(false);
  }, 120_000);

  test("activate, status and doctor name the InsForge server and never the key; a wrong key is one line", async () => {
    const root = home.project(name("cli"));
    appendRecords(root, syntheticConversation(1, 2, "c"));
    const binary = process.env.TRIFORGE_TEST_BINARY ? [await compiledBinary()] : ["bun", "src/index.ts"];
    const cli = (args: string[], key = fake.apiKey) =>
      spawnCollect([...binary, ...args, "--project", root], {
        env: { ...process.env, INSFORGE_BASE_URL: fake.url, INSFORGE_API_KEY: key },
        cwd: `${import.meta.dir}/..`,
      });
    const activated = await cli(["activate", "--storage", "insforge"]);
    expect(activated.code).toBe(0);
    expect(activated.stdout).toContain(`Storage: shared in insforge at ${fake.url}`);
    expect((await cli(["index"])).code).toBe(0);
    const status = await cli(["status"]);
    expect(status.stdout).toContain(`insforge at ${fake.url}`);
    const doctor = await cli(["doctor", "--json"]);
    const check = (JSON.parse(doctor.stdout) as { name: string; ok: boolean; detail: string }[]).find(
      (c) => c.name === "shared store",
    );
    expect(check?.ok).toBe(true);
    const wrong = "ik_not_the_key_0123456789";
    const refused = await cli(["activate", "--storage", "insforge"], wrong);
    expect(refused.stderr).toContain(`insforge at ${fake.url}: the API key was refused`);
    // The server down: doctor fails its check with InsForge's fix, status says it was not reached.
    fake.down();
    let downDoctor: Awaited<ReturnType<typeof cli>>;
    let downStatus: Awaited<ReturnType<typeof cli>>;
    try {
      downDoctor = await cli(["doctor", "--json"]);
      downStatus = await cli(["status"]);
    } finally {
      fake.restart();
    }
    const down = (
      JSON.parse(downDoctor.stdout) as { name: string; ok: boolean; detail: string; fix?: string }[]
    ).find((c) => c.name === "shared store");
    expect(down?.ok).toBe(false);
    expect(down?.detail).toContain(`insforge at ${fake.url} cannot be reached`);
    expect(down?.fix).toContain("set INSFORGE_BASE_URL and INSFORGE_API_KEY");
    expect(downStatus.stdout).toContain(`insforge at ${fake.url} not reached`);
    for (const out of [activated, status, doctor, refused, downDoctor, downStatus]) {
      expect(out.stdout + out.stderr).not.toContain(fake.apiKey);
      expect(out.stdout + out.stderr).not.toContain(wrong);
    }
  }, 120_000);
});
