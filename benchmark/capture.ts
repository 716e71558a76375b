#!/usr/bin/env bun
/**
 * What the `Stop` hook costs after every agent reply:
 *
 *   bun benchmark/capture.ts [--runs 40] [--prefix-mb 0.3,3,30] [--binary dist/triforge-linux-x64]
 *                            [--compare <another triforge binary>]
 *
 * Builds the triforge binary and an empty Bun binary with the same flags (--compile --splitting
 * --bytecode --minify --format=esm), then for each size of an old transcript prefix (real records
 * from ../shared/fixtures/transcripts, uuids renumbered): captures the prefix once, untimed, and then,
 * `runs` times, appends 10 new turns and times `triforge capture` as a process, next to a capture with
 * nothing new and the empty binary, interleaved in the same loop. Goal: p95 ≤ 50 ms, fixed cost within
 * 1.5× the empty binary, and no growth with the prefix. `--compare` times a second triforge binary (an
 * older build, say) in the same loop, on a project of its own, so both see the same load.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildTarget, hostTarget } from "../build/build.ts";
import { resolveModelDir } from "../src/embed/source.ts";
import { projectKey } from "../src/home/paths.ts";
import { parseTranscript } from "../src/memory/transcript.ts";
import { redact } from "../src/privacy/index.ts";
import { buildEmptyBinary } from "./baseline.ts";

const ROOT = resolve(import.meta.dir, "..");
const FILLER = resolve(
  ROOT,
  "../shared/fixtures/transcripts/spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl",
);
const NEW_TURNS = 10;
const P95_GOAL_MS = 50;
const RATIO_GOAL = 1.5;

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "40" },
    "prefix-mb": { type: "string", default: "0.3,3,30" },
    binary: { type: "string" },
    compare: { type: "string" },
  },
});
const runs = Number(values.runs);
const prefixSizes = values["prefix-mb"]!.split(",").map(Number);

const work = mkdtempSync(join(tmpdir(), "triforge-bench-capture-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

const binary = values.binary
  ? resolve(values.binary)
  : await buildTarget(hostTarget(), work, resolveModelDir());
const empty = await buildEmptyBinary(work);

const home = join(work, "home");
const env = { ...process.env, HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") };

/** Real transcript records with fresh uuids, repeated until the prefix has `bytes` bytes. */
function writePrefix(file: string, bytes: number): void {
  const records = readFileSync(FILLER, "utf8")
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l));
  const chunks: string[] = [];
  let size = 0;
  for (let copy = 0; size < bytes; copy++) {
    for (const record of records) {
      const renumbered = { ...record, uuid: record.uuid && `${copy}-${record.uuid}` };
      if (record.message?.id) renumbered.message = { ...record.message, id: `${copy}-${record.message.id}` };
      const line = `${JSON.stringify(renumbered)}\n`;
      chunks.push(line);
      size += Buffer.byteLength(line);
      if (size >= bytes) break;
    }
  }
  writeFileSync(file, chunks.join(""));
}

/** Ten turns of ordinary prose, alternating user and assistant, with unique uuids. */
function newTurns(round: number): string {
  const prose =
    "We changed the retry policy in src/net/client.ts so that idempotent requests back off exponentially " +
    "with jitter, capped at eight seconds, and the integration test now runs against a local server on 127.0.0.1. ";
  let out = "";
  for (let i = 0; i < NEW_TURNS; i++) {
    const uuid = `bench-${round}-${i}`;
    const timestamp = new Date().toISOString();
    out += `${JSON.stringify(
      i % 2 === 0
        ? {
            type: "user",
            uuid,
            isSidechain: false,
            timestamp,
            message: { role: "user", content: `${prose}Question ${i}?` },
          }
        : {
            type: "assistant",
            uuid,
            isSidechain: false,
            timestamp,
            message: {
              id: `msg-${round}-${i}`,
              role: "assistant",
              content: [{ type: "text", text: prose.repeat(2) }],
            },
          },
    )}\n`;
  }
  return out;
}

function timeRun(command: string[], stdin?: string): number {
  const started = performance.now();
  const proc = Bun.spawnSync(command, {
    env,
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const elapsed = performance.now() - started;
  if (proc.exitCode !== 0 || proc.stdout.length)
    throw new Error(`${command.join(" ")}: exit ${proc.exitCode} ${proc.stdout}`);
  return elapsed;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const fmt = (ms: number) => ms.toFixed(1).padStart(6);

interface Case {
  mb: number;
  transcript: string;
  input: string;
  nothing: number[];
  turns: number[];
}

/** One binary's project (its own data folder) and transcripts, the old parts captured once. */
function prepare(bin: string, name: string) {
  const project = join(work, name);
  mkdirSync(join(project, ".triforge"), { recursive: true });
  writeFileSync(join(project, ".triforge", "config.json"), "{}\n");
  const capture = [bin, "capture", `--project=${project}`];
  const cases: Case[] = prefixSizes.map((mb) => {
    const session = `bench-${mb}`;
    const transcript = join(work, `${name}-${session}.jsonl`);
    writePrefix(transcript, mb * 1e6);
    const input = JSON.stringify({
      session_id: session,
      transcript_path: transcript,
      cwd: project,
      hook_event_name: "Stop",
    });
    timeRun(capture, input); // the old part, captured once, as the session's earlier replies did
    return { mb, transcript, input, nothing: [], turns: [] };
  });
  return {
    bin,
    project,
    capture,
    cases,
    errorsLog: join(env.TRIFORGE_HOME, projectKey(project), "errors.log"),
  };
}

const subjects = [
  prepare(binary, "project"),
  ...(values.compare ? [prepare(resolve(values.compare), "compared")] : []),
];
const emptyMs: number[] = [];
const newBytes = Buffer.byteLength(newTurns(0));
// Interleaved: every round times every binary, every prefix size and the empty binary, so load on the
// machine falls on all of them alike.
for (let round = 0; round < runs; round++) {
  emptyMs.push(timeRun([empty]));
  for (const { capture, cases } of subjects)
    for (const c of cases) {
      c.nothing.push(timeRun(capture, c.input));
      appendFileSync(c.transcript, newTurns(round));
      c.turns.push(timeRun(capture, c.input));
    }
}

const e50 = percentile(emptyMs, 50);
const e95 = percentile(emptyMs, 95);
console.log(`triforge capture of ${NEW_TURNS} new turns (${(newBytes / 1024).toFixed(1)} KB), ${runs} runs`);
console.log(`empty Bun binary, same flags: p50 ${fmt(e50)} ms, p95 ${fmt(e95)} ms`);
let worstP95 = 0;
let worstFixedRatio = 0;
let budgetMet = true;
for (const [index, { bin, cases }] of subjects.entries()) {
  console.log(index === 0 ? bin : `compared, same loop: ${bin}`);
  console.log(
    "prefix MB | nothing new p50 / p95 (× empty p95) | 10 new turns p50 / p95 (× empty p95) | new turns' own cost (p50 diff)",
  );
  for (const c of cases) {
    const [n50, n95, t50, t95] = [c.nothing, c.turns].flatMap((x) => [percentile(x, 50), percentile(x, 95)]);
    const newCost = Math.max(0, t50 - n50);
    if (index === 0) {
      worstP95 = Math.max(worstP95, t95);
      worstFixedRatio = Math.max(worstFixedRatio, n95 / e95);
      if (t95 > RATIO_GOAL * e95 + newCost) budgetMet = false;
    }
    console.log(
      `${String(c.mb).padStart(9)} | ${fmt(n50)} / ${fmt(n95)} (${(n95 / e95).toFixed(2)}×)       | ${fmt(t50)} / ${fmt(t95)} (${(t95 / e95).toFixed(2)}×)         | ${newCost.toFixed(1)} ms  (transcript ${(statSync(c.transcript).size / 1e6).toFixed(1)} MB)`,
    );
  }
}

// The work the new bytes need (parse + redact), warm, in this process, for reference: in the cold
// binary the first redact() also compiles the privacy rules.
const sample = newTurns(0);
const started = performance.now();
const REPS = 200;
for (let i = 0; i < REPS; i++)
  for (const turn of parseTranscript(sample).turns) redact(turn.text, { projectRoot: subjects[0].project });
const warmMs = (performance.now() - started) / REPS;

let errors = "";
for (const { errorsLog } of subjects)
  try {
    errors += readFileSync(errorsLog, "utf8");
  } catch {}
console.log(`parse + redact of the ${NEW_TURNS} new turns, warm, in process: ${warmMs.toFixed(2)} ms`);
console.log(
  `worst p95 of the first binary, 10 new turns: ${worstP95.toFixed(1)} ms (goal ≤ ${P95_GOAL_MS} ms): ${worstP95 <= P95_GOAL_MS ? "met" : "MISSED"}`,
);
console.log(
  `p95 ≤ ${RATIO_GOAL}× empty p95 + the new turns' own cost, at every prefix size: ${budgetMet ? "met" : "MISSED"}; fixed cost (nothing new) worst ${worstFixedRatio.toFixed(2)}× empty`,
);
if (errors) console.log(`errors.log is not empty:\n${errors}`);
