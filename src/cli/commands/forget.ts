import { findProjectRoot } from "../../project/config.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge forget --session <id> [--project=<path>]",
  description:
    "Removes one session from the project's memory: its chunks, exactly the graph weight they contributed, its summary entries and its lines in chats.jsonl. The session stays forgotten: a rebuild will not bring it back.",
  options: {
    session: {
      type: "string",
      arg: "id",
      description: "The session id (as shown by recall or in summary.md)",
    },
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the current folder",
    },
  },
  async run({ values }) {
    const session = typeof values.session === "string" ? values.session.trim() : "";
    if (!session) throw new UsageError("--session <id> is required");
    const start = typeof values.project === "string" ? values.project : process.cwd();
    const root = findProjectRoot(start);
    if (!root)
      throw new UserError(`memory is not active for ${start} (no .triforge/config.json here or above)`);
    const { forgetSession } = await import("../../memory/forget.ts");
    const report = await forgetSession(root, session);
    if (report.status === "busy")
      throw new UserError("an indexer is still running for this project; try again in a moment");
    if (report.chunks === 0 && report.lines === 0) {
      process.stdout.write(
        `session ${session}: nothing stored for it in ${root} (it will not be indexed if it appears later)\n`,
      );
      return 0;
    }
    process.stdout.write(
      `forgot session ${session}: ${report.chunks} chunk(s), ${report.lines} chats.jsonl line(s), ${report.facts} fact(s), ${report.entities} phrase node(s); ${report.edgesRemoved} edge(s) removed, ${report.edgesLowered} lowered\n`,
    );
    return 0;
  },
});
