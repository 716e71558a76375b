import { dirname } from "node:path";
import { errorLogPath } from "./paths.ts";

/**
 * Appends one line to an `errors.log` (the project's when a project is known, else the global one).
 * Never throws: logging is what we do when something already went wrong.
 */
export function logError(context: string, error: unknown, projectPath?: string): void {
  try {
    // PERF: node:fs (~1.2 ms of start-up) only once something failed: every hook imports this module.
    const { appendFileSync, mkdirSync } = require("node:fs") as typeof import("node:fs");
    const file = errorLogPath(projectPath);
    mkdirSync(dirname(file), { recursive: true });
    const message =
      error instanceof Error
        ? `${error.message}${error.stack ? `\n  ${error.stack.split("\n").slice(1, 4).join("\n  ")}` : ""}`
        : String(error);
    appendFileSync(file, `${new Date().toISOString()} [${context}] ${message}\n`);
  } catch {
    // Nowhere left to report to; the caller still fails open.
  }
}
