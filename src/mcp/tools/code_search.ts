import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { toolErrors } from "../errors.ts";
import description from "./code_search.txt" with { type: "text" };
import {
  allowLargeArgument,
  core,
  hitSchema,
  repoArgument,
  repositoryOf,
  scopeLine,
  snippetLinesArgument,
  topKArgument,
} from "./code_tools.ts";

export function registerCodeSearch(server: McpServer, context: { defaultRepo: () => string }): void {
  const repoOf = (repo?: string) => repositoryOf(context.defaultRepo, repo);
  // A failing call is logged to the errors.log of the project it searched, where `status` shows it.
  const errorProject = ({ repo }: { repo?: string }) => repoOf(repo);

  server.registerTool(
    "code_search",
    {
      title: "Search this repository's code",
      description,
      inputSchema: {
        query: z
          .string()
          .trim()
          .min(1)
          .describe(
            "A question in words or an identifier, e.g. 'where are retries scheduled' or 'parseConfig'",
          ),
        repo: repoArgument,
        top_k: topKArgument,
        max_snippet_lines: snippetLinesArgument,
        content: z.enum(["code", "docs", "config", "all"]).default("code").describe("Which files to search"),
        allow_large: allowLargeArgument,
      },
      outputSchema: {
        repo: z.string(),
        scope: z.string().optional(),
        hits: z.array(hitSchema),
        note: z.string().optional(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    toolErrors(
      "code_search",
      async ({ query, repo, top_k, max_snippet_lines, content, allow_large }) => {
        const started = Date.now();
        const { result, text } = await core(async (code) => {
          const { describeScope, formatHits } = await import("../../code/format.ts");
          const result = await code.searchCode(repoOf(repo), query, {
            topK: top_k,
            maxSnippetLines: max_snippet_lines,
            content,
            allowLarge: allow_large,
          });
          return {
            result,
            text: result.hits.length
              ? scopeLine(describeScope(result)) + formatHits(result.hits)
              : `No code found: ${result.note ?? "nothing matched"}`,
          };
        });
        await recordCodeSearch(result.repo, result.hits, text, started);
        return {
          content: [
            { type: "text", text: result.note && result.hits.length ? `${text}\n\n(${result.note})` : text },
          ],
          structuredContent: {
            repo: result.repo,
            ...(result.scope ? { scope: result.scope } : {}),
            hits: result.hits,
            ...(result.note ? { note: result.note } : {}),
          },
        };
      },
      errorProject,
    ),
  );
}

/**
 * The ledger's record of a search: tokens of the snippets sent, next to tokens of the whole files they
 * came from (what an agent that greps and opens files would read instead). File sizes are one stat each.
 */
async function recordCodeSearch(
  repo: string,
  hits: { file_path: string }[],
  text: string,
  started: number,
): Promise<void> {
  const { join, isAbsolute } = await import("node:path");
  const { appendRecord, estimateTokens } = await import("../../home/ledger.ts");
  let fileBytes = 0;
  for (const path of new Set(hits.map((h) => h.file_path)))
    fileBytes += Bun.file(isAbsolute(path) ? path : join(repo, path)).size;
  appendRecord(repo, {
    ts: new Date().toISOString(),
    event: "code_search",
    outcome: "ok",
    ms: Date.now() - started,
    tokens: estimateTokens(text),
    fileTokens: Math.ceil(fileBytes / 4),
  });
}
