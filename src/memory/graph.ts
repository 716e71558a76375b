/**
 * Turning extractor output (local or OpenIE) into a chunk's graph contribution. Both graph sources end
 * in the same ChunkGraph shape, so everything after this point (store, PPR) is blind to where a fact
 * came from. The synonym edges between phrase nodes are store/synonyms.ts's.
 */
import type { OpenIEResult } from "../llm/openie.ts";
import type { ChunkGraph, EntityMention, FactMention } from "../store/types.ts";
import { normalizePhrase, phraseLabel } from "./phrases.ts";

/** A chunk's graph from a validated OpenIE result: each triple term is a phrase node, as in HippoRAG 2. */
export function graphFromOpenIE(result: OpenIEResult): ChunkGraph {
  const entities = new Map<string, EntityMention>();
  const facts = new Map<string, FactMention>();
  const mention = (raw: string) => {
    const phrase = normalizePhrase(raw);
    if (phrase && !entities.has(phrase)) entities.set(phrase, { phrase, label: phraseLabel(raw) });
    return phrase;
  };
  for (const [s, p, o] of result.triples) {
    const subject = mention(s);
    const object = mention(o);
    const predicate = p.normalize("NFKC").replace(/\s+/gu, " ").trim().toLowerCase();
    if (!subject || !object || subject === object || !predicate) continue;
    facts.set(`${subject}\u0001${predicate}\u0001${object}`, { subject, predicate, object });
  }
  // HippoRAG 2 builds phrase nodes from triple terms only; named entities that no triple uses still
  // link their passage, which keeps a passage with no triple reachable from the graph.
  for (const e of result.entities) mention(e);
  return { entities: [...entities.values()], facts: [...facts.values()] };
}
