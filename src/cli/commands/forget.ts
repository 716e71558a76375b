import { triforgeCommand } from "../../home/shell.ts";
import { findProjectRoot } from "../../project/config.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";
import { terminalStatus } from "../progress.ts";
import { count } from "../words.ts";

export default defineCommand({
  usage:
    "triforge forget --session <id> [--project <path>] [--force]\n       triforge forget --chunk <id> [--project <path>]",
  description:
    "Removes one session from the project's memory: its chunks, exactly the graph weight they contributed, its summary entries and its lines in chats.jsonl. The session stays forgotten: a rebuild will not bring it back. An id the project has never seen is refused unless --force. " +
    "--chunk removes one chunk (its id as the web page of 'serve --http' shows it) the same way: its graph weight, the summary lines quoting it, its chats.jsonl records and its pin.",
  options: {
    session: {
      type: "string",
      arg: "id",
      description: "The session id (as shown by recall or in summary.md)",
    },
    chunk: {
      type: "string",
      arg: "id",
      description: "One chunk's id instead of a session (as the web page of 'serve --http' lists them)",
    },
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the current folder",
    },
    force: {
      type: "boolean",
      description: "Forget an id this project has never seen (it will never be indexed if it appears later)",
    },
  },
  async run({ values }) {
    const session = typeof values.session === "string" ? values.session.trim() : "";
    const chunk = typeof values.chunk === "string" ? values.chunk.trim() : undefined;
    if (chunk !== undefined && session) throw new UsageError("give --session or --chunk, not both");
    if (chunk === undefined && !session) throw new UsageError("--session <id> (or --chunk <id>) is required");
    const start = typeof values.project === "string" ? values.project : process.cwd();
    const root = findProjectRoot(start);
    if (!root)
      throw new UserError(`memory is not active for ${start} (no .triforge/config.json here or above)`);
    if (chunk !== undefined) return forgetOneChunk(root, chunk);
    const { forgetSession } = await import("../../memory/forget.ts");
    // The store's part can take seconds on a large memory and cannot count its steps: say what is going on.
    const status = terminalStatus();
    status?.set(
      `Forgetting session ${session}: removing its excerpts and what they added to the knowledge graph…`,
    );
    const report = await forgetSession(root, session, { force: values.force === true }).finally(() =>
      status?.clear(),
    );
    if (report.status === "busy")
      throw new UserError("an indexer is still running for this project; try again in a moment");
    if (report.status === "unknown")
      throw new UserError(
        `no session ${session} in the memory of ${root}; nothing forgotten. The session ids are in the '## <date> · session <id>' headings of \`${triforgeCommand(["dump", "--project", root])}\` and in \`${triforgeCommand(["recall", "<topic>", "--project", root, "--json"])}\`; \`${triforgeCommand(["forget", "--session", session, "--project", root, "--force"])}\` forgets an id not seen yet`,
      );
    if (report.chunks === 0 && report.lines === 0) {
      process.stdout.write(
        `session ${session}: nothing stored for it in ${root} (it will not be indexed if it appears later)\n`,
      );
      return 0;
    }
    const graph =
      report.facts || report.entities || report.edgesRemoved || report.edgesLowered
        ? ` From the knowledge graph: ${count(report.facts, "fact")} and ${count(report.entities, "name or topic", "names and topics")} only this session mentioned are gone, ${count(report.edgesRemoved, "link")} removed and ${count(report.edgesLowered, "link")} shared with other sessions weakened.`
        : "";
    process.stdout.write(
      `Forgot session ${session}: ${count(report.chunks, "excerpt")} and ${count(report.lines, "line")} of the chat log removed.${graph} It will not come back on a rebuild.\n`,
    );
    return 0;
  },
});

async function forgetOneChunk(root: string, raw: string): Promise<number> {
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id))
    throw new UsageError(`--chunk takes a chunk id (a number), not '${raw}'`);
  const { forgetChunk } = await import("../../memory/forget-chunk.ts");
  const report = await forgetChunk(root, id);
  if (report.status === "busy")
    throw new UserError("an indexer is still running for this project; try again in a moment");
  if (report.status === "unknown")
    throw new UserError(`no chunk ${id} in the memory of ${root}; nothing forgotten`);
  process.stdout.write(
    `Forgot chunk ${id} of session ${report.session_id}: ${count(report.lines, "line")} of the chat log and ${count(report.summaryLines, "summary line")} removed, ${count(report.edgesRemoved, "link")} of the knowledge graph removed and ${count(report.edgesLowered, "link")} weakened. It will not come back on a rebuild.\n`,
  );
  return 0;
}
