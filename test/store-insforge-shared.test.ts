/**
 * `storage: insforge` as a team's shared memory, end to end over HTTP: machines index into their own
 * local stores and push to one InsForge project (the contract server); recall, status and doctor read
 * every machine's memory through the local mirror pulled from it. The indexer, recall, forget and the
 * CLI reach InsForge exactly as they would a real one: INSFORGE_BASE_URL and INSFORGE_API_KEY.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { errorLogPath, mirrorStorePath, pushStatePath, storePath } from "../src/home/paths.ts";
import { forgetSession } from "../src/memory/forget.ts";
import { forgetChunk } from "../src/memory/forget-chunk.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { MODES } from "../src/memory/recall/modes.ts";
import { closeWarmIndexes, recall } from "../src/memory/recall/recall.ts";
import { refreshMirror } from "../src/memory/shared.ts";
import { projectSchema } from "../src/store/pg-schema.ts";
import { type FakeInsforge, startFakeInsforge } from "./support/fakes/insforge.ts";
import { compiledBinary, spawnCollect } from "./support/helpers.ts";
import { appendRecords, memoryHome, syntheticConversation } from "./support/memory-helpers.ts";

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

  /** The shared rows by natural key, read from the database behind the server. */
  async function sharedDump(project: string) {
    const s = projectSchema(project);
    const list = async (sql: string) => (await fake.db.query<{ k: string }>(sql)).rows.map((r) => r.k);
    return {
      chunks: await list(`SELECT hash || '|' || session_id AS k FROM ${s}.chunks ORDER BY 1`),
      turns: await list(`SELECT uuid AS k FROM ${s}.turns ORDER BY 1`),
      summaries: await list(`SELECT session_id || '|' || text AS k FROM ${s}.summaries ORDER BY 1`),
      entities: await list(`SELECT phrase AS k FROM ${s}.entities ORDER BY 1`),
      facts: await list(`SELECT count(*)::text AS k FROM ${s}.facts`),
      edges: await list(
        `SELECT kind || ':' || count(*) || ':' || round(sum(weight)::numeric, 4) AS k FROM ${s}.edges GROUP BY kind ORDER BY 1`,
      ),
    };
  }
  const sessionsOf = (hits: { session_id: string }[]) => [...new Set(hits.map((h) => h.session_id))].sort();

  test("two machines index one project's memory at once: recall on either sees both, counts exact, a second push adds nothing", async () => {
    const project = name("team");
    const one = home.project(name("one"), config(project));
    const two = home.project(name("two"), config(project));
    appendRecords(one, syntheticConversation(3, 4, "one"));
    appendRecords(two, syntheticConversation(2, 5, "two"));
    const [a, b] = await Promise.all([index(one), index(two)]);
    expect(a.shared?.error).toBeUndefined();
    expect(b.shared?.error).toBeUndefined();
    expect(a.shared?.push?.chunks).toBe(12);
    expect(b.shared?.push?.chunks).toBe(10);
    for (const root of [one, two]) await refreshMirror(root);
    for (const root of [one, two]) {
      const { hits } = await recall(root, "queueWorker redis billing retries", { topK: 20 });
      expect(sessionsOf(hits).some((s) => s.startsWith("one"))).toBe(true);
      expect(sessionsOf(hits).some((s) => s.startsWith("two"))).toBe(true);
    }
    const before = await sharedDump(project);
    expect(before.chunks.length).toBe(22);
    expect(before.turns.length).toBe(44);
    expect((await index(one)).shared?.push?.chunks).toBe(0);
    expect(await sharedDump(project)).toEqual(before);
  }, 120_000);

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
    expect((await sharedDump(project)).chunks.length).toBe(256);
    const resumed = await index(root);
    expect(resumed.shared?.error).toBeUndefined();
    expect(resumed.shared?.push?.chunks).toBe(44);
    const after = await sharedDump(project);
    expect(after.chunks.length).toBe(300);
    expect(after.turns.length).toBe(600);
    // The same memory pushed in one go by a machine that never failed: the same rows.
    const clean = name("clean");
    const reference = home.project(name("clean"), config(clean));
    appendRecords(reference, records);
    await index(reference);
    expect(after).toEqual(await sharedDump(clean));
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

  test("one machine indexing in several runs: the shared graph is its local graph, synonym edges revived and dropped included", async () => {
    const project = name("runs");
    const root = home.project(name("runs"), config(project));
    const records = syntheticConversation(8, 8, "run");
    for (let part = 0; part < 4; part++) {
      appendRecords(root, records.slice(part * 32, (part + 1) * 32));
      expect((await index(root)).shared?.error).toBeUndefined();
    }
    const db = new Database(storePath(root), { readonly: true });
    // The capped synonym graph changed earlier edges on later runs: what the push must carry over.
    expect((db.query("SELECT count(*) AS n FROM synonym_changes").get() as { n: number }).n).toBeGreaterThan(
      0,
    );
    const named = (rows: { k: string; w: number }[]) =>
      rows.map((r) => `${r.k}|${Number(r.w).toFixed(6)}`).sort();
    const local = named(
      db
        .query(
          `SELECT e.kind || '|' || CASE WHEN e.kind = 1 THEN c.hash || '|' || y.phrase
             ELSE min(x.phrase, y.phrase) || '|' || max(x.phrase, y.phrase) END AS k, e.weight AS w
           FROM edges e LEFT JOIN chunks c ON e.kind = 1 AND c.id = e.a
           LEFT JOIN entities x ON e.kind != 1 AND x.id = e.a JOIN entities y ON y.id = e.b`,
        )
        .all() as { k: string; w: number }[],
    );
    db.close();
    const sc = projectSchema(project);
    const shared = named(
      (
        await fake.db.query<{ k: string; w: number }>(
          `SELECT e.kind || '|' || CASE WHEN e.kind = 1 THEN c.hash || '|' || y.phrase
             ELSE least(x.phrase, y.phrase) || '|' || greatest(x.phrase, y.phrase) END AS k, e.weight AS w
           FROM ${sc}.edges e LEFT JOIN ${sc}.chunks c ON e.kind = 1 AND c.id = e.a
           LEFT JOIN ${sc}.entities x ON e.kind != 1 AND x.id = e.a JOIN ${sc}.entities y ON y.id = e.b`,
        )
      ).rows,
    );
    expect(shared.length).toBe(local.length);
    expect(shared).toEqual(local);
    // And the mirror recall reads holds the same weights.
    const groups =
      "SELECT kind, count(*) AS n, round(sum(weight), 4) AS w FROM edges GROUP BY kind ORDER BY kind";
    const mirror = new Database(mirrorStorePath(root), { readonly: true });
    const mirrored = mirror.query(groups).all();
    mirror.close();
    const again = new Database(storePath(root), { readonly: true });
    expect(mirrored).toEqual(again.query(groups).all());
    again.close();
  }, 180_000);

  test("a chunk deleted on the web page leaves InsForge and every mirror, and no machine pushes it again", async () => {
    const project = name("chunk");
    const one = home.project(name("c1"), config(project));
    const two = home.project(name("c2"), config(project));
    appendRecords(one, syntheticConversation(2, 3, "own"));
    appendRecords(two, syntheticConversation(2, 3, "other"));
    await index(one);
    await index(two);
    const inMirror = (root: string, session: string) => {
      const db = new Database(mirrorStorePath(root), { readonly: true });
      try {
        return db
          .query("SELECT id, hash FROM chunks WHERE session_id = ? ORDER BY id LIMIT 1")
          .get(session) as {
          id: number;
          hash: string;
        };
      } finally {
        db.close();
      }
    };
    // Machine two deletes a chunk machine one captured, by the id its page shows (the mirror's).
    const target = inMirror(two, "own1");
    const report = await forgetChunk(two, target.id);
    expect(report.status).toBe("forgotten");
    expect(report.shared).toBe("forgotten");
    const held = async () => (await sharedDump(project)).chunks.map((c) => c.split("|")[0]);
    expect(await held()).not.toContain(target.hash);
    expect((await held()).length).toBe(11);
    await index(one);
    expect(inMirror(one, "own1").hash).not.toBe(target.hash);
    // Machine one's store is rebuilt from its chat log (which still holds those records) and pushed whole:
    // the deleted chunk stays out of the shared store.
    for (const file of [storePath(one), pushStatePath(one)]) rmSync(file, { force: true });
    expect((await index(one)).shared?.error).toBeUndefined();
    expect(await held()).not.toContain(target.hash);
    expect((await held()).length).toBe(11);
  }, 180_000);

  test("recall ranks the same from InsForge as from the local store on the same data, in every mode", async () => {
    const records = syntheticConversation(6, 6, "r");
    const localRoot = home.project(name("rank-local"));
    const sharedRoot = home.project(name("rank-shared"), config(name("rank")));
    appendRecords(localRoot, records);
    appendRecords(sharedRoot, records);
    await indexProject(localRoot, { llm: null });
    await index(sharedRoot);
    for (const mode of MODES)
      for (const query of ["why does renderChart fail with d3", "redis billing retries queueWorker"]) {
        const expected = await recall(localRoot, query, { topK: 8, mode });
        const got = await recall(sharedRoot, query, { topK: 8, mode });
        expect(expected.hits.length).toBeGreaterThan(0);
        expect(got.hits.map((h) => [h.session_id, h.text, h.score])).toEqual(
          expected.hits.map((h) => [h.session_id, h.text, h.score]),
        );
      }
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
