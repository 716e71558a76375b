import { existsSync } from "node:fs";
import { resolve } from "node:path";
import {
  ALLOW_LARGE_OPTION,
  checked,
  positiveInteger,
  SNIPPET_OPTIONS,
  snippetValues,
} from "../code-options.ts";
import { defineCommand, UsageError } from "../command.ts";

export default defineCommand({
  usage: "triforge find-related <file> <line> [path] [-k 5] [--max-snippet-lines N] [--json] [--allow-large]",
  description:
    "Prints the code most similar to the chunk holding <line> of <file>, among the files under [path] (default: the current folder; a folder inside a repository uses the repository's index). <file> is relative to the current folder or to the repository's root; printed paths are relative to the repository's root.",
  positionals: true,
  options: { ...SNIPPET_OPTIONS, ...ALLOW_LARGE_OPTION },
  async run({ values, positionals }) {
    if (positionals.length < 2 || positionals.length > 3)
      throw new UsageError("give a file and a line, and optionally a path");
    const [file, lineText, path = "."] = positionals;
    const line = positiveInteger(lineText, "<line>");
    const { topK, maxSnippetLines } = snippetValues(values);
    // PERF: the search core loads only when this command runs.
    const code = await import("../../code/code-search.ts");
    // A file named relative to the current folder is found there first; otherwise it is repository-relative.
    const target = existsSync(file) ? resolve(file) : file;
    const result = await checked(() =>
      code.findRelated(path, target, line, {
        topK,
        maxSnippetLines,
        allowLarge: values["allow-large"] === true,
      }),
    );
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ repo: result.repo, ...(result.scope ? { scope: result.scope } : {}), source: result.source, hits: result.hits })}\n`,
      );
      return 0;
    }
    const { describeScope, formatHits } = await import("../../code/format.ts");
    const scope = describeScope(result);
    if (scope) process.stderr.write(`triforge find-related: ${scope}\n`);
    if (result.source)
      process.stderr.write(
        `similar to ${result.source.file_path}:${result.source.start_line}-${result.source.end_line}\n`,
      );
    if (result.hits.length) process.stdout.write(`${formatHits(result.hits)}\n`);
    else process.stderr.write("triforge find-related: no similar code found\n");
    if (result.note) process.stderr.write(`triforge find-related: ${result.note}\n`);
    return 0;
  },
});
