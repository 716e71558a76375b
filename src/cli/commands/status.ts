import { existsSync, readFileSync } from "node:fs";
import { resolveProject } from "../../agents/activate.ts";
import { describeLlm, describeLlmReport } from "../../agents/llm-report.ts";
import { displayPath } from "../../agents/report.ts";
import { diskUsage, formatBytes, formatUsage, recentErrors } from "../../agents/status.ts";
import { describeStorage, storageAvailable } from "../../agents/storage.ts";
import { errorLogPath, projectDataDir } from "../../home/paths.ts";
import { configPath, configProblems, readProjectConfig } from "../../project/config.ts";
import { defineCommand, UserError } from "../command.ts";

/** How many of the newest errors.log entries status shows. */
const RECENT_ERRORS = 3;

export default defineCommand({
  usage: "triforge status [--project <path>] [--json]",
  description:
    "Shows a project's memory: whether it is active, chunks, knowledge-graph nodes and edges, size on disk, last index, LLM spend and recent errors.",
  options: {
    project: { type: "string", arg: "path", description: "The project (default: the current directory)" },
    json: { type: "boolean", description: "Print the report as JSON" },
  },
  async run({ values }) {
    const root = resolveProject(values.project as string | undefined);
    const active = existsSync(configPath(root));
    let config: ReturnType<typeof readProjectConfig> | undefined;
    try {
      config = active ? readProjectConfig(root) : undefined;
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    // PERF: the LLM settings list comes with the provider chain's module, needed only here.
    const { LLM_SETTINGS } = await import("../../llm/resolve.ts");
    const problems = config ? configProblems(config, LLM_SETTINGS) : [];
    const configError = problems.length ? `${configPath(root)}: ${problems.join("; ")}` : undefined;
    const dir = projectDataDir(root);
    const files = diskUsage(dir);
    const errorsLog = errorLogPath(root);
    const errors = existsSync(errorsLog) ? recentErrors(readFileSync(errorsLog, "utf8"), RECENT_ERRORS) : [];
    // PERF: the store (SQLite, graph) is opened only here, never on a hook's path.
    const { memoryStatus } = await import("../../memory/status.ts");
    const memory: Record<string, unknown> = existsSync(dir) ? { ...(await memoryStatus(root)) } : {};
    // The hook and tool ledger (hooks.jsonl): last sessions at a glance, tokens injected and saved.
    const { ledgerReport } = await import("../../home/ledger.ts");
    const hooks = existsSync(dir) ? ledgerReport(root) : undefined;
    // What the next index would send where: the provider resolved from llm and the environment, now.
    const llmInUse = config && !configError ? await describeLlm(config) : undefined;
    const report = {
      project: root,
      active,
      storage: config?.storage,
      // Where memory really is: a configured backend this version lacks falls back to the local store.
      storedIn: config ? (storageAvailable(config.storage) ? config.storage : "local") : undefined,
      llm: config?.llm,
      ...(llmInUse ? { llmInUse } : {}),
      ...(configError ? { configError } : {}),
      dataDir: dir,
      ...memory,
      disk: { totalBytes: files.reduce((sum, f) => sum + f.bytes, 0), files },
      recentErrors: errors,
      ...(hooks ? { hooks } : {}),
    };
    if (values.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return 0;
    }
    const lines = [
      `Project    ${displayPath(root)} — ${active ? `memory active (storage ${config ? describeStorage(config.storage) : "?"}, llm ${config?.llm})` : "memory not active (run 'triforge activate' or /rag)"}`,
    ];
    // Said right under the project line: everything below may be the result of it.
    if (configError)
      lines.push(
        `Config     ${displayPath(configPath(root))}: ${problems.join("; ")} (see 'triforge doctor')`,
      );
    if (llmInUse) lines.push(`LLM        ${describeLlmReport(llmInUse)}`);
    if (existsSync(dir) && !active) {
      // memoryStatus reads nothing of an inactive project: its zero counts would say the memory is gone.
      lines.push(
        `Memory     kept from when memory was active, not read now ('triforge activate' turns it back on, 'triforge purge' deletes it)`,
      );
      lines.push(`On disk    ${formatBytes(report.disk.totalBytes)} in ${displayPath(dir)}`);
    } else if (existsSync(dir)) {
      const count = (key: string) => (typeof memory[key] === "number" ? String(memory[key]) : "?");
      lines.push(
        `Memory     ${count("chunks")} chunks from ${count("sessions")} sessions; graph ${count("nodes")} nodes, ${count("edges")} edges`,
      );
      const shared = memory.shared as import("../../memory/shared.ts").SharedStatus | undefined;
      if (shared)
        lines.push(
          `Shared     ${shared.backend} at ${shared.location}${shared.reachable ? `, schema version ${shared.schemaVersion}` : ` not reached (${shared.problem}); counts above are the local mirror's`}; this machine: ${shared.localChunks} chunks, ${shared.localChunks - shared.pending} pushed, ${shared.pending} to push`,
        );
      const note = `${memory.indexing ? " (indexing now)" : ""}${memory.reason ? ` — ${memory.reason}` : ""}`;
      lines.push(`Indexed    ${memory.lastIndexed ?? "never"}${note}`);
      // Captured but not indexed yet: what rag_search and the prelude cannot see until the next index.
      if (typeof memory.pendingRecords === "number" && memory.pendingRecords > 0)
        lines.push(
          `Pending    ${memory.pendingRecords} captured record(s) not indexed yet (the next session end indexes them, or 'triforge index')`,
        );
      // This month's spend first (what a bill shows), then the store's running total.
      const month = new Date().toISOString().slice(0, 7);
      const spent = Array.isArray(memory.llmUsage) && memory.llmUsage.length > 0;
      lines.push(
        spent
          ? `LLM spend  ${month}: ${formatUsage(memory.llmUsageThisMonth)}; in all: ${formatUsage(memory.llmUsage)}`
          : `LLM spend  ${formatUsage(memory.llmUsage)}`,
      );
      if (hooks?.sessions.length)
        lines.push(...hooks.sessions.map((s, i) => `${i ? "          " : "Sessions  "} ${s}`));
      if (hooks?.ledger.length)
        lines.push(...hooks.ledger.map((l, i) => `${i ? "          " : "Ledger    "} ${l}`));
      const top = files.slice(0, 5).map((f) => `${f.name} ${formatBytes(f.bytes)}`);
      lines.push(
        `On disk    ${formatBytes(report.disk.totalBytes)} in ${displayPath(dir)}${top.length ? ` (${top.join(", ")})` : ""}`,
      );
    } else {
      lines.push("Memory     nothing stored yet");
    }
    lines.push(errors.length ? `Errors     ${errors.length} recent:` : "Errors     none");
    for (const e of errors) lines.push(`  ${e.ts} [${e.context}] ${e.message}`);
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  },
});
