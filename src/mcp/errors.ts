import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { logError } from "../home/log.ts";
import { findProjectRoot } from "../project/config.ts";
import { ToolInputError } from "./context.ts";

/**
 * Wraps a tool handler so that any failure becomes an MCP tool error result the agent can read,
 * never a dead server. Unexpected failures also go to errors.log for the user: the errors.log of the
 * project the call was about (`projectOf`: its project_path, else the client's roots or cwd) when that
 * project is active — where `triforge status` shows it — else the global one.
 */
export function toolErrors<Args extends unknown[]>(
  tool: string,
  handler: (...args: Args) => Promise<CallToolResult>,
  projectOf?: (args: NoInfer<Args>[0]) => string | undefined,
): (...args: Args) => Promise<CallToolResult> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      if (!(error instanceof ToolInputError))
        logError(
          `mcp ${tool}`,
          error,
          activeProject(() => projectOf?.(args[0])),
        );
      const message = error instanceof Error ? error.message : String(error);
      return { isError: true, content: [{ type: "text", text: `${tool} failed: ${message}` }] };
    }
  };
}

/**
 * The active project around the folder `folderOf` names, or undefined (the global errors.log): an
 * inactive folder gets no data folder of its own just because a call about it failed.
 */
export function activeProject(folderOf: () => string | undefined): string | undefined {
  try {
    const folder = folderOf();
    return folder ? findProjectRoot(folder) : undefined;
  } catch {
    return undefined;
  }
}
