import { triforgeCommand } from "../../home/shell.ts";
import { findProjectRoot } from "../../project/config.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge forget --session <id> [--project=<path>] [--force]",
  description:
    "Removes one session from the project's memory: its chunks, exactly the graph weight they contributed, its summary entries and its lines in chats.jsonl. The session stays forgotten: a rebuild will not bring it back. An id the project has never seen is refused unless --force.",
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
    force: {
      type: "boolean",
      description: "Forget an id this project has never seen (it will never be indexed if it appears later)",
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
    const report = await forgetSession(root, session, { force: values.force === true });
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
    process.stdout.write(
      `forgot session ${session}: ${report.chunks} chunk(s), ${report.lines} chats.jsonl line(s), ${report.facts} fact(s), ${report.entities} phrase node(s); ${report.edgesRemoved} edge(s) removed, ${report.edgesLowered} lowered\n`,
    );
    return 0;
  },
});
