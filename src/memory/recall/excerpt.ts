/**
 * What one recall hit shows: the whole chunk when it is short, else an excerpt of whole turns around the
 * turn that best matches the query, marked as cut. Five hits of a few pasted logs would otherwise fill
 * the agent's context with text it did not ask for.
 */
import { lexicalTokens, STOPWORDS } from "../tokens.ts";

/**
 * Most characters one hit's text holds, cut markers included: five hits stay under ~7,500 characters
 * (about 2,000 tokens of the agent's context), and a chunk of several turns (MAX_CHUNK_CHARS = 2,000)
 * loses at most a turn or two at its ends.
 */
export const MAX_HIT_CHARS = 1_500;
/** Room kept for the cut markers and a cut turn's label, so that the whole text stays within MAX_HIT_CHARS. */
const MARKER_ROOM = 120;
/** Where the first query word sits in a window cut out of one long turn: a little context before it. */
const LEAD_SHARE = 0.25;

interface TurnSpan {
  role: string;
  start: number;
  end: number;
}

/** The hit text (each turn labelled by its role), cut to MAX_HIT_CHARS around the best-matching turn. */
export function hitExcerpt(text: string, turns: TurnSpan[], query: string): string {
  const labelled = turns.map((t) => `[${t.role}] ${text.slice(t.start, t.end)}`);
  const whole = labelled.join("\n");
  if (whole.length <= MAX_HIT_CHARS) return whole;
  const budget = MAX_HIT_CHARS - MARKER_ROOM;
  const best = bestTurn(labelled, query);
  let from = best;
  let to = best + 1;
  let length = labelled[best].length;
  let shown: string[];
  if (length > budget) {
    shown = [windowAround(labelled[best], query, budget)];
  } else {
    // Whole neighbours, the later one first: an answer often sits in the turn after the one that matches.
    for (let grew = true; grew; ) {
      grew = false;
      for (const side of [to, from - 1]) {
        if (side < 0 || side >= labelled.length || length + 1 + labelled[side].length > budget) continue;
        length += 1 + labelled[side].length;
        if (side === to) to++;
        else from--;
        grew = true;
      }
    }
    shown = labelled.slice(from, to);
  }
  const before = from > 0 ? [`[… ${from} earlier turn(s) of this chunk cut]`] : [];
  const after = to < labelled.length ? [`[… ${labelled.length - to} later turn(s) of this chunk cut]`] : [];
  return [...before, ...shown, ...after].join("\n");
}

/** Cuts any text to MAX_HIT_CHARS with a marker (for hits that did not come through hitExcerpt). */
export function capHitText(text: string): string {
  if (text.length <= MAX_HIT_CHARS) return text;
  const marker = `\n[… cut: ${MAX_HIT_CHARS - MARKER_ROOM} of ${text.length} characters shown]`;
  return text.slice(0, MAX_HIT_CHARS - MARKER_ROOM) + marker;
}

/** The turn holding the most distinct query terms (the first on a tie). */
function bestTurn(labelled: string[], query: string): number {
  const asked = new Set(lexicalTokens(query));
  let best = 0;
  let bestScore = -1;
  labelled.forEach((turn, i) => {
    const score = new Set(lexicalTokens(turn).filter((t) => asked.has(t))).size;
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  return best;
}

/** A window of `size` characters of one long turn, starting a little before its first query word. */
function windowAround(turn: string, query: string, size: number): string {
  const lower = turn.toLowerCase();
  const words = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w.length > 2 && !STOPWORDS.has(w));
  const hits = words.map((w) => lower.indexOf(w)).filter((i) => i >= 0);
  const first = hits.length ? Math.min(...hits) : 0;
  const start = Math.max(0, Math.min(first - Math.floor(size * LEAD_SHARE), turn.length - size));
  const end = start + size;
  // A window that starts inside the turn keeps the turn's role label.
  const label = start > 0 ? (turn.match(/^\[[^\]\n]+\] /)?.[0] ?? "") : "";
  return `${label}${start > 0 ? "…" : ""}${turn.slice(start, end)}${end < turn.length ? "…" : ""}`;
}
