#!/usr/bin/env bun
/**
 * How fast `triforge import` adds a project's existing history to its memory:
 *
 *   bun benchmark/import.ts [--copies 20] [--rounds 3]
 *
 * Lays out a home folder with past sessions of one project: every main transcript in
 * ../shared/fixtures/transcripts (real Claude Code records, CLI 1.0.98 to 2.1.332) `copies` times, uuids
 * and session ids renumbered per copy so no two are the same, and as many Codex rollouts (the test
 * fixture's records, renumbered). Then, `rounds` times, interleaved: reading every session file whole
 * (the baseline: what any import must pay), reading and parsing them (what is left is redaction and
 * the writes), and the import itself (find, parse, redact, append to chats.jsonl, per-session state)
 * into a fresh data directory. Indexing is not included (see
 * benchmark/index.ts). Prints MB/s and sessions/s for both, medians of the rounds.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { claudeSlug } from "../src/memory/import/claude.ts";
import { parseRollout } from "../src/memory/import/codex.ts";
import { findSessions, importHistory } from "../src/memory/import/history.ts";
import { parseTranscript } from "../src/memory/transcript.ts";

const ROOT = resolve(import.meta.dir, "..");
const TRANSCRIPTS = resolve(ROOT, "../shared/fixtures/transcripts");
const CODEX_FIXTURE = join(ROOT, "test", "fixtures", "agents", "codex");

const { values } = parseArgs({
  options: { copies: { type: "string", default: "20" }, rounds: { type: "string", default: "3" } },
});
const copies = Number(values.copies);
const rounds = Number(values.rounds);

const work = mkdtempSync(join(tmpdir(), "triforge-bench-import-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const home = join(work, "home");
const project = join(work, "project");
mkdirSync(join(project, ".triforge"), { recursive: true });
writeFileSync(join(project, ".triforge", "config.json"), '{"storage":"local","llm":"none","exclude":[]}\n');

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** Every uuid of a copy gets the copy's number in its last four digits: distinct records, same shape. */
function renumber(text: string, copy: number): string {
  return text.replace(UUID, (id) => id.slice(0, -4) + copy.toString(16).padStart(4, "0"));
}
const CWD = /"cwd":"[^"]*"/g;

const claudeDir = join(home, ".claude", "projects", claudeSlug(project));
mkdirSync(claudeDir, { recursive: true });
const mains = readdirSync(TRANSCRIPTS).filter((n) => n.endsWith(".jsonl") && !n.includes("subagent"));
for (let copy = 0; copy < copies; copy++)
  for (const name of mains) {
    const text = renumber(readFileSync(join(TRANSCRIPTS, name), "utf8"), copy).replace(
      CWD,
      `"cwd":${JSON.stringify(project)}`,
    );
    const id = /"sessionId":"([^"]+)"/.exec(text)?.[1] ?? `${copy}-${name}`;
    writeFileSync(join(claudeDir, `${id}.jsonl`), text);
  }
const rollouts = readdirSync(CODEX_FIXTURE).filter((n) => n.startsWith("rollout-2026"));
const codexDir = join(home, ".codex", "sessions", "2026", "03", "14");
mkdirSync(codexDir, { recursive: true });
for (let copy = 0; copy < copies; copy++)
  for (const name of rollouts) {
    const text = renumber(readFileSync(join(CODEX_FIXTURE, name), "utf8"), copy).replaceAll(
      "/home/user/acme-shop",
      project,
    );
    writeFileSync(join(codexDir, renumber(name, copy)), text);
  }

const where = { home, env: {} as Record<string, string | undefined> };
const sessions = findSessions(project, where);
const bytes = sessions.reduce((sum, s) => sum + s.bytes, 0);

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const readMs: number[] = [];
const parseMs: number[] = [];
const importMs: number[] = [];
let appended = 0;
for (let round = 0; round < rounds; round++) {
  let start = performance.now();
  let total = 0;
  for (const s of sessions) total += readFileSync(s.path).length;
  readMs.push(performance.now() - start);
  if (total !== bytes) throw new Error(`read ${total} bytes of ${bytes}`);

  start = performance.now();
  for (const s of sessions) {
    const text = readFileSync(s.path, "utf8");
    if (s.agent === "claude") parseTranscript(text);
    else parseRollout(text, s.sessionId, "");
  }
  parseMs.push(performance.now() - start);

  process.env.TRIFORGE_HOME = join(work, `data-${round}`);
  start = performance.now();
  const report = await importHistory(project, where);
  importMs.push(performance.now() - start);
  if (report.sessions !== sessions.length || report.failed)
    throw new Error(`imported ${report.sessions} of ${sessions.length}`);
  appended = report.appended;
}

const mb = bytes / 1e6;
const line = (label: string, ms: number) =>
  `${label.padEnd(22)} ${(ms / 1000).toFixed(3)} s   ${(mb / (ms / 1000)).toFixed(1).padStart(7)} MB/s   ${(sessions.length / (ms / 1000)).toFixed(0).padStart(6)} sessions/s`;
console.log(
  `${sessions.length} sessions (${sessions.filter((s) => s.agent === "claude").length} Claude Code, ${sessions.filter((s) => s.agent === "codex").length} Codex), ${mb.toFixed(1)} MB, ${appended} records; median of ${rounds} rounds`,
);
console.log(line("read the files alone", median(readMs)));
console.log(line("read and parse alone", median(parseMs)));
console.log(line("triforge import", median(importMs)));
console.log(`import / read: ${(median(importMs) / median(readMs)).toFixed(1)}x the time`);
