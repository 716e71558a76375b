import { statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { findProjectRoot } from "../project/config.ts";

/** What every tool needs to know about the client it serves. */
export interface ServerContext {
  /** The client's working folder: `--project`, else a client root holding our cwd, else our cwd. */
  defaultRoot(): string;
}

/** Bad tool input the agent can fix (a path that does not exist): reported plainly, not logged. */
export class ToolInputError extends Error {}

/**
 * The memory project a tool call is about: `projectPath` (relative to the default root) or the
 * default root, walked up to the folder holding `.triforge/config.json`. A folder that is not active
 * is returned as is; the memory core answers it with a reason, not an error.
 */
export function memoryProjectRoot(context: ServerContext, projectPath?: string): string {
  const start = projectPath ? resolve(context.defaultRoot(), expandHome(projectPath)) : context.defaultRoot();
  if (projectPath && !isDirectory(start))
    throw new ToolInputError(`project_path ${start} is not an existing folder`);
  return findProjectRoot(start) ?? start;
}

/** Agents often write `~/project`; no shell expands it on the way here (rag_search, code_search, find_related). */
export function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** For toolErrors: the folder a memory tool call is about (its project_path, else the default root). */
export function projectOfCall(context: ServerContext): (args: { project_path?: string }) => string {
  return ({ project_path }) => memoryProjectRoot(context, project_path);
}
