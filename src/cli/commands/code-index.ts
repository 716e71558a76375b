import { checked } from "../../code/cli-options.ts";
import { defineCommand, UsageError } from "../command.ts";

/** Redraws at most this often: a progress bar must not cost more than the work it shows. */
const REDRAW_MS = 50;
const BAR_WIDTH = 30;

export default defineCommand({
  usage: "triforge code-index [path] [--force] [--json]",
  description:
    "Builds or refreshes the code-search index of a repository (default: the current folder). Only new and changed files are re-read; --force rebuilds everything. Searches index on their own: this command is for doing it ahead of time, or to see what was indexed and skipped.",
  positionals: true,
  options: {
    force: { type: "boolean", description: "Rebuild from scratch instead of refreshing" },
    json: { type: "boolean", description: "Print the index report as JSON" },
  },
  async run({ values, positionals }) {
    if (positionals.length > 1) throw new UsageError("give at most one path");
    // PERF: the indexer (grammars, model) loads only when this command runs.
    const code = await import("../../code/index.ts");
    const { describeReport } = await import("../../code/format.ts");
    const onProgress = process.stderr.isTTY ? progressBar() : undefined;
    const report = await checked(() =>
      code.indexRepository(positionals[0] ?? ".", { force: values.force === true, onProgress }),
    );
    if (onProgress) process.stderr.write("\r\x1b[K");
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else process.stdout.write(`${describeReport(report)}\n`);
    return 0;
  },
});

/** `[#####-----] 1234/5678 files indexed` on one redrawn line of the terminal. */
function progressBar(): (done: number, total: number) => void {
  let drawn = 0;
  return (done, total) => {
    const now = performance.now();
    if (done < total && now - drawn < REDRAW_MS) return;
    drawn = now;
    const filled = total ? Math.round((BAR_WIDTH * done) / total) : BAR_WIDTH;
    process.stderr.write(
      `\r[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${done}/${total} files indexed`,
    );
  };
}
