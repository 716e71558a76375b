import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Files of a folder (recursively) with their sizes, largest first. */
export function diskUsage(dir: string): { name: string; bytes: number }[] {
  const files: { name: string; bytes: number }[] = [];
  const walk = (path: string, prefix: string) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full, `${prefix}${entry.name}/`);
      else if (entry.isFile()) {
        // A running indexer or capture removes its lock and temporary files at any moment.
        const stat = statSync(full, { throwIfNoEntry: false });
        if (stat) files.push({ name: prefix + entry.name, bytes: stat.size });
      }
    }
  };
  walk(dir, "");
  return files.sort((a, b) => b.bytes - a.bytes);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** The last `count` entries of an errors.log (each starts with an ISO timestamp; stack lines follow). */
export function recentErrors(log: string, count: number): { ts: string; context: string; message: string }[] {
  const entries: { ts: string; context: string; message: string }[] = [];
  for (const line of log.split("\n")) {
    const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z) \[([^\]]*)\] (.*)$/.exec(line);
    if (match) entries.push({ ts: match[1], context: match[2], message: match[3] });
  }
  return entries.slice(-count);
}

/** LLM spend as memoryStatus reports it: per provider/model totals, or whatever shape it grew into. */
export function formatUsage(usage: unknown): string {
  if (usage === undefined || usage === null || (Array.isArray(usage) && usage.length === 0))
    return "none (no LLM calls recorded)";
  if (Array.isArray(usage)) {
    return usage
      .map((u) => {
        const t = u as {
          provider?: string;
          model?: string;
          calls?: number;
          inputTokens?: number;
          outputTokens?: number;
        };
        if (typeof t.provider !== "string") return JSON.stringify(u);
        return `${t.provider}/${t.model}: ${t.calls ?? 0} calls, ${t.inputTokens ?? 0} input + ${t.outputTokens ?? 0} output tokens`;
      })
      .join("; ");
  }
  return JSON.stringify(usage);
}
