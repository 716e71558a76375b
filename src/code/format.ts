import type { CodeHit, IndexReport } from "./code-search.ts";

/** Hits as people and agents read them: `path:start-end`, then the snippet with its line numbers. */
export function formatHits(hits: CodeHit[]): string {
  return hits
    .map((hit) => {
      const width = String(hit.end_line).length;
      const lines = hit.content
        .split("\n")
        .map((line, i) => `${String(hit.start_line + i).padStart(width)}  ${line}`);
      return `${hit.file_path}:${hit.start_line}-${hit.end_line}  (score ${hit.score.toFixed(3)})\n${lines.join("\n")}`;
    })
    .join("\n\n");
}

/**
 * Searched from a folder inside a repository, paths are relative to the repository's root, not to
 * that folder: said once, so that the reader joins them to the right folder.
 */
export function describeScope(result: { repo: string; scope?: string }): string | undefined {
  return result.scope
    ? `Repository ${result.repo} (searched ${result.scope}/ only); paths are relative to the repository`
    : undefined;
}

/** One line on what the index holds and what it left out, so no skip is silent. */
export function describeReport(report: IndexReport): string {
  const { skipped } = report;
  const left = [
    skipped.binary && `${skipped.binary} binary`,
    skipped.tooLarge && `${skipped.tooLarge} over 1 MB`,
    skipped.lockFiles && `${skipped.lockFiles} lock/minified`,
    skipped.unreadable && `${skipped.unreadable} unreadable`,
    skipped.symlinks && `${skipped.symlinks} symlinks (not followed)`,
    skipped.ignored && `${skipped.ignored} ignored`,
  ].filter(Boolean);
  const utf8 = report.invalidUtf8
    ? `; ${report.invalidUtf8} not valid UTF-8 (indexed with replacement characters)`
    : "";
  const redacted = report.redactedFiles ? `; secrets redacted in ${report.redactedFiles} files` : "";
  const lines = report.overSyntaxBudget
    ? `; ${report.overSyntaxBudget} files chunked by indentation (past the syntax budget: TRIFORGE_CODE_SYNTAX_BUDGET)`
    : "";
  return `${report.files} files, ${report.chunks} chunks (${report.changed} re-indexed, ${report.removed} removed in ${report.durationMs} ms)${left.length ? `; skipped: ${left.join(", ")}` : ""}${utf8}${redacted}${lines}`;
}
