import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { logError } from "../cli/log.ts";
import { ToolInputError } from "./context.ts";

/**
 * Wraps a tool handler so that any failure becomes an MCP tool error result the agent can read,
 * never a dead server. Unexpected failures also go to errors.log for the user.
 */
export function toolErrors<Args extends unknown[]>(
  tool: string,
  handler: (...args: Args) => Promise<CallToolResult>,
): (...args: Args) => Promise<CallToolResult> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      if (!(error instanceof ToolInputError)) logError(`mcp ${tool}`, error);
      const message = error instanceof Error ? error.message : String(error);
      return { isError: true, content: [{ type: "text", text: `${tool} failed: ${message}` }] };
    }
  };
}
