/**
 * The indexer's LLM path against a fake OpenAI server on 127.0.0.1 (real SDK, real HTTP): OpenIE builds
 * the graph and is cached per chunk hash, summaries come from the LLM, usage is counted in the store;
 * a failing provider leaves the local graph in place, logs, and is retried on the next run.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectDataDir, storePath, summaryPath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes, recall } from "../src/memory/recall/recall.ts";
import { memoryStatus } from "../src/memory/status.ts";
import { GRAPH_TABLES } from "../src/store/remote.ts";
import { chatReply, startFakeOpenAI } from "./support/fakes/openai.ts";
import {
  appendRecords,
  dumpGraph,
  exchange,
  fakeOpenAiOptions,
  isNer,
  isSummary,
  isTriples,
  memoryHome,
} from "./support/memory-helpers.ts";

const { project } = memoryHome();
const fake = startFakeOpenAI({ fallback: null });
afterAll(async () => {
  closeWarmIndexes();
  await fake.stop();
});

const llmOptions = fakeOpenAiOptions(fake.url);

describe("indexing with an LLM", () => {
  test("OpenIE output becomes the graph, summaries come from the LLM, usage is counted", async () => {
    const root = project("llm-ok", { llm: "openai" });
    appendRecords(
      root,
      exchange(
        "s1",
        "Who maintains the billing-service?",
        "Alice maintains it; it writes invoices to ledger.db.",
      ),
    );
    fake.enqueue(
      chatReply(JSON.stringify({ named_entities: ["Alice", "billing-service", "ledger.db"] }), {
        when: isNer,
      }),
      chatReply(
        JSON.stringify({
          triples: [
            ["Alice", "maintains", "billing-service"],
            ["billing-service", "writes invoices to", "ledger.db"],
          ],
        }),
        { when: isTriples },
      ),
      chatReply("Discussed who maintains billing-service. Decided nothing. Files: ledger.db.", {
        when: isSummary,
      }),
    );
    const result = await indexProject(root, { llmOptions });
    expect(result).toMatchObject({ chunks: 1, llmFailures: 0 });
    expect(result.llm).toStartWith("openai/");
    const graph = dumpGraph(root);
    expect(graph.facts).toEqual([
      "alice|maintains|billing-service",
      "billing-service|writes invoices to|ledger.db",
    ]);
    expect(readFileSync(summaryPath(root), "utf8")).toContain("Discussed who maintains billing-service.");
    const status = await memoryStatus(root);
    expect(status.llmUsage).toHaveLength(1);
    expect(status.llmUsage[0]).toMatchObject({ provider: "openai", calls: 3 });
    expect(status.llmUsage[0].inputTokens).toBeGreaterThan(0);
    expect((await recall(root, "Alice", { mode: "graph", topK: 1 })).hits[0].session_id).toBe("s1");
    // An LLM-built graph takes hybrid's RRF recipe; the answer is the same.
    expect((await recall(root, "ledger.db invoices", { topK: 1 })).hits[0].session_id).toBe("s1");
  });

  test("a failing provider: the chunk lands with the local graph, the failure is logged, the next run retries", async () => {
    const root = project("llm-down", { llm: "openai" });
    appendRecords(
      root,
      exchange("s2", "Does queueWorker retry on redis timeouts?", "Yes, queueWorker retries three times."),
    );
    // No replies queued: every request gets a 500 (retried, then given up).
    const first = await indexProject(root, { llmOptions });
    expect(first.chunks).toBe(1);
    expect(first.llmFailures).toBe(1);
    expect((await memoryStatus(root)).pendingLlm).toBe(1);
    expect(dumpGraph(root).phrases).toContain("queueWorker"); // local extractor meanwhile
    const log = readFileSync(join(projectDataDir(root), "errors.log"), "utf8");
    expect(log).toContain("OpenIE failed");
    expect(readFileSync(summaryPath(root), "utf8")).toContain("session s2"); // extractive summary still written

    fake.enqueue(
      chatReply(JSON.stringify({ named_entities: ["queueWorker", "redis"] }), { when: isNer }),
      chatReply(JSON.stringify({ triples: [["queueWorker", "retries on", "redis"]] }), { when: isTriples }),
    );
    const second = await indexProject(root, { llmOptions });
    expect(second.chunks).toBe(0);
    expect((await memoryStatus(root)).pendingLlm).toBe(0);
    expect(dumpGraph(root).facts).toEqual(["queueWorker|retries on|redis"]);
  });

  test("OpenIE results are cached per chunk hash: work lost before a commit is not billed twice", async () => {
    const root = project("llm-cache", { llm: "openai" });
    appendRecords(root, exchange("s3", "Where is renderChart?", "In src/ui/chart.tsx."));
    fake.enqueue(
      chatReply(JSON.stringify({ named_entities: ["renderChart", "src/ui/chart.tsx"] }), { when: isNer }),
      chatReply(JSON.stringify({ triples: [["renderChart", "defined in", "src/ui/chart.tsx"]] }), {
        when: isTriples,
      }),
      chatReply("Discussed where renderChart lives.", { when: isSummary }),
    );
    await indexProject(root, { llmOptions });
    const graph = dumpGraph(root);
    // As if the batch had never committed (a crash after the OpenIE calls): everything but the LLM cache goes.
    const db = new Database(storePath(root));
    for (const table of [...GRAPH_TABLES, "summaries"]) db.run(`DELETE FROM ${table}`);
    db.run("DELETE FROM meta WHERE key IN ('offset', 'offset_check')");
    db.close();
    const before = fake.chatRequests().length;
    fake.enqueue(chatReply("Discussed where renderChart lives.", { when: isSummary }));
    expect((await indexProject(root, { llmOptions })).chunks).toBe(1);
    // Only the summary was asked for again; the graph came from the cache.
    expect(
      fake
        .chatRequests()
        .slice(before)
        .map((r) => (isSummary(r) ? "summary" : "openie")),
    ).toEqual(["summary"]);
    expect(dumpGraph(root).facts).toEqual(graph.facts);
  });
});
