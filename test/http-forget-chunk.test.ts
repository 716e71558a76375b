/**
 * Deleting one memory chunk (`DELETE /v1/memory/chunks/{id}`, memory/forget-chunk.ts) with forget's
 * exactness: the store afterwards equals one indexed without that exchange, and its chats.jsonl records,
 * summary lines, pin and recall hits are gone for good, a re-index and a late re-capture included.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { summaryPath } from "../src/home/paths.ts";
import { type RunningServer, startHttpServer } from "../src/http/server.ts";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { summaryWithout } from "../src/memory/forget-chunk.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { addPin, readPins } from "../src/memory/pins.ts";
import { recall } from "../src/memory/recall/recall.ts";
import { RagService } from "../src/rag/service.ts";
import { runBinary } from "./support/helpers.ts";
import {
  appendRecords,
  chatLog,
  dumpGraph,
  exchange,
  memoryHome,
  syntheticConversation,
} from "./support/memory-helpers.ts";

const TOKEN = "forget-chunk-token-0123";
const bearer = { authorization: `Bearer ${TOKEN}` };
const { home, project } = memoryHome();

/** The exchange to delete: its own words, so recall, the summary and chats.jsonl can be searched for it. */
const dropped: ChatRecord[] = exchange(
  "keep0",
  "Why does the quarkLedger exporter in src/export/quark.ts drop the zanzibar rows?",
  "The quarkLedger exporter skipped rows without a zanzibar stamp. I changed src/export/quark.ts to stamp them first.",
  1,
);
const kept = syntheticConversation(1, 3, "keep");

const both = project("chunk-both");
const only = project("chunk-only");
let server: RunningServer;

beforeAll(async () => {
  appendRecords(both, [...dropped, ...kept]);
  await indexProject(both, { llm: null });
  appendRecords(only, kept);
  await indexProject(only, { llm: null });
  server = startHttpServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    rag: new RagService([both], { catalogPath: join(home, "catalog.db") }),
  });
});
afterAll(() => server?.stop());

const chunkOfDropped = async (): Promise<{ id: number; text: string }> => {
  const session = (await (await fetch(`${server.url}/v1/memory/sessions/keep0`)).json()) as {
    chunks: { id: number; text: string }[];
  };
  return session.chunks.find((c) => c.text.includes("quarkLedger"))!;
};

describe("deleting one chunk", () => {
  test("the store equals one that never saw the exchange; its records, summary lines, pin and hits are gone", async () => {
    const chunk = await chunkOfDropped();
    expect(chunk).toBeDefined();
    await addPin(both, { chunk_id: chunk.id, session_id: "keep0", ts: dropped[0].ts, text: chunk.text });
    expect(readFileSync(summaryPath(both), "utf8")).toContain("quarkLedger");
    expect((await recall(both, "quarkLedger exporter zanzibar rows", { topK: 3 })).hits[0].text).toContain(
      "quarkLedger",
    );
    const graphBefore = dumpGraph(both);

    // Changing memory needs the token or the page's session, as forgetting a session does.
    expect((await fetch(`${server.url}/v1/memory/chunks/${chunk.id}`, { method: "DELETE" })).status).toBe(
      401,
    );
    const res = await fetch(`${server.url}/v1/memory/chunks/${chunk.id}`, {
      method: "DELETE",
      headers: bearer,
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as Record<string, unknown>;
    expect(report).toMatchObject({
      status: "forgotten",
      chunk_id: chunk.id,
      session_id: "keep0",
      chunks: 1,
      lines: 2,
      pins: 1,
    });
    expect(report.summaryLines as number).toBeGreaterThan(0);
    expect((report.edgesRemoved as number) + (report.edgesLowered as number)).toBeGreaterThan(0);

    const after = dumpGraph(both);
    const expected = dumpGraph(only);
    expect(after.phrases).toEqual(expected.phrases);
    expect(after.facts).toEqual(expected.facts);
    expect(after.edges).toEqual(expected.edges);
    expect(after.chunks).toEqual(expected.chunks);
    expect(after.turns).toEqual(expected.turns);
    expect(graphBefore.phrases.length).toBeGreaterThan(after.phrases.length);

    const log = readFileSync(chatLog(both), "utf8");
    expect(log).not.toContain("quarkLedger");
    for (const record of kept) expect(log).toContain(record.uuid);
    const summary = readFileSync(summaryPath(both), "utf8");
    expect(summary).not.toContain("quarkLedger");
    expect(summary).not.toContain("src/export/quark.ts");
    expect(summary).toContain("session keep0");
    expect(await readPins(both)).toEqual([]);
    const hits = (await recall(both, "quarkLedger exporter zanzibar rows", { topK: 5 })).hits;
    expect(hits.map((h) => h.text).join("\n")).not.toContain("quarkLedger");

    expect(
      (await fetch(`${server.url}/v1/memory/chunks/${chunk.id}`, { method: "DELETE", headers: bearer }))
        .status,
    ).toBe(404);
    expect((await fetch(`${server.url}/v1/memory/chunks/${chunk.id}`)).status).toBe(404);
  });

  test("a re-index, and the same records captured again, do not bring it back", async () => {
    await indexProject(both, { llm: null });
    appendRecords(both, dropped);
    await indexProject(both, { llm: null });
    expect(dumpGraph(both).chunks).toEqual(dumpGraph(only).chunks);
    const hits = (await recall(both, "quarkLedger exporter zanzibar rows", { topK: 5 })).hits;
    expect(hits.map((h) => h.text).join("\n")).not.toContain("quarkLedger");
  });

  test("an unknown id, or one that is not a number, is a 404", async () => {
    for (const id of ["999999", "abc", "-1"])
      expect(
        (await fetch(`${server.url}/v1/memory/chunks/${id}`, { method: "DELETE", headers: bearer })).status,
      ).toBe(404);
  });
});

describe("triforge forget --chunk", () => {
  test("deletes one chunk from the command line; a bad or unknown id is a clear error", async () => {
    const root = project("chunk-cli");
    appendRecords(root, [
      ...exchange(
        "cli0",
        "Where is the ferrymanQueue drained?",
        "The ferrymanQueue drains in src/queue/ferry.ts.",
        2,
      ),
      ...kept,
    ]);
    await indexProject(root, { llm: null });
    const env = { TRIFORGE_HOME: process.env.TRIFORGE_HOME };
    const ids = (await (await import("../src/memory/browse.ts")).sessionChunks(root, "cli0")).map(
      (c) => c.id,
    );
    expect(ids).toHaveLength(1);
    const done = await runBinary(["forget", "--chunk", String(ids[0]), "--project", root], { home, env });
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`Forgot chunk ${ids[0]} of session cli0: 2 lines of the chat log`);
    expect(readFileSync(chatLog(root), "utf8")).not.toContain("ferrymanQueue");
    const again = await runBinary(["forget", "--chunk", String(ids[0]), "--project", root], { home, env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no chunk ${ids[0]} in the memory of`);
    const bad = await runBinary(["forget", "--chunk", "x1", "--project", root], { home, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--chunk takes a chunk id");
    const both = await runBinary(["forget", "--chunk", "1", "--session", "cli0", "--project", root], {
      home,
      env,
    });
    expect(both.code).toBe(2);
  });
});

describe("the summary without a deleted chunk", () => {
  const removed =
    "Why does the exporter drop rows? We decided to stamp every row in src/export/quark.ts before writing.";
  const other = "The billing retries run in src/jobs/worker.ts with redis.";

  test("lines quoting only the removed chunk go; names only it mentions leave the lists", () => {
    const entry = [
      "Discussed: Why does the exporter drop rows?",
      "  Mel: The billing retries run in src/jobs/worker.ts with redis.",
      "Decided:",
      "- We decided to stamp every row in src/export/quark.ts before writing. (why: rows lacked stamps)",
      "Files: src/export/quark.ts, src/jobs/worker.ts",
    ].join("\n");
    expect(summaryWithout(entry, removed, [other])).toBe(
      ["  Mel: The billing retries run in src/jobs/worker.ts with redis.", "Files: src/jobs/worker.ts"].join(
        "\n",
      ),
    );
  });

  test("a sentence the other chunks also hold stays, and an entry left with nothing is removed", () => {
    expect(summaryWithout("Discussed: The billing retries run in src/jobs/worker.ts", other, [other])).toBe(
      "Discussed: The billing retries run in src/jobs/worker.ts",
    );
    expect(
      summaryWithout("Discussed: Why does the exporter drop rows?\nFiles: src/export/quark.ts", removed, []),
    ).toBe("");
    // An LLM's paraphrase is not traced to a chunk.
    expect(summaryWithout("- Rows are now stamped on export.", removed, [])).toBe(
      "- Rows are now stamped on export.",
    );
  });
});
