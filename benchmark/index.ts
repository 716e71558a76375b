#!/usr/bin/env bun
/**
 * Indexing speed and size, no LLM. LoCoMo's 5,882 turns (272 sessions) are captured into ONE project,
 * the worst case for a single store, and indexed from scratch: wall time, chunks/s, graph size, disk
 * size (goal ≤ 2 s on the 2-core dev box). Also per conversation (10 projects), and the MuSiQue slice
 * whose graph comes from HippoRAG's stored OpenIE triples (the LLM-graph case, same cache path as live
 * OpenIE). Baseline in the same run: the floor of any indexer — parse chats.jsonl and insert the raw
 * records into a fresh SQLite file in one transaction.
 *
 * Usage: bun benchmark/index.ts [--json]
 */
import { Database } from "bun:sqlite";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadModel } from "../src/embed/source.ts";
import { projectDataDir, storePath } from "../src/home/paths.ts";
import { cacheKey } from "../src/llm/cache.ts";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { chunkRecords } from "../src/memory/chunking.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { memoryStatus } from "../src/memory/status.ts";
import { openStoreForWrite } from "../src/store/open.ts";
import {
  loadLocomo,
  loadMusique,
  locomoRecords,
  passageText,
  scratchHome,
  writeChatLog,
} from "./memory-data.ts";

function diskBytes(root: string): number {
  let total = 0;
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      total += statSync(storePath(root) + suffix).size;
    } catch {}
  }
  return total;
}

/** The baseline: parse the chat log and insert raw records into SQLite, nothing else. */
function rawInsert(chatLog: string, dbPath: string): number {
  const started = performance.now();
  const db = new Database(dbPath, { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("CREATE TABLE records(uuid TEXT PRIMARY KEY, session_id TEXT, ts TEXT, role TEXT, text TEXT)");
  const insert = db.prepare("INSERT INTO records VALUES (?, ?, ?, ?, ?)");
  db.transaction(() => {
    for (const line of readFileSync(chatLog, "utf8").split("\n")) {
      if (!line) continue;
      const r = JSON.parse(line) as ChatRecord;
      insert.run(r.uuid, r.session_id, r.ts, r.role, r.text);
    }
  })();
  db.close();
  return performance.now() - started;
}

async function main() {
  const scratch = scratchHome("index");
  const out: Record<string, unknown> = {};
  try {
    await loadModel(); // loaded once per process in real use too; not part of indexing
    const samples = await loadLocomo();
    // All of LoCoMo in one project.
    const all = samples.flatMap(locomoRecords);
    const root = scratch.project("locomo-all");
    const chatLog = join(projectDataDir(root), "chats.jsonl");
    writeChatLog(chatLog, all);
    const baselineMs = rawInsert(chatLog, join(scratch.home, "baseline.db"));
    let started = performance.now();
    const result = await indexProject(root, { llm: null });
    const ms = performance.now() - started;
    const status = await memoryStatus(root);
    out.locomoOneProject = {
      turns: all.length,
      sessions: result.sessions,
      chunks: result.chunks,
      wallSeconds: Number((ms / 1000).toFixed(2)),
      chunksPerSecond: Math.round(result.chunks / (ms / 1000)),
      baselineRawInsertSeconds: Number((baselineMs / 1000).toFixed(3)),
      timesBaseline: Number((ms / baselineMs).toFixed(1)),
      graph: {
        nodes: status.nodes,
        phrases: status.entities,
        facts: status.facts,
        edges: status.edges,
        ...status.edgesByKind,
      },
      diskMB: Number((diskBytes(root) / 1e6).toFixed(2)),
      chatLogMB: Number((statSync(chatLog).size / 1e6).toFixed(2)),
    };
    started = performance.now();
    const again = await indexProject(root, { llm: null });
    out.locomoReindexNoChange = {
      seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
      newChunks: again.chunks,
    };
    // One project per conversation (how the recall benchmark runs).
    started = performance.now();
    let chunks = 0;
    for (const sample of samples) {
      const r = scratch.project(`locomo-${sample.sample_id}`);
      writeChatLog(join(projectDataDir(r), "chats.jsonl"), locomoRecords(sample));
      chunks += (await indexProject(r, { llm: null })).chunks;
    }
    const perConversationMs = performance.now() - started;
    out.locomoPerConversation = {
      projects: samples.length,
      chunks,
      wallSeconds: Number((perConversationMs / 1000).toFixed(2)),
    };
    // MuSiQue with the stored OpenIE triples.
    const { corpus, openie } = await loadMusique();
    const mq = scratch.project("musique");
    const records: ChatRecord[] = corpus.map((p, i) => ({
      ts: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
      session_id: `passage-${i}`,
      role: "user",
      text: passageText(p),
      uuid: `passage-${i}`,
    }));
    writeChatLog(join(projectDataDir(mq), "chats.jsonl"), records);
    const byPassage = new Map(openie.map((d) => [d.passage.trim(), d]));
    const store = openStoreForWrite(mq);
    store.setMany(
      chunkRecords(records).flatMap((c) => {
        const d = byPassage.get(c.text);
        return d
          ? [
              [
                cacheKey("openie", c.hash),
                JSON.stringify({
                  extracted_entities: d.extracted_entities,
                  extracted_triples: d.extracted_triples,
                }),
              ] as [string, string],
            ]
          : [];
      }),
    );
    store.close();
    started = performance.now();
    const mqResult = await indexProject(mq, { llm: null });
    const mqMs = performance.now() - started;
    const mqStatus = await memoryStatus(mq);
    out.musiqueStoredTriples = {
      passages: mqResult.chunks,
      wallSeconds: Number((mqMs / 1000).toFixed(2)),
      chunksPerSecond: Math.round(mqResult.chunks / (mqMs / 1000)),
      graph: {
        nodes: mqStatus.nodes,
        phrases: mqStatus.entities,
        facts: mqStatus.facts,
        edges: mqStatus.edges,
        ...mqStatus.edgesByKind,
      },
      diskMB: Number((diskBytes(mq) / 1e6).toFixed(2)),
    };
  } finally {
    scratch.cleanup();
  }
  if (process.argv.includes("--json")) console.log(JSON.stringify(out, null, 2));
  else {
    const l = out.locomoOneProject as Record<string, unknown>;
    console.log(
      `LoCoMo, ${l.turns} turns in one project, no LLM: ${l.wallSeconds} s (goal ≤ 2 s), ${l.chunksPerSecond} chunks/s, ${l.timesBaseline}× the raw-insert baseline (${l.baselineRawInsertSeconds} s), ${l.diskMB} MB on disk for a ${l.chatLogMB} MB chat log`,
    );
    console.log(JSON.stringify(out, null, 2));
  }
}

await main();
