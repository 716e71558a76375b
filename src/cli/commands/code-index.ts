import { ALLOW_LARGE_OPTION, checked } from "../code-options.ts";
import { defineCommand, UsageError } from "../command.ts";
import { terminalProgress } from "../progress.ts";

export default defineCommand({
  usage: "triforge code-index [path] [--force] [--json] [--allow-large]",
  description:
    "Builds or refreshes the code-search index of a repository (default: the current folder). Only new and changed files are re-read; --force rebuilds everything. Searches index on their own: this command is for doing it ahead of time, or to see what was indexed and skipped.",
  positionals: true,
  options: {
    force: { type: "boolean", description: "Rebuild from scratch instead of refreshing" },
    json: { type: "boolean", description: "Print the index report as JSON" },
    ...ALLOW_LARGE_OPTION,
  },
  async run({ values, positionals }) {
    if (positionals.length > 1) throw new UsageError("give at most one path");
    // PERF: the indexer (grammars, model) loads only when this command runs.
    const code = await import("../../code/code-search.ts");
    const { describeReport } = await import("../../code/format.ts");
    const bar = terminalProgress("files indexed");
    const onProgress = bar ? (done: number, total: number) => bar.update(done, total) : undefined;
    const report = await checked(() =>
      code.indexRepository(positionals[0] ?? ".", {
        force: values.force === true,
        onProgress,
        allowLarge: values["allow-large"] === true,
      }),
    ).finally(() => bar?.clear());
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else process.stdout.write(`${describeReport(report)}\n`);
    return 0;
  },
});
