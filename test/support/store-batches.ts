/**
 * Index batches made from a seed, the way the indexer writes them: chunks of several sessions whose
 * graphs share phrases and facts (so edges gain weight across chunks), vectors for new phrases and facts
 * only, synonym edges and summaries. The store suites write them to every backend and compare.
 */
import { factKey } from "../../src/store/sqlite.ts";
import type { IndexBatch, NewChunk } from "../../src/store/types.ts";
import { seededRandom } from "./random.ts";

export const DIM = 8;

function vectorFrom(random: () => number): Float32Array {
  return Float32Array.from({ length: DIM }, () => random() * 2 - 1);
}

/** A phrase's or fact's vector depends on it alone, so writers meeting it in any order agree. */
function vectorOf(key: string): Float32Array {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return vectorFrom(seededRandom(h));
}

/**
 * `batches` batches of `chunks` chunks each over `sessions` sessions; phrases and facts repeat across them.
 * Each batch carries vectors for the phrases and facts no earlier batch had, or, with `allVectors`, for all
 * of its own (as each of several writers does for what its own store read did not hold).
 */
export function storeBatches(
  seed: number,
  batches = 3,
  chunks = 6,
  sessions = 3,
  allVectors = false,
): IndexBatch[] {
  const random = seededRandom(seed);
  const knownPhrases = new Set<string>();
  const knownFacts = new Set<string>();
  const out: IndexBatch[] = [];
  let n = 0;
  for (let b = 0; b < batches; b++) {
    const entityVectors = new Map<string, Float32Array>();
    const factVectors = new Map<string, Float32Array>();
    const list: NewChunk[] = [];
    for (let c = 0; c < chunks; c++) {
      const k = n++;
      const session = `s${seed}-${k % sessions}`;
      const phrases = [...new Set(Array.from({ length: 4 }, () => `phrase ${Math.floor(random() * 12)}`))];
      for (const p of phrases)
        if (!knownPhrases.has(p) || allVectors) {
          knownPhrases.add(p);
          entityVectors.set(p, vectorOf(p));
        }
      const facts = [];
      for (let f = 0; f + 1 < phrases.length; f++) {
        const fact = {
          subject: phrases[f],
          predicate: random() < 0.5 ? "uses" : "fixes",
          object: phrases[f + 1],
        };
        facts.push(fact, fact); // stated twice: counts once
        const key = factKey(fact.subject, fact.predicate, fact.object);
        if (!knownFacts.has(key) || allVectors) {
          knownFacts.add(key);
          factVectors.set(key, vectorOf(key));
        }
      }
      const user = `question ${k} about ${phrases.join(", ")}`;
      const reply = `answer ${k}: ${phrases[0]} needs care`;
      const ts = `2025-04-${String(1 + (k % 27)).padStart(2, "0")}T10:00:${String(k % 60).padStart(2, "0")}.000Z`;
      list.push({
        hash: `hash-${seed}-${k}`,
        sessionId: session,
        ts,
        text: `${user}\n\n${reply}`,
        turns: [
          { uuid: `${session}-u${k}`, role: "user", ts, start: 0, end: user.length },
          {
            uuid: `${session}-a${k}`,
            role: "assistant",
            ts,
            start: user.length + 2,
            end: user.length + 2 + reply.length,
          },
        ],
        vector: vectorFrom(random),
        graph: { entities: phrases.map((p) => ({ phrase: p, label: p.toUpperCase() })), facts },
        graphSource: k % 5 === 0 ? "llm-pending" : "local",
      });
    }
    const phrases = [...knownPhrases];
    const synonyms = Array.from({ length: 3 }, () => ({
      a: phrases[Math.floor(random() * phrases.length)],
      b: phrases[Math.floor(random() * phrases.length)],
      score: 0.8 + random() / 10,
    }));
    out.push({
      model: "test-model",
      chunks: list,
      entityVectors,
      factVectors,
      synonyms,
      summaries: [...new Set(list.map((c) => c.sessionId))].map((sessionId) => ({
        sessionId,
        date: "2025-04-01",
        ts: list[list.length - 1].ts,
        text: `Topic of ${sessionId}\n- Decided: keep ${phrases[0]}`,
        source: "extractive",
      })),
    });
  }
  return out;
}
