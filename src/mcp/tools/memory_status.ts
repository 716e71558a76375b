import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { memoryProjectRoot, projectOfCall, type ServerContext } from "../context.ts";
import { toolErrors } from "../errors.ts";
import description from "./memory_status.txt" with { type: "text" };

export function registerMemoryStatus(server: McpServer, context: ServerContext): void {
  server.registerTool(
    "memory_status",
    {
      title: "Memory status of this project",
      description,
      inputSchema: {
        project_path: z
          .string()
          .optional()
          .describe("Project folder; defaults to the client's working directory"),
      },
      // The memory core may report more than these fields; they pass through unchanged.
      outputSchema: z
        .object({
          project: z.string(),
          active: z.boolean(),
          reason: z.string().optional(),
          chunks: z.number().optional(),
          nodes: z.number().optional(),
          edges: z.number().optional(),
          lastIndexed: z.string().nullable().optional(),
          llmUsage: z.unknown().optional(),
          pendingRecords: z.number().optional(),
        })
        .loose(),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    toolErrors(
      "memory_status",
      async ({ project_path }) => {
        const root = memoryProjectRoot(context, project_path);
        // PERF: the store opens on the first call, not at server start. An inactive project or a
        // missing index comes back as a report with a reason, not an error.
        const { memoryStatus } = await import("../../memory/status.ts");
        const { active, reason, ...counts } = await memoryStatus(root);
        // Why memory is off or empty comes first: an agent should not have to read past a dozen zeros.
        const report = { project: root, active, reason, ...counts };
        return { content: [{ type: "text", text: describeStatus(report) }], structuredContent: report };
      },
      projectOfCall(context),
    ),
  );
}

/** One `key: value` line per field, nested objects as compact JSON: readable by people and agents. */
function describeStatus(report: Record<string, unknown>): string {
  return Object.entries(report)
    .filter(([, value]) => value !== undefined)
    .map(
      ([key, value]) =>
        `${key}: ${typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)}`,
    )
    .join("\n");
}
