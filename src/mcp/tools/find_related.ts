import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { expandHome } from "../context.ts";
import { toolErrors } from "../errors.ts";
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
import description from "./find_related.txt" with { type: "text" };

export function registerFindRelated(server: McpServer, context: { defaultRepo: () => string }): void {
  const repoOf = (repo?: string) => repositoryOf(context.defaultRepo, repo);
  // A failing call is logged to the errors.log of the project it searched, where `status` shows it.
  const errorProject = ({ repo }: { repo?: string }) => repoOf(repo);

  server.registerTool(
    "find_related",
    {
      title: "Find code similar to a place in the repository",
      description,
      inputSchema: {
        file_path: z
          .string()
          .trim()
          .min(1)
          .describe("File relative to the repository (as code_search returns it), or absolute"),
        line: z.number().int().min(1).describe("A 1-based line inside the code of interest"),
        repo: repoArgument,
        top_k: topKArgument,
        max_snippet_lines: snippetLinesArgument,
        allow_large: allowLargeArgument,
      },
      outputSchema: {
        repo: z.string(),
        scope: z.string().optional(),
        source: hitSchema.optional(),
        hits: z.array(hitSchema),
        note: z.string().optional(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    toolErrors(
      "find_related",
      async ({ file_path, line, repo, top_k, max_snippet_lines, allow_large }) => {
        const { result, text } = await core(async (code) => {
          const { describeScope, formatHits } = await import("../../code/format.ts");
          const result = await code.findRelated(repoOf(repo), expandHome(file_path), line, {
            topK: top_k,
            maxSnippetLines: max_snippet_lines,
            allowLarge: allow_large,
          });
          const source = result.source
            ? `Similar to ${result.source.file_path}:${result.source.start_line}-${result.source.end_line}:\n\n`
            : "";
          return {
            result,
            text: result.hits.length
              ? scopeLine(describeScope(result)) + source + formatHits(result.hits)
              : "No similar code found",
          };
        });
        return {
          content: [{ type: "text", text: result.note ? `${text}\n\n(${result.note})` : text }],
          structuredContent: {
            repo: result.repo,
            ...(result.scope ? { scope: result.scope } : {}),
            ...(result.source ? { source: result.source } : {}),
            hits: result.hits,
            ...(result.note ? { note: result.note } : {}),
          },
        };
      },
      errorProject,
    ),
  );
}
