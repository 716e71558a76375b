/**
 * The code-search MCP tools, registered by src/mcp/server.ts: `code_search` and `find_related`.
 * PERF: the index core, grammars and model load on the first call, not when the server starts.
 */
import { resolve } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { expandHome, ToolInputError } from "../mcp/context.ts";
import { toolErrors } from "../mcp/errors.ts";
import searchDescription from "./code_search.txt" with { type: "text" };
import relatedDescription from "./find_related.txt" with { type: "text" };

/** Enough snippets to survey a subsystem; more would cost the agent more tokens than reading files. */
const MAX_TOP_K = 50;

const hitSchema = z.object({
  file_path: z.string(),
  start_line: z.number(),
  end_line: z.number(),
  score: z.number(),
  language: z.string(),
  content: z.string(),
});

// Shared by both tools, so that they take the same limits.
const topKArgument = z
  .number()
  .int()
  .min(1)
  .max(MAX_TOP_K)
  .default(5)
  .describe("How many snippets to return");
const snippetLinesArgument = z
  .number()
  .int()
  .min(0)
  .max(500)
  .default(10)
  .describe("Lines per snippet; 0 for whole chunks");
const repoArgument = z
  .string()
  .optional()
  .describe(
    "Repository folder; defaults to the client's working directory (relative paths resolve against it, ~ is the home folder)",
  );

/** Runs a core call, turning a bad repository or file argument into an error the agent can fix. */
async function core<T>(run: (code: typeof import("./index.ts")) => Promise<T>): Promise<T> {
  const code = await import("./index.ts");
  try {
    return await run(code);
  } catch (error) {
    if (error instanceof code.RepositoryError) throw new ToolInputError(error.message);
    throw error;
  }
}

/** The scope sentence, when there is one, as the first paragraph of a tool's text. */
const scopeLine = (scope: string | undefined) => (scope ? `${scope}.\n\n` : "");

export function registerCodeTools(server: McpServer, context: { defaultRepo: () => string }): void {
  const repoOf = (repo?: string) =>
    repo ? resolve(context.defaultRepo(), expandHome(repo)) : context.defaultRepo();
  // A failing call is logged to the errors.log of the project it searched, where `status` shows it.
  const errorProject = ({ repo }: { repo?: string }) => repoOf(repo);

  server.registerTool(
    "code_search",
    {
      title: "Search this repository's code",
      description: searchDescription,
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
      async ({ query, repo, top_k, max_snippet_lines, content }) => {
        const { result, text } = await core(async (code) => {
          const { describeScope, formatHits } = await import("./format.ts");
          const result = await code.searchCode(repoOf(repo), query, {
            topK: top_k,
            maxSnippetLines: max_snippet_lines,
            content,
          });
          return {
            result,
            text: result.hits.length
              ? scopeLine(describeScope(result)) + formatHits(result.hits)
              : `No code found: ${result.note ?? "nothing matched"}`,
          };
        });
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

  server.registerTool(
    "find_related",
    {
      title: "Find code similar to a place in the repository",
      description: relatedDescription,
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
      },
      outputSchema: {
        repo: z.string(),
        scope: z.string().optional(),
        source: hitSchema.optional(),
        hits: z.array(hitSchema),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    toolErrors(
      "find_related",
      async ({ file_path, line, repo, top_k, max_snippet_lines }) => {
        const { result, text } = await core(async (code) => {
          const { describeScope, formatHits } = await import("./format.ts");
          const result = await code.findRelated(repoOf(repo), expandHome(file_path), line, {
            topK: top_k,
            maxSnippetLines: max_snippet_lines,
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
          content: [{ type: "text", text }],
          structuredContent: {
            repo: result.repo,
            ...(result.scope ? { scope: result.scope } : {}),
            ...(result.source ? { source: result.source } : {}),
            hits: result.hits,
          },
        };
      },
      errorProject,
    ),
  );
}
