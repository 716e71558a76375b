import { displayPath } from "../../agents/report.ts";
import type { ImportReport } from "../../memory/import/history.ts";
import { AGENT_LABELS, agentHome, SOURCE_AGENTS, type SourceAgent } from "../../memory/import/sessions.ts";
import { findProjectRoot } from "../../project/config.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";
import { terminalProgress } from "../progress.ts";

/** `--agent claude|codex|cursor|opencode|all` (a comma-separated list works too). */
export function parseSourceAgents(value: string | undefined): readonly SourceAgent[] {
  if (value === undefined || value === "all") return SOURCE_AGENTS;
  const names = value.split(",").map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !(SOURCE_AGENTS as readonly string[]).includes(name));
  if (unknown.length || !names.length)
    throw new UsageError(`--agent takes ${SOURCE_AGENTS.join(", ")} or all; got '${value}'`);
  return [...new Set(names)] as SourceAgent[];
}

/** `--since 2026-01-31` (or any date `Date` reads): sessions changed on or after it. */
export function parseSince(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new UsageError(`--since takes a date such as 2026-01-31; got '${value}'`);
  return ms;
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e5 ? 2 : 1)} MB`;
}

/** "Claude Code 10, Codex 2" */
export function agentCounts(byAgent: Partial<Record<SourceAgent, number>>): string {
  return SOURCE_AGENTS.filter((a) => byAgent[a])
    .map((a) => `${AGENT_LABELS[a]} ${byAgent[a]}`)
    .join(", ");
}

function reportLine(root: string, report: ImportReport, indexed: string | undefined): string {
  if (!report.sessions && !report.failed && !report.forgotten)
    return `No earlier sessions found for ${displayPath(root)}.`;
  const parts = [
    `Imported ${report.sessions} session(s)${report.sessions ? ` (${agentCounts(report.byAgent)}; ${megabytes(report.bytes)})` : ""} in ${(report.ms / 1000).toFixed(1)} s`,
    `${report.appended} new record(s), ${report.skipped} already in memory`,
  ];
  if (report.failed) parts.push(`${report.failed} session(s) unreadable (see errors.log)`);
  if (report.forgotten) parts.push(`${report.forgotten} forgotten session(s) left out`);
  if (indexed) parts.push(indexed);
  return `${parts.join("; ")}.`;
}

/**
 * Imports and then indexes, so that `recall` finds the history right away. Shared by `import` and
 * `activate --import`. Prints one line; returns the exit code.
 */
export async function runImport(
  root: string,
  options: { agents?: readonly SourceAgent[]; sinceMs?: number },
): Promise<number> {
  const { importHistory } = await import("../../memory/import/history.ts");
  const bar = terminalProgress("sessions");
  const report = await importHistory(root, agentHome(), {
    ...options,
    onProgress: bar ? (done, total) => bar.update(done, total, "importing") : undefined,
  });
  bar?.clear();
  let indexed: string | undefined;
  if (report.appended) {
    const { indexProject } = await import("../../memory/indexer.ts");
    const indexBar = terminalProgress("chunks");
    const result = await indexProject(root, {
      onProgress: indexBar
        ? ({ phase, done, total }) => {
            if (phase !== "reading" && phase !== "done" && total > 0)
              indexBar.update(done, total, "indexing");
          }
        : undefined,
    });
    indexBar?.clear();
    indexed =
      result.status === "busy"
        ? "another indexer is running and will index them"
        : `indexed ${result.chunks} new chunk(s)`;
  }
  process.stdout.write(`${reportLine(root, report, indexed)}\n`);
  return report.failed && !report.sessions ? 1 : 0;
}

/**
 * After activation: import the project's earlier sessions ("yes"), ask first on a terminal ("ask";
 * elsewhere, such as /rag inside Claude Code, say how), or leave them ("no").
 */
export async function offerImport(root: string, choice: "yes" | "no" | "ask"): Promise<number> {
  if (choice === "no") return 0;
  const { findSessions } = await import("../../memory/import/history.ts");
  const found = findSessions(root, agentHome());
  if (!found.length) {
    if (choice === "yes") process.stdout.write(`No earlier sessions found for ${displayPath(root)}.\n`);
    return 0;
  }
  if (choice === "ask") {
    const byAgent: Partial<Record<SourceAgent, number>> = {};
    for (const s of found) byAgent[s.agent] = (byAgent[s.agent] ?? 0) + 1;
    const bytes = found.reduce((sum, s) => sum + s.bytes, 0);
    const summary = `${found.length} earlier session(s) of this project (${agentCounts(byAgent)}; ${megabytes(bytes)})`;
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      process.stdout.write(`Found ${summary}; 'triforge import' adds them to memory.\n`);
      return 0;
    }
    const { createInterface } = await import("node:readline/promises");
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    // A terminal closed before answering (Ctrl-D) is a no.
    const answer = await prompt
      .question(`Found ${summary}. Import them into memory now? [y/N] `)
      .catch(() => "");
    prompt.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      process.stdout.write("Not imported; 'triforge import' adds them any time.\n");
      return 0;
    }
  }
  return runImport(root, {});
}

export default defineCommand({
  usage: "triforge import [--project <path>] [--agent claude|codex|cursor|opencode|all] [--since <date>]",
  description:
    "Adds the project's past sessions to its memory: Claude Code transcripts (~/.claude/projects/), Codex rollouts (~/.codex/sessions/), Cursor agent transcripts (~/.cursor/projects/) and OpenCode sessions (~/.local/share/opencode/), with the same redaction and keys as live capture, so running it again or while sessions are captured never stores a turn twice. Subagent threads stay out. Then indexes what was added.",
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the current folder",
    },
    agent: {
      type: "string",
      arg: "name",
      default: "all",
      description: "claude, codex, cursor, opencode or all",
    },
    since: { type: "string", arg: "date", description: "Only sessions active on or after this date" },
  },
  async run({ values }) {
    const agents = parseSourceAgents(values.agent as string | undefined);
    const sinceMs = parseSince(values.since as string | undefined);
    const start = typeof values.project === "string" ? values.project : process.cwd();
    const root = findProjectRoot(start);
    if (!root)
      throw new UserError(
        `memory is not active for ${start} (no .triforge/config.json here or above); run 'triforge activate' first (it offers the import)`,
      );
    return runImport(root, { agents, sinceMs });
  },
});
