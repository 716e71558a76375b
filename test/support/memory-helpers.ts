/** Small data the memory tests make for themselves: chat records, an active project, a store dump. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectDataDir } from "../../src/home/paths.ts";
import type { ChatRecord } from "../../src/memory/chatlog.ts";
import { indexProject } from "../../src/memory/indexer.ts";
import { openStoreForWrite } from "../../src/store/open.ts";
import { tempDir } from "./helpers.ts";

/** Points this process's data directory at a fresh temp folder; returns a maker of active projects. */
export function memoryHome(): { home: string; project: (name: string, config?: object) => string } {
  const home = tempDir("triforge-memory-");
  process.env.TRIFORGE_HOME = join(home, "data");
  return {
    home,
    project(name, config = { llm: "none" }) {
      const root = join(home, name);
      mkdirSync(join(root, ".triforge"), { recursive: true });
      writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify(config));
      return root;
    },
  };
}

export function chatLog(root: string): string {
  return join(projectDataDir(root), "chats.jsonl");
}

/** Each run's records appended to the project's chats.jsonl, then indexed (no LLM); returns the project. */
export async function indexRuns(root: string, ...runs: ChatRecord[][]): Promise<string> {
  for (const records of runs) {
    appendRecords(root, records);
    await indexProject(root, { llm: null });
  }
  return root;
}

/** Appends records to the project's chats.jsonl as capture would. */
export function appendRecords(root: string, records: ChatRecord[]): void {
  mkdirSync(projectDataDir(root), { recursive: true });
  writeFileSync(chatLog(root), records.map((r) => `${JSON.stringify(r)}\n`).join(""), { flag: "a" });
}

let counter = 0;
/** A user turn and its reply in a session. */
export function exchange(session: string, user: string, assistant: string, day = 1): ChatRecord[] {
  const n = ++counter;
  const ts = `2025-03-${String(day).padStart(2, "0")}T10:${String(n % 60).padStart(2, "0")}:00.000Z`;
  return [
    { ts, session_id: session, role: "user", text: user, uuid: `${session}-u${n}` },
    { ts, session_id: session, role: "assistant", text: assistant, uuid: `${session}-a${n}` },
  ];
}

const TOPICS = [
  ["parseUser", "src/auth/session.ts", "zod", "the login flow"],
  ["renderChart", "src/ui/chart.tsx", "d3", "the dashboard"],
  ["queueWorker", "src/jobs/worker.ts", "redis", "the billing retries"],
  ["migrateSchema", "db/migrations/0042.sql", "postgres", "the orders table"],
  ["fetchTokens", "src/api/client.ts", "undici", "the rate limiter"],
  ["buildIndex", "src/search/index.ts", "sqlite", "the search ranking"],
];

/** A deterministic coding conversation of `sessions` × `exchanges` exchanges, varied enough for a graph. */
/**
 * Sessions naming look-alike identifiers (`retry_handler_7`, `retry_handler_23`: cosine 0.95–0.99 to
 * each other), so every phrase has far more synonym neighbours above the threshold than it keeps,
 * numbered from `first` so two conversations share some.
 */
export function lookAlikes(prefix: string, sessions: number, first: number): ChatRecord[] {
  const records: ChatRecord[] = [];
  for (let s = 0; s < sessions; s++)
    for (let e = 0; e < 4; e++) {
      const n = first + s * 8 + e * 2;
      records.push(
        ...exchange(
          `${prefix}${s}`,
          `Why does retry_handler_${n} call parse_config_${n + 1} before queue_worker_${n % 7}?`,
          `Because retry_handler_${n + 1} wraps parse_config_${n} and retry_handler_${n + 3}.`,
          1 + s,
        ),
      );
    }
  return records;
}

export function syntheticConversation(sessions: number, exchanges: number, prefix = "s"): ChatRecord[] {
  const records: ChatRecord[] = [];
  for (let s = 0; s < sessions; s++) {
    for (let e = 0; e < exchanges; e++) {
      const [fn, file, tool, topic] = TOPICS[(s * 7 + e) % TOPICS.length];
      const k = s * exchanges + e;
      records.push(
        ...exchange(
          `${prefix}${s}`,
          `Session ${s} step ${e}: why does ${fn} in ${file} fail for case_${k} with ${tool}? It affects ${topic} and "Release ${k % 9}".`,
          `${fn} calls helper_${k % 13}.run() before ${tool} is ready. I changed ${file} so Item${k % 11}Handler waits; decided to keep ${tool} v${1 + (k % 4)}.${k % 10}.0 for ${topic}.`,
          1 + (s % 28),
        ),
      );
    }
  }
  return records;
}

/** The store as comparable data: phrases, facts and edges named by phrase and chunk hash, not by row id. */
export function dumpGraph(root: string) {
  const store = openStoreForWrite(root);
  // biome-ignore lint/suspicious/noExplicitAny: a test reads the store's tables directly.
  const db = (store as any).db as import("bun:sqlite").Database;
  const phrase = new Map(
    (db.query("SELECT id, phrase FROM entities").all() as { id: number; phrase: string }[]).map((r) => [
      r.id,
      r.phrase,
    ]),
  );
  const chunk = new Map(
    (db.query("SELECT id, hash FROM chunks").all() as { id: number; hash: string }[]).map((r) => [
      r.id,
      r.hash,
    ]),
  );
  const facts = (
    db.query("SELECT subject, predicate, object FROM facts").all() as {
      subject: number;
      predicate: string;
      object: number;
    }[]
  )
    .map((f) => `${phrase.get(f.subject)}|${f.predicate}|${phrase.get(f.object)}`)
    .sort();
  const edges =
    // A synonym edge a newcomer pushed out keeps its row at weight 0 (store/sqlite.ts addSynonyms).
    (
      db.query("SELECT kind, a, b, weight FROM edges WHERE weight > 0").all() as {
        kind: number;
        a: number;
        b: number;
        weight: number;
      }[]
    )
      .map((e) => {
        const a = e.kind === 1 ? chunk.get(e.a) : phrase.get(e.a);
        const [x, y] = e.kind === 1 ? [a, phrase.get(e.b)] : [a, phrase.get(e.b)].sort();
        return `${e.kind}|${x}|${y}|${e.weight.toFixed(6)}`;
      })
      .sort();
  const chunks = [...chunk.values()].sort();
  const turns = (db.query("SELECT uuid FROM turns ORDER BY uuid").all() as { uuid: string }[]).map(
    (r) => r.uuid,
  );
  store.close();
  return { phrases: [...phrase.values()].sort(), facts, edges, chunks, turns };
}

/** A request the fake OpenAI server received, as far as telling the indexing steps apart needs. */
type LlmRequest = { body?: { messages?: { role: string; content: unknown }[] } };
const systemPrompt = (r: LlmRequest) =>
  String(r.body?.messages?.find((m) => m.role === "system")?.content ?? "");
/** Which indexing step sent a request: each step's system prompt opens its own way (src/llm). */
export const isReview = (r: LlmRequest) => systemPrompt(r).startsWith("You review strings");
export const isNer = (r: LlmRequest) => systemPrompt(r).startsWith("You extract named entities");
export const isTriples = (r: LlmRequest) => systemPrompt(r).startsWith("You build an RDF graph");
export const isSummary = (r: LlmRequest) => systemPrompt(r).startsWith("You summarise");

/** indexProject's LLM options for the fake OpenAI server at `url`: its key, its address, no waiting between retries. */
export function fakeOpenAiOptions(url: string) {
  return {
    env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: `${url}/v1` },
    retry: { sleep: async () => {} },
  };
}
