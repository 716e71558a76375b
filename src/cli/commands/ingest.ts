import { catalogPathOf, remoteOf, workspacesOf } from "../http-options.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";
import { terminalProgress } from "../progress.ts";

export default defineCommand({
  usage: "triforge ingest -w DIR [-w DIR2 …] [--db PATH] [--json]",
  description:
    "Indexes workspaces for the HTTP RAG service (triforge serve --http), as claw-rag-service's ingest does: only new and " +
    "changed files are read, and ingesting one workspace never removes another's chunks. With CLAW_RAG_EMBEDDING_BASE_URL " +
    "or CLAW_RAG_EMBEDDING_MODEL set, or `embedding` in the project's .triforge/config.json, chunks are also embedded by " +
    "that OpenAI-compatible endpoint (docs/http.md).",
  options: {
    workspace: {
      type: "string",
      short: "w",
      multiple: true,
      arg: "dir",
      description: "A folder to ingest (repeatable)",
    },
    db: {
      type: "string",
      arg: "path",
      description: "The ingest catalog (CLAW_RAG_DB; default: http/catalog.db in the data folder)",
    },
    json: { type: "boolean", description: "Print one JSON report per workspace" },
  },
  async run({ values }) {
    const workspaces = workspacesOf(values);
    if (workspaces.length === 0) throw new UsageError("give at least one -w DIR");
    // PERF: the indexer, model and SQLite load only when this command runs.
    const [{ ingestWorkspace, RagRequestError }, { RemoteEmbeddingError }, { RepositoryError }] =
      await Promise.all([
        import("../../rag/service.ts"),
        import("../../embed/remote.ts"),
        import("../../code/code-search.ts"),
      ]);
    const catalogPath = catalogPathOf(values);
    const remote = await remoteOf(workspaces);
    for (const folder of workspaces) {
      const bar = terminalProgress("files");
      try {
        const report = await ingestWorkspace(folder, {
          catalogPath,
          remote,
          onProgress: bar
            ? (p) => bar.update(p.done, p.total, p.stage === "embed" ? "embedded" : "files")
            : undefined,
        });
        bar?.clear();
        if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
        else
          process.stdout.write(
            `ingest: ${report.root}: files=${report.files} chunks=${report.chunks} changed=${report.changed} removed=${report.removed}${remote ? ` embedded=${report.embedded} (${remote.model})` : ""} in ${report.durationMs} ms\n`,
          );
      } catch (error) {
        bar?.clear();
        if (
          error instanceof RagRequestError ||
          error instanceof RemoteEmbeddingError ||
          error instanceof RepositoryError
        )
          throw new UserError(`${folder}: ${error.message}`);
        throw error;
      }
    }
    return 0;
  },
});
