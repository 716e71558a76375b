import { logError } from "../../home/log.ts";
import { errorLogPath } from "../../home/paths.ts";
import { findProjectRoot } from "../../project/config.ts";
import { defineCommand, UserError } from "../command.ts";
import { readHookStdin } from "../hook-stdin.ts";
import { terminalProgress } from "../progress.ts";
import { count } from "../words.ts";

/**
 * `triforge index`: builds the project's memory from chats.jsonl. The SessionEnd hook runs it with
 * --background, which must return at once and never fail the hook: the real work happens in a detached
 * child, and anything that goes wrong lands in errors.log with exit 0.
 */
export default defineCommand({
  usage: "triforge index [--project <path>] [--background]",
  description:
    "Indexes what is new in the project's chats.jsonl: chunks, embeddings, BM25, the knowledge graph (LLM OpenIE when a key is configured, the local extractor otherwise) and summary.md. One indexer per project runs at a time; a damaged index is rebuilt from chats.jsonl.",
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the current folder",
    },
    background: { type: "boolean", description: "Detach and return at once (the SessionEnd hook)" },
    timings: { type: "boolean", description: "Also print how long each phase of the run took (ms, JSON)" },
  },
  async run({ values }) {
    const start = typeof values.project === "string" ? values.project : process.cwd();
    const root = findProjectRoot(start);
    if (values.background) {
      try {
        if (!root) return 0; // not an active project: nothing to do, and a hook must stay quiet
        // SessionEnd: the session's transcript is read to its end first, so that the reply a Stop hook
        // ran too early to see is indexed now. Claude Code gives this hook about 1.5 s: what does not
        // fit is read by the next SessionStart.
        const hookInput = readHookStdin();
        if (hookInput) {
          try {
            const { captureTranscript, parseHookInput } = await import("../../memory/capture.ts");
            const input = parseHookInput(hookInput);
            captureTranscript(root, input.session_id, input.transcript_path, {
              ended: true,
              budgetMs: 600,
              lockWaitMs: 400,
            });
          } catch (error) {
            logError("capture (SessionEnd)", error, root);
          }
        }
        // PERF: only the lock check and the spawn run here; the hook returns in milliseconds.
        (await import("../../memory/background.ts")).startIndexerUnlessRunning(root);
      } catch (error) {
        logError("index --background", error, root);
      }
      return 0;
    }
    if (!root)
      throw new UserError(
        `memory is not active for ${start} (no .triforge/config.json here or above); run 'triforge activate' first`,
      );
    const { indexProject } = await import("../../memory/indexer.ts");
    const bar = process.env.TRIFORGE_BACKGROUND ? undefined : terminalProgress("chunks");
    const onProgress = bar
      ? ({ phase, done, total }: { phase: string; done: number; total: number }) => {
          if (phase === "done") bar.clear();
          else if (phase !== "reading" && total > 0)
            bar.update(done, total, phase === "llm-retry" ? "retrying LLM graph" : "indexing");
        }
      : undefined;
    const { appendRecord } = await import("../../home/ledger.ts");
    const started = performance.now();
    const ts = new Date().toISOString();
    const ms = () => Math.round(performance.now() - started);
    try {
      const result = await indexProject(root, { onProgress });
      bar?.clear();
      if (result.status !== "busy")
        appendRecord(root, {
          ts,
          event: "index",
          outcome: "ok",
          ms: ms(),
          chunks: result.chunks,
          llm: result.llm,
          llmFailures: result.llmFailures,
        });
      if (result.status === "busy") {
        process.stdout.write(`another indexer is running for ${root}; it will pick up the new lines\n`);
        return 0;
      }
      // PERF: not at module load: this module is on the SessionEnd hook's path, and report.ts loads node:os.
      const { displayPath } = await import("../../agents/report.ts");
      const where = displayPath(root);
      // With a shared store: what went there, or why nothing did (the next run pushes it).
      const shared = result.shared;
      const sharedLine = shared?.error
        ? `Shared store not updated: ${shared.error}; the next index pushes what is left.\n`
        : shared?.push?.chunks
          ? `Pushed ${count(shared.push.chunks, "excerpt")} to the shared store.\n`
          : "";
      if (result.records === 0 && result.chunks === 0 && !result.rebuilt && !result.llmFailures) {
        process.stdout.write(
          `Memory of ${where} is up to date: nothing new since the last index.\n${sharedLine}`,
        );
        return 0;
      }
      const parts = [
        `${count(result.records, "new turn")} from ${count(result.sessions, "session")}, stored as ${count(result.chunks, "excerpt")}`,
      ];
      if (result.rebuilt) parts.push("the index was damaged and has been rebuilt from the chat log");
      if (result.badLines) parts.push(`${count(result.badLines, "unreadable line")} of the chat log skipped`);
      parts.push(
        result.llm ? `knowledge graph by ${result.llm}` : "knowledge graph by the local extractor (no LLM)",
      );
      // Every call failing is a setup problem (a bad key, no network), not bad luck: said as such.
      const allFailed = result.llm !== null && result.llmFailures > 0 && result.llmFailures >= result.chunks;
      if (allFailed)
        parts.push(
          `every LLM call failed (${result.llmFailures}), so the local extractor built the graph; those excerpts are retried at the next index. The errors are in ${displayPath(errorLogPath(root))}; 'triforge doctor' checks the LLM`,
        );
      else if (result.llmFailures)
        parts.push(
          `${count(result.llmFailures, "LLM call")} failed and will be retried at the next index (see ${displayPath(errorLogPath(root))})`,
        );
      // The run's report is its output (stdout); stderr carries only the progress bar and errors.
      process.stdout.write(`Indexed ${where}: ${parts.join("; ")}.\n${sharedLine}`);
      if (values.timings) {
        process.stdout.write(`Phases (ms): ${JSON.stringify(result.timings)}\n`);
        if (result.phasePeakMB)
          process.stdout.write(`Phase peak RSS (MB): ${JSON.stringify(result.phasePeakMB)}\n`);
        if (result.phaseCpuMs)
          process.stdout.write(`Phase CPU (ms, user/system): ${JSON.stringify(result.phaseCpuMs)}\n`);
      }
      if (allFailed) process.stderr.write("triforge index: warning: every LLM call failed (see above)\n");
      return 0;
    } catch (error) {
      logError("index", error, root);
      appendRecord(root, {
        ts,
        event: "index",
        outcome: "failed",
        ms: ms(),
        error: (error as Error).message,
      });
      throw error;
    }
  },
});
