/**
 * What the two code-search MCP tools (`code_search`, `find_related`) share: argument schemas, the hit
 * shape, and the call into the code core.
 * PERF: the index core, grammars and model load on the first call, not when the server starts.
 */
import { resolve } from "node:path";
import { z } from "zod";
import { expandHome, ToolInputError } from "../context.ts";

/** Enough snippets to survey a subsystem; more would cost the agent more tokens than reading files. */
const MAX_TOP_K = 50;

export const hitSchema = z.object({
  file_path: z.string(),
  start_line: z.number(),
  end_line: z.number(),
  score: z.number(),
  language: z.string(),
  content: z.string(),
});

// Shared by both tools, so that they take the same limits.
export const topKArgument = z
  .number()
  .int()
  .min(1)
  .max(MAX_TOP_K)
  .default(5)
  .describe("How many snippets to return");
export const snippetLinesArgument = z
  .number()
  .int()
  .min(0)
  .max(500)
  .default(10)
  .describe("Lines per snippet; 0 for whole chunks");
export const repoArgument = z
  .string()
  .optional()
  .describe(
    "Repository folder; defaults to the client's working directory (relative paths resolve against it, ~ is the home folder)",
  );

export const allowLargeArgument = z
  .boolean()
  .default(false)
  .describe(
    "Index the folder even when it is not a project (no .git, .triforge or project file such as package.json; the home folder; /). Only when the user asks for such a folder: it can hold millions of files",
  );

/** Runs a core call, turning a bad repository or file argument into an error the agent can fix. */
export async function core<T>(
  run: (code: typeof import("../../code/code-search.ts")) => Promise<T>,
): Promise<T> {
  const code = await import("../../code/code-search.ts");
  try {
    return await run(code);
  } catch (error) {
    if (error instanceof code.RepositoryError) throw new ToolInputError(error.message);
    throw error;
  }
}

/** The scope sentence, when there is one, as the first paragraph of a tool's text. */
export const scopeLine = (scope: string | undefined) => (scope ? `${scope}.\n\n` : "");

/** A tool's `repo` argument resolved against the client's folder, `~` expanded. */
export function repositoryOf(defaultRepo: () => string, repo?: string): string {
  return repo ? resolve(defaultRepo(), expandHome(repo)) : defaultRepo();
}
