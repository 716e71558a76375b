import { logError } from "../../home/log.ts";
import type { HookInput } from "../../memory/capture.ts";
import { findProjectRoot, findProjectRootAsync } from "../../project/config.ts";
import { defineCommand } from "../command.ts";

/**
 * The `Stop` hook: appends the new prose of the session's transcript to the project's chat log.
 * A hook must never disturb the session: every failure is logged to the project's errors.log and the
 * exit code is 0 with nothing on stdout (Claude Code reads a Stop hook's stdout as a decision).
 */
export default defineCommand({
  hook: true,
  usage: "triforge capture --project=<path>   (reads the hook's JSON on stdin)",
  description:
    "Stop hook: appends the user and assistant prose added to the session's transcript since the last capture, redacted, to the project's chats.jsonl, and the hook's last_assistant_message when the transcript does not hold it yet. Does nothing in a project without .triforge/config.json.",
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the hook's cwd",
    },
  },
  async run({ values }) {
    let projectRoot: string | undefined;
    let run: { ts: string; event: "capture"; session: string; run: string } | undefined;
    const started = Date.now();
    const elapsed = () => Date.now() - started;
    try {
      const project = typeof values.project === "string" ? values.project : undefined;
      // PERF: an inactive project is decided before stdin is even read, and without node:fs (~1.2 ms).
      // (No TTY check on stdin: node:tty alone costs ~3 ms of start-up; run by hand, capture waits for
      // JSON like `cat` does.)
      if (project !== undefined && !(projectRoot = await findProjectRootAsync(project))) return 0;
      const raw = (require("node:fs") as typeof import("node:fs")).readFileSync(0, "utf8");
      // PERF: the parser, the redactor and the chat log load only for an active project (~4 ms).
      const { captureTranscript, parseHookInput } = await import("../../memory/capture.ts");
      let input: HookInput | undefined;
      let invalid: unknown;
      try {
        input = parseHookInput(raw);
      } catch (error) {
        // Reported below, once the project (and so its errors.log) is known.
        invalid = error;
      }
      if (projectRoot === undefined && !(projectRoot = findProjectRoot(input?.cwd ?? process.cwd())))
        return 0;
      if (!input) throw invalid;
      // The payload's reply is stored when the transcript does not hold it yet (the CLI may write it
      // after this hook returns); a transcript not written yet is read by the next capture.
      // The ledger: a `started` record first, so a run killed at its timeout shows in status and doctor.
      const { appendRecord } = await import("../../home/ledger.ts");
      run = {
        ts: new Date().toISOString(),
        event: "capture",
        session: input.session_id,
        run: `${Date.now()}-${process.pid}`,
      };
      appendRecord(projectRoot, { ...run, outcome: "started" });
      const result = captureTranscript(projectRoot, input.session_id, input.transcript_path, {
        lastAssistantMessage: input.last_assistant_message,
        promptId: input.prompt_id,
        live: true,
      });
      appendRecord(projectRoot, { ...run, outcome: "ok", ms: elapsed(), turns: result.appended });
    } catch (error) {
      logError("capture", error, projectRoot);
      if (run && projectRoot) {
        const { appendRecord } = await import("../../home/ledger.ts");
        appendRecord(projectRoot, {
          ...run,
          outcome: "failed",
          ms: elapsed(),
          error: (error as Error).message,
        });
      }
    }
    return 0;
  },
});
