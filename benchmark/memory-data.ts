/**
 * Loaders shared by the memory benchmarks: LoCoMo and the HippoRAG MuSiQue slice (../shared/eval/memory,
 * formats in ../shared/eval/README.md), written out as captured `chats.jsonl` so they go through the real
 * indexer. Benchmarks only; tests make their own data.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ChatRecord } from "../src/memory/chatlog.ts";

export const SHARED = resolve(import.meta.dir, "../../shared");
export const LOCOMO = join(SHARED, "eval/memory/locomo/locomo10.json");
export const MUSIQUE_DIR = join(SHARED, "eval/memory/hipporag");

export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
}
export interface LocomoQa {
  question: string;
  evidence: string[];
  category: number;
}
export interface LocomoSample {
  sample_id: string;
  conversation: Record<string, string | LocomoTurn[]>;
  qa: LocomoQa[];
}

/** A question's evidence as turn ids (`sample/D1:3`): LoCoMo lists some as "D1:3; D1:5" in one entry. */
export function evidenceTurnIds(sample: LocomoSample, qa: LocomoQa): Set<string> {
  return new Set(
    qa.evidence
      .flatMap((e) => e.split(/[;,]\s*/))
      .map((e) => e.trim())
      .filter(Boolean)
      .map((e) => `${sample.sample_id}/${e}`),
  );
}

const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

/** LoCoMo's "1:56 pm on 8 May, 2023" as an ISO timestamp (plus `offset` seconds to order turns). */
export function locomoTime(value: string, offsetSeconds: number): string {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i.exec(value);
  if (!m) return new Date(Date.UTC(2023, 0, 1) + offsetSeconds * 1000).toISOString();
  let hour = Number(m[1]) % 12;
  if (m[3].toLowerCase() === "pm") hour += 12;
  const month = MONTHS.indexOf(m[5].toLowerCase());
  return new Date(
    Date.UTC(Number(m[6]), Math.max(0, month), Number(m[4]), hour, Number(m[2])) + offsetSeconds * 1000,
  ).toISOString();
}

/**
 * One LoCoMo conversation as captured records: speaker A is the user, speaker B the assistant, one session
 * per LoCoMo session with its date; a record's uuid is `<sample_id>/<dia_id>` (unique across conversations
 * when several share one store), so hits map back to evidence turns.
 */
export function locomoRecords(sample: LocomoSample): ChatRecord[] {
  const c = sample.conversation;
  const speakerA = c.speaker_a as string;
  const records: ChatRecord[] = [];
  const sessions = Object.keys(c)
    .filter((k) => /^session_\d+$/.test(k))
    .sort((a, b) => Number(a.split("_")[1]) - Number(b.split("_")[1]));
  for (const key of sessions) {
    const date = (c[`${key}_date_time`] as string) ?? "";
    (c[key] as LocomoTurn[]).forEach((turn, i) => {
      records.push({
        ts: locomoTime(date, i),
        session_id: `${sample.sample_id}-${key}`,
        role: turn.speaker === speakerA ? "user" : "assistant",
        text: turn.text,
        uuid: `${sample.sample_id}/${turn.dia_id}`,
      });
    });
  }
  return records;
}

export async function loadLocomo(): Promise<LocomoSample[]> {
  return Bun.file(LOCOMO).json();
}

export interface MusiqueQuestion {
  id: string;
  question: string;
  paragraphs: { title: string; paragraph_text: string; is_supporting: boolean }[];
}
export interface MusiqueDoc {
  passage: string;
  extracted_entities: string[];
  extracted_triples: string[][];
}

export async function loadMusique(): Promise<{
  corpus: { title: string; text: string }[];
  questions: MusiqueQuestion[];
  openie: MusiqueDoc[];
}> {
  const [corpus, questions, openie] = await Promise.all([
    Bun.file(join(MUSIQUE_DIR, "legacy_musique_train_corpus.json")).json(),
    Bun.file(join(MUSIQUE_DIR, "legacy_musique_train.json")).json(),
    // Python wrote this file: its summary fields hold bare NaN, which is not JSON.
    Bun.file(join(MUSIQUE_DIR, "legacy_openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"))
      .text()
      .then((text) => JSON.parse(text.replace(/:\s*NaN\b/g, ": null"))),
  ]);
  return { corpus, questions, openie: openie.docs };
}

/** A passage as HippoRAG writes it (`title\ntext`), which is also the chunk text we index. */
export function passageText(p: { title: string; text: string }): string {
  return `${p.title}\n${p.text}`;
}

/**
 * A scratch folder whose data directory this process uses (TRIFORGE_HOME), and a maker of active
 * projects inside it.
 */
export function scratchHome(name: string): {
  project: (name: string) => string;
  home: string;
  cleanup: () => void;
} {
  const home = mkdtempSync(join(tmpdir(), `triforge-bench-${name}-`));
  process.env.TRIFORGE_HOME = join(home, "data");
  const project = (projectName: string) => {
    const root = join(home, projectName);
    mkdirSync(join(root, ".triforge"), { recursive: true });
    writeFileSync(
      join(root, ".triforge", "config.json"),
      JSON.stringify({ storage: "local", llm: "none", exclude: [] }),
    );
    return root;
  };
  return { home, project, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** Writes records as the project's chats.jsonl (what capture would have appended). */
export function writeChatLog(path: string, records: ChatRecord[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
}

/** Median and 95th percentile of a list of numbers. */
export function percentiles(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p95: at(0.95) };
}
