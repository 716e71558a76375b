import { createInterface } from "node:readline";
import { ALLOW_LARGE_OPTION, checked, SNIPPET_OPTIONS, snippetValues } from "../code-options.ts";
import { defineCommand, UsageError } from "../command.ts";

export default defineCommand({
  usage:
    'triforge search "<query>" [path] [-k 5] [--max-snippet-lines N] [--content code|docs|config|all] [--json] [--allow-large]\n       triforge search --stdin [path]',
  description:
    'Searches the code of a repository (default: the current folder) by meaning and identifiers and prints the best snippets with their file and lines. A folder inside a repository (the nearest folder above with .git or .triforge/config.json) is searched through the repository\'s one index, and file paths are relative to the repository\'s root. The repository is indexed on first use and refreshed incrementally.\nWith --stdin, reads JSONL {"query", "top_k"?, "max_snippet_lines"?, "content"?} and writes one JSON result a line, all against one loaded index.',
  positionals: true,
  options: {
    ...SNIPPET_OPTIONS,
    ...ALLOW_LARGE_OPTION,
    content: { type: "string", arg: "kind", default: "code", description: "code, docs, config or all" },
    stdin: {
      type: "boolean",
      description: "Batch mode: JSONL queries on standard input, JSON results on standard output",
    },
  },
  async run({ values, positionals }) {
    // PERF: the search core (index, grammars, model) loads only when this command runs.
    const code = await import("../../code/code-search.ts");
    const { topK, maxSnippetLines } = snippetValues(values);
    const allowLarge = values["allow-large"] === true;
    let content: ReturnType<Core["checkContent"]>;
    try {
      content = code.checkContent(values.content as string);
    } catch (error) {
      // A bad option value is a usage error (exit 2), like every other bad option.
      throw new UsageError((error as Error).message);
    }
    if (values.stdin) {
      if (positionals.length > 1) throw new UsageError("--stdin takes at most a path");
      const { index, scope } = await checked(() =>
        code.openRepository(positionals[0] ?? ".", { allowLarge }),
      );
      return batch(index, { topK, maxSnippetLines, content, scope }, code);
    }
    if (positionals.length < 1 || positionals.length > 2)
      throw new UsageError("give a query, and optionally a path");
    const [query, path = "."] = positionals;
    if (!query.trim()) throw new UsageError("the query is empty");
    const result = await checked(() =>
      code.searchCode(path, query, { topK, maxSnippetLines, content, allowLarge }),
    );
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ repo: result.repo, ...(result.scope ? { scope: result.scope } : {}), query, hits: result.hits, ...(result.note ? { note: result.note } : {}) })}\n`,
      );
      return 0;
    }
    const { describeScope, formatHits } = await import("../../code/format.ts");
    const scope = describeScope(result);
    if (scope) process.stderr.write(`triforge search: ${scope}\n`);
    if (result.hits.length) process.stdout.write(`${formatHits(result.hits)}\n`);
    if (result.note) process.stderr.write(`triforge search: ${result.note}\n`);
    return 0;
  },
});

type Core = typeof import("../../code/code-search.ts");

/** One JSON result per JSONL query; a bad line gets an error line and the batch goes on (exit 1 at the end). */
async function batch(
  index: Awaited<ReturnType<Core["openRepository"]>>["index"],
  defaults: {
    topK: number;
    maxSnippetLines?: number;
    content: ReturnType<Core["checkContent"]>;
    scope: string;
  },
  code: Core,
): Promise<number> {
  let lineNumber = 0;
  let failures = 0;
  const write = (record: unknown) => process.stdout.write(`${JSON.stringify(record)}\n`);
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })) {
    lineNumber++;
    if (!line.trim()) continue;
    let request: { query?: unknown; top_k?: unknown; max_snippet_lines?: unknown; content?: unknown };
    try {
      request = JSON.parse(line);
    } catch {
      failures++;
      write({ line: lineNumber, error: "not valid JSON" });
      continue;
    }
    if (typeof request?.query !== "string") {
      failures++;
      write({ line: lineNumber, error: 'expected {"query": "...", "top_k"?: n}' });
      continue;
    }
    // The same limits as -k and --max-snippet-lines: a bad value is that line's error, not a silent default.
    const badNumber = (value: unknown, min: number) =>
      value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value >= min);
    if (badNumber(request.top_k, 1) || badNumber(request.max_snippet_lines, 0)) {
      failures++;
      write({
        line: lineNumber,
        query: request.query,
        error: "top_k must be a whole number of 1 or more, max_snippet_lines of 0 or more",
      });
      continue;
    }
    try {
      const result = await code.searchLoaded(index, request.query, {
        topK: (request.top_k as number | undefined) ?? defaults.topK,
        maxSnippetLines: (request.max_snippet_lines as number | undefined) ?? defaults.maxSnippetLines,
        content: typeof request.content === "string" ? code.checkContent(request.content) : defaults.content,
        scope: defaults.scope,
      });
      write({ query: request.query, hits: result.hits, ...(result.note ? { note: result.note } : {}) });
    } catch (error) {
      failures++;
      write({ line: lineNumber, query: request.query, error: (error as Error).message });
    }
  }
  return failures ? 1 : 0;
}
