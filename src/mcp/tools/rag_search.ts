import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { NO_MEMORY_FOUND } from "../../memory/reasons.ts";
import { RECALLED_NOTICE } from "../../memory/recall/format.ts";
import { MODES } from "../../memory/recall/modes.ts";
import { memoryProjectRoot, projectOfCall, type ServerContext } from "../context.ts";
import { toolErrors } from "../errors.ts";
import description from "./rag_search.txt" with { type: "text" };

/** Enough excerpts for a multi-hop answer, few enough to keep the agent's context small. */
const MAX_TOP_K = 50;

const hitSchema = z.object({
  text: z.string(),
  role: z.string(),
  ts: z.string(),
  session_id: z.string(),
  score: z.number(),
  source: z.string(),
  /** Its files changed or gone since, a decision in it replaced later (src/memory/hit-checks.ts). */
  check: z.string().optional(),
});

export function registerRagSearch(server: McpServer, context: ServerContext): void {
  server.registerTool(
    "rag_search",
    {
      title: "Search memory of earlier sessions",
      description,
      inputSchema: {
        query: z
          .string()
          .trim()
          .min(1, "query is empty: name a topic, identifier, file name or error text to recall")
          .describe("Topic, identifiers, file names or error text to recall"),
        top_k: z.number().int().min(1).max(MAX_TOP_K).default(5).describe("How many excerpts to return"),
        mode: z
          .enum(MODES)
          .default("hybrid")
          .describe("hybrid (default), graph (multi-hop), dense (paraphrase), bm25 (exact words)"),
        speaker: z
          .enum(["user", "assistant"])
          .optional()
          .describe("Only that side's own words: user (what the user said, asked, decided) or assistant"),
        project_path: z
          .string()
          .optional()
          .describe("Project folder; defaults to the client's working directory"),
      },
      outputSchema: {
        notice: z.string(),
        project: z.string(),
        mode: z.string(),
        hits: z.array(hitSchema),
        reason: z.string().optional(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    toolErrors(
      "rag_search",
      async ({ query, top_k, mode, speaker, project_path }) => {
        const root = memoryProjectRoot(context, project_path);
        const started = performance.now();
        // PERF: the store, graph and model load on the first call (or the warm-up after initialize), not at start.
        const { recall, formatRecalled } = await import("../../memory/recall/recall.ts");
        const result = await recall(root, query, { topK: top_k, mode, speaker });
        const { withChecks } = await import("../../memory/hit-checks.ts");
        const hits = await withChecks(root, result.hits);
        const text = hits.length
          ? formatRecalled(
              hits.map((hit) => (hit.check ? { ...hit, text: `${hit.check}\n${hit.text}` } : hit)),
            )
          : `${NO_MEMORY_FOUND}: ${result.reason ?? "no excerpt matched the query"}`;
        const { appendRecord, estimateTokens } = await import("../../home/ledger.ts");
        appendRecord(root, {
          ts: new Date().toISOString(),
          event: "rag_search",
          outcome: "ok",
          ms: Math.round(performance.now() - started),
          tokens: estimateTokens(text),
        });
        return {
          content: [{ type: "text", text }],
          structuredContent: {
            notice: RECALLED_NOTICE,
            project: root,
            mode,
            // The contract's fields only: per-turn ids serve in-process callers and are noise to an agent.
            hits: hits.map(({ text, role, ts, session_id, score, source, check }) => ({
              text,
              role,
              ts,
              session_id,
              score,
              source,
              ...(check ? { check } : {}),
            })),
            ...(result.reason ? { reason: result.reason } : {}),
          },
        };
      },
      projectOfCall(context),
    ),
  );
}
