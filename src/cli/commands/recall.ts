import { capHitText } from "../../memory/recall/excerpt.ts";
import type { RecallHit } from "../../memory/recall/recall.ts";
import { NO_MEMORY_FOUND } from "../../memory/reasons.ts";
import { MODES } from "../../memory/recall/modes.ts";
import { findProjectRoot } from "../../project/config.ts";
import { defineCommand, UsageError } from "../command.ts";
import { type Style, styleFor } from "../style.ts";

export default defineCommand({
  usage: `triforge recall "<query>" [--project <path>] [-k 5] [--mode ${MODES.join("|")}] [--speaker user|assistant] [--json]`,
  description:
    "Searches the project's memory of earlier sessions and prints the best excerpts: as plain text on a terminal, wrapped as recalled data (the form an agent reads) when the output goes to a program, or JSON with --json.",
  positionals: true,
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the current folder",
    },
    "top-k": {
      type: "string",
      short: "k",
      arg: "n",
      default: "5",
      description: "How many excerpts (1 to 100)",
    },
    mode: { type: "string", arg: "mode", default: "hybrid", description: "hybrid, graph, dense or bm25" },
    speaker: { type: "string", arg: "role", description: "Only that side's own words: user or assistant" },
    json: { type: "boolean", description: "Print {hits, reason} as JSON" },
  },
  async run({ values, positionals }) {
    const query = positionals.join(" ").trim();
    if (!query) throw new UsageError("give a query");
    const topK = Number(values["top-k"] ?? 5);
    if (!Number.isInteger(topK) || topK < 1 || topK > 100)
      throw new UsageError("-k must be a whole number from 1 to 100");
    const mode = String(values.mode ?? "hybrid");
    if (!MODES.includes(mode as (typeof MODES)[number]))
      throw new UsageError(`--mode must be one of ${MODES.join(", ")}`);
    const speaker = values.speaker === undefined ? undefined : String(values.speaker);
    if (speaker !== undefined && speaker !== "user" && speaker !== "assistant")
      throw new UsageError("--speaker must be user or assistant");
    const start = typeof values.project === "string" ? values.project : process.cwd();
    const root = findProjectRoot(start) ?? start;
    const { recall, formatRecalled } = await import("../../memory/recall/recall.ts");
    const result = await recall(root, query, {
      topK,
      mode: mode as (typeof MODES)[number],
      speaker: speaker as "user" | "assistant" | undefined,
    });
    if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (result.hits.length)
      // A person at a terminal reads plain text; a program (an agent's Bash tool) gets the data wrapper.
      process.stdout.write(
        `${process.stdout.isTTY ? plainRecalled(result.hits, styleFor(process.stdout)) : formatRecalled(result.hits)}\n`,
      );
    else process.stdout.write(`${NO_MEMORY_FOUND}: ${result.reason ?? "nothing matched"}\n`);
    return 0;
  },
});

/** Excerpts for a person: a numbered heading (when, which session, whose words, score), the text indented. */
export function plainRecalled(
  hits: Pick<RecallHit, "text" | "role" | "ts" | "session_id" | "score">[],
  style: Style,
): string {
  return hits
    .map((hit, i) => {
      const when = hit.ts ? hit.ts.slice(0, 16).replace("T", " ") : "undated";
      const heading = `${style.heading(`${i + 1}.`)} ${when} · session ${style.path(hit.session_id)} · ${hit.role} · score ${style.score(hit.score.toFixed(2))}`;
      const body = capHitText(hit.text)
        .split("\n")
        .map((line) => `   ${line}`)
        .join("\n");
      return `${heading}\n${body}`;
    })
    .join("\n\n");
}
