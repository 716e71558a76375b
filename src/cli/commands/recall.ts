import { NO_MEMORY_FOUND } from "../../memory/reasons.ts";
import { MODES } from "../../memory/recall/modes.ts";
import { findProjectRoot } from "../../project/config.ts";
import { defineCommand, UsageError } from "../command.ts";

export default defineCommand({
  usage: `triforge recall "<query>" [--project <path>] [--top-k <k>] [--mode ${MODES.join("|")}] [--speaker user|assistant] [--json]`,
  description:
    "Searches the project's memory of earlier sessions and prints the best excerpts, wrapped as recalled data (or JSON with --json).",
  positionals: true,
  options: {
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the current folder",
    },
    "top-k": { type: "string", arg: "k", default: "5", description: "How many excerpts" },
    mode: { type: "string", arg: "mode", default: "hybrid", description: "hybrid, graph, dense or bm25" },
    speaker: { type: "string", arg: "role", description: "Only that side's own words: user or assistant" },
    json: { type: "boolean", description: "Print {hits, reason} as JSON" },
  },
  async run({ values, positionals }) {
    const query = positionals.join(" ").trim();
    if (!query) throw new UsageError("give a query");
    const topK = Number(values["top-k"] ?? 5);
    if (!Number.isInteger(topK) || topK < 1 || topK > 100)
      throw new UsageError("--top-k must be a whole number from 1 to 100");
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
    else if (result.hits.length) process.stdout.write(`${formatRecalled(result.hits)}\n`);
    else process.stdout.write(`${NO_MEMORY_FOUND}: ${result.reason ?? "nothing matched"}\n`);
    return 0;
  },
});
