/**
 * How good the no-LLM session summaries are, next to baselines from the same run.
 *
 * 1. LoCoMo (../shared/eval/memory/locomo): every session's extractive summary against the reference
 *    `session_summary` and `observation`: ROUGE-1 / ROUGE-L F1 (lower-cased words, no stemming) and the
 *    share of the observations' evidence turns the summary draws a sentence from. Baseline: the lead, the
 *    session's first words, as many as the summary has. Conversations 0–4 are the tuning half, 5–9 held out.
 * 2. Decisions in real Claude Code transcripts (../shared/fixtures/transcripts, labels written by hand in
 *    benchmark/decisions/labels.json by the rule in RULE.md): precision and recall of the `Decided:` lines.
 *    Baseline: every sentence with a decision word (the keyword rule the summariser had before).
 *
 * Run: bun benchmark/summary.ts
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { chunkRecords } from "../src/memory/chunking.ts";
import { decidedLines, extractiveSummary, summaryProse } from "../src/memory/summary.ts";
import { parseTranscript } from "../src/memory/transcript.ts";
import { redact } from "../src/privacy/index.ts";
import { LOCOMO, type LocomoSample, locomoRecords, SHARED } from "./memory-data.ts";

const TRANSCRIPTS = join(SHARED, "fixtures/transcripts");
const LABELS = join(import.meta.dir, "decisions/labels.json");

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

function lcs(a: string[], b: string[]): number {
  let previous = new Uint16Array(b.length + 1);
  let current = new Uint16Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++)
      current[j] = a[i - 1] === b[j - 1] ? previous[j - 1] + 1 : Math.max(previous[j], current[j - 1]);
    [previous, current] = [current, previous];
  }
  return previous[b.length];
}

function f1(overlap: number, candidate: number, reference: number): number {
  if (!overlap || !candidate || !reference) return 0;
  const p = overlap / candidate;
  const r = overlap / reference;
  return (2 * p * r) / (p + r);
}

function rouge(candidate: string, reference: string): { r1: number; rl: number } {
  const c = words(candidate);
  const r = words(reference);
  const counts = new Map<string, number>();
  for (const w of r) counts.set(w, (counts.get(w) ?? 0) + 1);
  let overlap = 0;
  for (const w of c) {
    const left = counts.get(w) ?? 0;
    if (left > 0) {
      overlap++;
      counts.set(w, left - 1);
    }
  }
  return { r1: f1(overlap, c.length, r.length), rl: f1(lcs(c, r), c.length, r.length) };
}

/** The first `n` words of a session's turns, in order: the lead baseline. */
function lead(records: ChatRecord[], n: number): string {
  const out: string[] = [];
  for (const record of records) {
    for (const w of record.text.split(/\s+/).filter(Boolean)) {
      if (out.length >= n) return out.join(" ");
      out.push(w);
    }
  }
  return out.join(" ");
}

/** Turns the text draws on: a run of 5 words of the text (or a whole shorter turn) is in the turn. */
function turnsDrawnOn(text: string, records: ChatRecord[]): Set<string> {
  const drawn = new Set<string>();
  const textWords = words(text);
  const grams = new Set<string>();
  for (let i = 0; i + 5 <= textWords.length; i++) grams.add(textWords.slice(i, i + 5).join(" "));
  const whole = ` ${textWords.join(" ")} `;
  for (const record of records) {
    const w = words(record.text);
    if (w.length < 5) {
      if (w.length >= 3 && whole.includes(` ${w.join(" ")} `)) drawn.add(record.uuid ?? "");
      continue;
    }
    for (let i = 0; i + 5 <= w.length; i++) {
      if (grams.has(w.slice(i, i + 5).join(" "))) {
        drawn.add(record.uuid ?? "");
        break;
      }
    }
  }
  return drawn;
}

interface Tally {
  sessions: number;
  summarised: number;
  words: number;
  ours: { r1: number; rl: number; o1: number; ol: number };
  lead: { r1: number; rl: number; o1: number; ol: number };
  evidence: number;
  evidenceOurs: number;
  evidenceLead: number;
}

const emptyTally = (): Tally => ({
  sessions: 0,
  summarised: 0,
  words: 0,
  ours: { r1: 0, rl: 0, o1: 0, ol: 0 },
  lead: { r1: 0, rl: 0, o1: 0, ol: 0 },
  evidence: 0,
  evidenceOurs: 0,
  evidenceLead: 0,
});

function locomo(): void {
  const samples = JSON.parse(readFileSync(LOCOMO, "utf8")) as (LocomoSample & {
    session_summary: Record<string, string>;
    observation: Record<string, Record<string, [string, string | string[]][]>>;
  })[];
  const halves = [emptyTally(), emptyTally()];
  samples.forEach((sample, index) => {
    const tally = halves[index < samples.length / 2 ? 0 : 1];
    const bySession = new Map<string, ChatRecord[]>();
    for (const record of locomoRecords(sample)) {
      let list = bySession.get(record.session_id);
      if (!list) bySession.set(record.session_id, (list = []));
      list.push(record);
    }
    for (const [sessionId, records] of bySession) {
      const key = sessionId.slice(sessionId.lastIndexOf("-") + 1); // session_<n>
      const reference = sample.session_summary[`${key}_summary`];
      const observations = sample.observation[`${key}_observation`];
      if (!reference || !observations) continue;
      const observed = Object.values(observations).flat();
      const observationText = observed.map(([text]) => text).join(" ");
      const evidence = new Set(
        observed
          .flatMap(([, ids]) => (Array.isArray(ids) ? ids : [ids]))
          .map((id) => `${sample.sample_id}/${id}`),
      );
      const summary = extractiveSummary(chunkRecords(records));
      const prose = summaryProse(summary);
      const n = words(prose).length;
      const baseline = lead(records, n);
      tally.sessions++;
      if (n > 0) tally.summarised++;
      tally.words += n;
      const add = (into: Tally["ours"], text: string) => {
        const s = rouge(text, reference);
        const o = rouge(text, observationText);
        into.r1 += s.r1;
        into.rl += s.rl;
        into.o1 += o.r1;
        into.ol += o.rl;
      };
      add(tally.ours, prose);
      add(tally.lead, baseline);
      tally.evidence += evidence.size;
      const ours = turnsDrawnOn(prose, records);
      const leads = turnsDrawnOn(baseline, records);
      for (const id of evidence) {
        if (ours.has(id)) tally.evidenceOurs++;
        if (leads.has(id)) tally.evidenceLead++;
      }
    }
  });
  const row = (name: string, t: Tally) => {
    const s = t.sessions || 1;
    const fmt = (x: number) => (x / s).toFixed(3);
    console.log(
      `${name.padEnd(14)} sessions ${t.summarised}/${t.sessions}, ${(t.words / s).toFixed(0)} words | ` +
        `summary R1 ${fmt(t.ours.r1)} RL ${fmt(t.ours.rl)} vs lead R1 ${fmt(t.lead.r1)} RL ${fmt(t.lead.rl)} ` +
        `(RL ×${(t.ours.rl / (t.lead.rl || 1)).toFixed(2)}) | observations R1 ${fmt(t.ours.o1)} RL ${fmt(t.ours.ol)} ` +
        `vs lead ${fmt(t.lead.o1)} / ${fmt(t.lead.ol)} | evidence turns drawn on ${((100 * t.evidenceOurs) / (t.evidence || 1)).toFixed(1)}% ` +
        `vs lead ${((100 * t.evidenceLead) / (t.evidence || 1)).toFixed(1)}%`,
    );
  };
  const all = emptyTally();
  for (const h of halves) {
    all.sessions += h.sessions;
    all.summarised += h.summarised;
    all.words += h.words;
    for (const k of ["r1", "rl", "o1", "ol"] as const) {
      all.ours[k] += h.ours[k];
      all.lead[k] += h.lead[k];
    }
    all.evidence += h.evidence;
    all.evidenceOurs += h.evidenceOurs;
    all.evidenceLead += h.evidenceLead;
  }
  console.log("LoCoMo session summaries (no LLM):");
  row("all", all);
  row("tune 0-4", halves[0]);
  row("held-out 5-9", halves[1]);
}

interface Labels {
  transcripts: {
    file: string;
    split: "tune" | "held-out";
    decisions: { turn: string; quotes: string[] }[];
  }[];
}

const normal = (text: string) =>
  text.toLowerCase().replace(/[`*_]/g, "").replace(/…$/, "").replace(/\s+/g, " ").trim();

/** A line states a labelled decision when it holds one of its quotes, or is a part of one (clipped). */
function matches(line: string, quotes: string[]): boolean {
  const l = normal(line);
  return quotes.some((q) => {
    const quote = normal(q);
    return (
      l.includes(quote) ||
      (l.length >= 25 && quote.includes(l)) ||
      (quote.length >= 40 && l.includes(quote.slice(0, 40)))
    );
  });
}

/** The keyword rule the summariser used before: a sentence with a decision word, not a question. */
const KEYWORD =
  /\b(?:decid\w*|agreed?|we(?:'ll| will) (?:use|go|keep|switch)|let's|going with|chose|choose|switch(?:ed)? to|settled on|plan(?:ned)? (?:is|to)|instead of|the fix (?:is|was)|fixed|resolved|must|should(?: not)?|don't|do not|never|always|renamed?|replaced?|removed?|added?|moved?)\b/i;

function keywordLines(records: ChatRecord[]): string[] {
  const out: string[] = [];
  for (const r of records)
    for (const s of r.text.split(/(?<=[.!?])\s+|\n+/)) {
      const t = s.trim();
      if (t.length > 20 && KEYWORD.test(t) && !/\?(\s|$)/.test(t)) out.push(t);
    }
  return out;
}

function decisions(): void {
  const labels = JSON.parse(readFileSync(LABELS, "utf8")) as Labels;
  const score = { tune: [0, 0, 0, 0, 0, 0], "held-out": [0, 0, 0, 0, 0, 0] }; // tp lines, lines, found, labels, keyword tp, keyword lines
  const foundKeyword = { tune: 0, "held-out": 0 };
  for (const t of labels.transcripts) {
    const turns = parseTranscript(readFileSync(join(TRANSCRIPTS, t.file), "utf8")).turns;
    const records: ChatRecord[] = turns.map((turn, i) => ({
      ts: turn.timestamp ?? `2025-01-01T00:00:${String(i % 60).padStart(2, "0")}.000Z`,
      session_id: t.file,
      role: turn.role,
      text: redact(turn.text).text,
      uuid: turn.uuid,
    }));
    const lines = decidedLines(extractiveSummary(chunkRecords(records)));
    const s = score[t.split];
    s[1] += lines.length;
    s[3] += t.decisions.length;
    for (const line of lines) if (t.decisions.some((d) => matches(line, d.quotes))) s[0]++;
    for (const d of t.decisions) if (lines.some((line) => matches(line, d.quotes))) s[2]++;
    const keyword = keywordLines(records);
    s[5] += keyword.length;
    for (const line of keyword) if (t.decisions.some((d) => matches(line, d.quotes))) s[4]++;
    for (const d of t.decisions) if (keyword.some((line) => matches(line, d.quotes))) foundKeyword[t.split]++;
    if (process.env.VERBOSE) {
      console.log(`# ${t.file}`);
      for (const line of lines)
        console.log(`  ${t.decisions.some((d) => matches(line, d.quotes)) ? "+" : "-"} ${line}`);
      for (const d of t.decisions)
        if (!lines.some((line) => matches(line, d.quotes))) console.log(`  MISSED ${d.quotes[0]}`);
    }
  }
  console.log("Decided: lines on the labelled Claude Code transcripts (no LLM):");
  for (const split of ["tune", "held-out"] as const) {
    const [tp, n, found, total, ktp, kn] = score[split];
    console.log(
      `${split.padEnd(9)} precision ${(tp / (n || 1)).toFixed(2)} (${tp}/${n}) recall ${(found / (total || 1)).toFixed(2)} (${found}/${total}) | ` +
        `keyword baseline precision ${(ktp / (kn || 1)).toFixed(2)} (${ktp}/${kn}) recall ${(foundKeyword[split] / (total || 1)).toFixed(2)}`,
    );
  }
  const [a, b] = [score.tune, score["held-out"]];
  const tp = a[0] + b[0];
  const n = a[1] + b[1];
  const found = a[2] + b[2];
  const total = a[3] + b[3];
  console.log(
    `all       precision ${(tp / (n || 1)).toFixed(2)} (${tp}/${n}) recall ${(found / (total || 1)).toFixed(2)} (${found}/${total}) | ` +
      `keyword baseline precision ${((a[4] + b[4]) / (a[5] + b[5] || 1)).toFixed(2)} recall ${((foundKeyword.tune + foundKeyword["held-out"]) / (total || 1)).toFixed(2)}`,
  );
}

locomo();
decisions();
