#!/usr/bin/env bun
/**
 * MuSiQue passage recall@2/5/10 per mode, with the graph built from HippoRAG's stored GPT-3.5 OpenIE
 * output. The 1,890 passages are captured as one session of user turns (one chunk each); each chunk's
 * stored OpenIE record is put in the store's LLM cache under the chunk's hash, exactly where live OpenIE
 * output goes, so the indexer reads it through the same path (parseOpenIEOutput → graphFromOpenIE).
 * BM25 in the same run is the baseline (../shared/eval/README.md: BM25 50.8, Python HippoRAG-2 57.3 at @5).
 *
 * Usage: bun benchmark/musique.ts [--json]
 */
import { join } from "node:path";
import { projectDataDir } from "../src/home/paths.ts";
import { cacheKey } from "../src/llm/cache.ts";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { chunkRecords } from "../src/memory/chunking.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { closeWarmIndexes, loadMemoryIndex, MODES, rankChunks } from "../src/memory/recall/recall.ts";
import { openStoreForWrite } from "../src/store/open.ts";
import { loadMusique, passageText, scratchHome, writeChatLog } from "./memory-data.ts";

const KS = [2, 5, 10] as const;

export async function runMusique(): Promise<{
  rows: Record<string, number | string>[];
  questions: number;
  indexMs: number;
  graph: Record<string, number>;
}> {
  const { corpus, questions, openie } = await loadMusique();
  const scratch = scratchHome("musique");
  try {
    const root = scratch.project("musique");
    const records: ChatRecord[] = corpus.map((p, i) => ({
      ts: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
      session_id: `passage-${i}`, // independent documents: one session each, so no sequence edges
      role: "user",
      text: passageText(p),
      uuid: `passage-${i}`,
    }));
    writeChatLog(join(projectDataDir(root), "chats.jsonl"), records);
    // The stored OpenIE records, keyed by the hash the indexer will compute for each chunk.
    const byPassage = new Map(openie.map((doc) => [doc.passage.trim(), doc]));
    const store = openStoreForWrite(root);
    const entries: [string, string][] = [];
    for (const chunk of chunkRecords(records)) {
      const doc = byPassage.get(chunk.text);
      if (doc)
        entries.push([
          cacheKey("openie", chunk.hash),
          JSON.stringify({
            extracted_entities: doc.extracted_entities,
            extracted_triples: doc.extracted_triples,
          }),
        ]);
    }
    store.setMany(entries);
    store.close();
    const started = performance.now();
    await indexProject(root, { llm: null });
    const indexMs = performance.now() - started;
    const index = (await loadMemoryIndex(root))!;
    const passageOf = new Map(corpus.map((p, i) => [passageText(p).trim(), `passage-${i}`]));
    const sums = new Map<string, number>();
    for (const q of questions) {
      const gold = new Set(
        q.paragraphs
          .filter((p) => p.is_supporting)
          .map((p) => passageOf.get(`${p.title}\n${p.paragraph_text}`.trim())),
      );
      for (const mode of MODES) {
        const ranked = (await rankChunks(index, q.question, mode, 10)).map(
          (r) => index.chunks[r.chunk].turns[0].uuid,
        );
        for (const k of KS) {
          const found = ranked.slice(0, k).filter((id) => gold.has(id)).length;
          sums.set(`${mode}@${k}`, (sums.get(`${mode}@${k}`) ?? 0) + found / gold.size);
        }
      }
    }
    const rows = MODES.map((mode) => {
      const row: Record<string, number | string> = { mode };
      for (const k of KS)
        row[`recall@${k}`] = Number(((100 * (sums.get(`${mode}@${k}`) ?? 0)) / questions.length).toFixed(1));
      return row;
    });
    return {
      rows,
      questions: questions.length,
      indexMs,
      graph: {
        passages: index.chunks.length,
        phrases: index.entityCount,
        facts: index.factCount,
        edges: index.edgeCount,
        cachedRecords: entries.length,
      },
    };
  } finally {
    closeWarmIndexes();
    scratch.cleanup();
  }
}

if (import.meta.main) {
  const result = await runMusique();
  if (process.argv.includes("--json")) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `MuSiQue slice: ${result.questions} questions, graph from stored OpenIE triples, indexed in ${(result.indexMs / 1000).toFixed(2)} s`,
    );
    console.log(result.graph);
    console.table(result.rows);
    const bm25 = result.rows.find((r) => r.mode === "bm25")!;
    for (const row of result.rows) {
      console.log(
        `${String(row.mode).padEnd(7)} recall@5 ${row["recall@5"]} = ${((Number(row["recall@5"]) / Number(bm25["recall@5"])) * 100).toFixed(0)}% of BM25 (published: BM25 50.8, HippoRAG-2 recipe 57.3)`,
      );
    }
  }
}
