/** Option parsing shared by the code-search commands (search, find-related, code-index). */

import { RepositoryError } from "../code/errors.ts";
import { type OptionSpec, type OptionValues, UsageError, UserError } from "./command.ts";

/** Runs `make`, turning the core's RepositoryError (a bad path or option) into a clear exit-1 error. */
export function checked<T>(make: () => T): T {
  const rethrow = (error: unknown): never => {
    if (error instanceof RepositoryError) throw new UserError(error.message);
    throw error;
  };
  try {
    const value = make();
    return (value instanceof Promise ? value.catch(rethrow) : value) as T;
  } catch (error) {
    return rethrow(error);
  }
}

export function positiveInteger(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${flag} must be a whole number of 1 or more, not '${value}'`);
  return n;
}

function nonNegativeInteger(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new UsageError(`${flag} must be a whole number of 0 or more, not '${value}'`);
  return n;
}

/** The options every command that prints snippets takes (search, find-related), so they read alike. */
export const SNIPPET_OPTIONS = {
  // `-k` in every command that returns a ranked list; `--top-k` is the same option spelled out.
  "top-k": { type: "string", short: "k", arg: "n", default: "5", description: "How many snippets" },
  "max-snippet-lines": {
    type: "string",
    arg: "n",
    description: "Lines per snippet, around the lines that matter (default: whole chunks)",
  },
  json: { type: "boolean", description: "Print JSON instead of text" },
} satisfies Record<string, OptionSpec>;

/** Every command that indexes a folder takes it: a folder that is not a project is refused without it. */
export const ALLOW_LARGE_OPTION = {
  "allow-large": {
    type: "boolean",
    description:
      "Index the folder even when it is not a project (no .git, .triforge or project file; the home folder; /), within the caps per index",
  },
} satisfies Record<string, OptionSpec>;

/** -k and --max-snippet-lines checked: a bad value is a usage error (exit 2). */
export function snippetValues(values: OptionValues): { topK: number; maxSnippetLines?: number } {
  const lines = values["max-snippet-lines"];
  return {
    topK: positiveInteger(values["top-k"] as string, "-k"),
    maxSnippetLines:
      lines === undefined ? undefined : nonNegativeInteger(lines as string, "--max-snippet-lines"),
  };
}
