/**
 * The ledger: one record per hook or tool run (event, duration, outcome, tokens), append-only, in the
 * project's data folder (`hooks.jsonl`). What memory costs and whether its hooks work, for `status`
 * and `doctor`. A hook run that never finished (killed at its timeout) leaves its start record alone.
 *
 * Two ways in: `appendRecord` (node:fs, for runs that load it anyway: capture, index, the MCP server)
 * and `writePendingRecord` (Bun.write, one small file under `hooks.pending/`, for the prelude, whose
 * start-up budget has no room for node:fs); the next `appendRecord` folds pending files into the log.
 * PERF: imports only node:path and paths.ts; node:fs is loaded inside the functions that need it.
 */
import { join } from "node:path";
import { hookLedgerPath, hookPendingDir } from "./paths.ts";

export type LedgerEvent = "prelude" | "capture" | "index" | "rag_search" | "code_search";
/** `started`: written first by a hook; left alone, the run never finished (killed, timed out). */
export type LedgerOutcome = "ok" | "failed" | "started";

export interface LedgerRecord {
  ts: string;
  event: LedgerEvent;
  outcome: LedgerOutcome;
  /** Wall time of the run. */
  ms?: number;
  session?: string;
  /** Tokens the run put into the agent's context (prelude, rag_search, code_search). */
  tokens?: number;
  /** code_search: tokens of the whole files its snippets came from, what a grep-and-read agent would open. */
  fileTokens?: number;
  /** capture: turns appended. */
  turns?: number;
  /** index: chunks written; the LLM that built the graph, and how many of its calls failed. */
  chunks?: number;
  llm?: string | null;
  llmFailures?: number;
  error?: string;
  /** Which run a `started` record and its end share. */
  run?: string;
}

/** Prose and code run about 4 characters a token; the ledger estimates, it does not tokenise. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function fs(): typeof import("node:fs") {
  return require("node:fs");
}

const line = (record: LedgerRecord) => `${JSON.stringify(record)}\n`;

/** Appends a record (and any pending ones); never throws: a ledger must not fail the run it records. */
export function appendRecord(projectRoot: string, record: LedgerRecord): void {
  try {
    const { appendFileSync, existsSync, readdirSync, readFileSync, rmSync } = fs();
    const file = hookLedgerPath(projectRoot);
    // Only a project with a data folder (an active one that captured or indexed) keeps a ledger.
    if (!existsSync(join(file, ".."))) return;
    let pending = "";
    const dir = hookPendingDir(projectRoot);
    const names: string[] = [];
    try {
      for (const name of readdirSync(dir).sort()) {
        if (!name.endsWith(".json")) continue;
        const text = readFileSync(join(dir, name), "utf8").trim();
        if (text) pending += `${text}\n`;
        names.push(name);
      }
    } catch {
      // No pending folder: nothing to fold.
    }
    appendFileSync(file, pending + line(record));
    for (const name of names) rmSync(join(dir, name), { force: true });
  } catch {
    // A full disk or a read-only data folder: the run itself goes on.
  }
}

/**
 * A record as one small file (Bun.write creates the folder), for a hook that must not load node:fs.
 * Writing the same `name` again replaces the record: a hook writes `started`, then its outcome.
 */
export async function writePendingRecord(
  projectRoot: string,
  name: string,
  record: LedgerRecord,
): Promise<void> {
  try {
    await Bun.write(join(hookPendingDir(projectRoot), `${name}.json`), JSON.stringify(record));
  } catch {
    // As appendRecord: never fail the hook.
  }
}

/** A name for a run's pending record that no concurrent run shares. */
export function runName(event: LedgerEvent): string {
  return `${Date.now()}-${process.pid}-${event}`;
}

/** Every record, oldest first: hooks.jsonl, then pending files. Bad lines are skipped. */
export function readLedger(projectRoot: string): LedgerRecord[] {
  const { readdirSync, readFileSync } = fs();
  const records: LedgerRecord[] = [];
  const add = (text: string) => {
    for (const raw of text.split("\n")) {
      if (!raw.trim()) continue;
      try {
        const record = JSON.parse(raw) as LedgerRecord;
        if (record && typeof record.event === "string" && typeof record.ts === "string") records.push(record);
      } catch {
        // A line cut by a crash: skipped.
      }
    }
  };
  try {
    add(readFileSync(hookLedgerPath(projectRoot), "utf8"));
  } catch {
    // No ledger yet.
  }
  try {
    const dir = hookPendingDir(projectRoot);
    for (const name of readdirSync(dir).sort())
      if (name.endsWith(".json")) add(readFileSync(join(dir, name), "utf8"));
  } catch {
    // No pending records.
  }
  // A `started` record whose run has an end record is not a run that never finished.
  const ended = new Set(records.filter((r) => r.run && r.outcome !== "started").map((r) => r.run));
  return records
    .filter((r) => r.outcome !== "started" || !ended.has(r.run))
    .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
}

export interface LedgerTotals {
  preludeTokens: number;
  preludes: number;
  ragTokens: number;
  ragSearches: number;
  codeTokens: number;
  codeFileTokens: number;
  codeSearches: number;
}

export function ledgerTotals(records: LedgerRecord[]): LedgerTotals {
  const totals: LedgerTotals = {
    preludeTokens: 0,
    preludes: 0,
    ragTokens: 0,
    ragSearches: 0,
    codeTokens: 0,
    codeFileTokens: 0,
    codeSearches: 0,
  };
  for (const r of records) {
    if (r.outcome !== "ok") continue;
    if (r.event === "prelude") {
      totals.preludes++;
      totals.preludeTokens += r.tokens ?? 0;
    } else if (r.event === "rag_search") {
      totals.ragSearches++;
      totals.ragTokens += r.tokens ?? 0;
    } else if (r.event === "code_search") {
      totals.codeSearches++;
      totals.codeTokens += r.tokens ?? 0;
      totals.codeFileTokens += r.fileTokens ?? 0;
    }
  }
  return totals;
}

const seconds = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

/**
 * The records of each session, in order. Only capture knows its session (the hook JSON's session_id): a
 * prelude belongs to the session whose captures follow it, an index run or a search to the one whose
 * captures came before.
 */
export function recordsBySession(records: LedgerRecord[]): Map<string, LedgerRecord[]> {
  const bySession = new Map<string, LedgerRecord[]>();
  let current: string | undefined;
  let waiting: LedgerRecord[] = [];
  const add = (key: string, r: LedgerRecord) => {
    let list = bySession.get(key);
    if (!list) bySession.set(key, (list = []));
    list.push(r);
  };
  for (const r of records) {
    if (r.session) {
      if (r.session !== current) {
        for (const w of waiting) add(r.session, w);
        waiting = [];
        current = r.session;
      }
      add(r.session, r);
    } else if (r.event === "prelude" || current === undefined) waiting.push(r);
    else add(current, r);
  }
  return bySession;
}

/** What memory cost and saved in one session: the web page's chart. */
export interface SessionTokens {
  session: string;
  ts: string;
  /** Tokens put into the session's context: its prelude and its rag_search answers. */
  injected: number;
  /** Tokens of whole files code_search's snippets stood in for, less the snippets' own. */
  saved: number;
}

export function sessionTokens(records: LedgerRecord[]): SessionTokens[] {
  return [...recordsBySession(records).entries()].map(([session, list]) => {
    const ok = list.filter((r) => r.outcome === "ok");
    const injected = ok
      .filter((r) => r.event === "prelude" || r.event === "rag_search")
      .reduce((n, r) => n + (r.tokens ?? 0), 0);
    const saved = ok
      .filter((r) => r.event === "code_search")
      .reduce((n, r) => n + Math.max(0, (r.fileTokens ?? 0) - (r.tokens ?? 0)), 0);
    return { session, ts: list[0].ts, injected, saved };
  });
}

/** One line per recent session: "prelude 612 tokens · capture 14 turns · index ok in 0.4 s". */
export function sessionLines(records: LedgerRecord[], sessions = 3): string[] {
  return [...recordsBySession(records).entries()].slice(-sessions).map(([session, list]) => {
    const parts: string[] = [];
    const prelude = list.filter((r) => r.event === "prelude");
    if (prelude.length) {
      const last = prelude[prelude.length - 1];
      parts.push(last.outcome === "ok" ? `prelude ${last.tokens ?? 0} tokens` : `prelude ${last.outcome}`);
    }
    const captures = list.filter((r) => r.event === "capture");
    if (captures.length) {
      const turns = captures.reduce((n, r) => n + (r.turns ?? 0), 0);
      const failed = captures.filter((r) => r.outcome !== "ok").length;
      parts.push(`capture ${turns} turns${failed ? ` (${failed} failed)` : ""}`);
    }
    const index = list.filter((r) => r.event === "index").at(-1);
    if (index)
      parts.push(index.outcome === "ok" ? `index ok in ${seconds(index.ms ?? 0)}` : `index ${index.outcome}`);
    const rag = list.filter((r) => r.event === "rag_search" && r.outcome === "ok");
    if (rag.length)
      parts.push(`rag_search ${rag.length}× ${rag.reduce((n, r) => n + (r.tokens ?? 0), 0)} tokens`);
    const date = list[0].ts.slice(0, 16).replace("T", " ");
    return `${date} ${session.slice(0, 8)}: ${parts.join(" · ") || "no hook ran"}`;
  });
}

/** The running ledger as status prints it. */
export function ledgerLines(records: LedgerRecord[]): string[] {
  const t = ledgerTotals(records);
  const lines = [
    `injected by preludes: ${t.preludeTokens} tokens in ${t.preludes} session(s); by rag_search: ${t.ragTokens} tokens in ${t.ragSearches} call(s)`,
  ];
  if (t.codeSearches) {
    const saved = Math.max(0, t.codeFileTokens - t.codeTokens);
    lines.push(
      `code_search: ${t.codeTokens} tokens of snippets in ${t.codeSearches} call(s) instead of ${t.codeFileTokens} tokens of whole files (${saved} saved)`,
    );
  }
  return lines;
}

/** Hook runs that failed or never finished, and index runs whose LLM calls all failed, newest last. */
export function ledgerProblems(records: LedgerRecord[], last = 50): string[] {
  const problems: string[] = [];
  for (const r of records.slice(-last)) {
    const when = r.ts.slice(0, 16).replace("T", " ");
    if (r.outcome === "started") problems.push(`${r.event} at ${when} never finished (killed or timed out)`);
    else if (r.outcome === "failed")
      problems.push(`${r.event} at ${when} failed${r.error ? `: ${r.error}` : ""}`);
    else if (
      r.event === "index" &&
      r.llm &&
      (r.llmFailures ?? 0) > 0 &&
      (r.llmFailures ?? 0) >= (r.chunks ?? 0)
    )
      problems.push(
        `index at ${when}: every LLM call to ${r.llm} failed (${r.llmFailures}); the graph was built by the local extractor`,
      );
  }
  return problems;
}

/** What `status` shows of the ledger: the last sessions at a glance and the running totals. */
export function ledgerReport(projectRoot: string): {
  sessions: string[];
  ledger: string[];
  totals: LedgerTotals;
} {
  const records = readLedger(projectRoot);
  return {
    sessions: sessionLines(records),
    ledger: records.length ? ledgerLines(records) : [],
    totals: ledgerTotals(records),
  };
}
