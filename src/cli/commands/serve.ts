import { defineCommand } from "../command.ts";

export default defineCommand({
  usage: "triforge serve [--project=<path>]",
  description:
    "Runs the MCP server on stdin/stdout (tools: rag_search, memory_status, code_search, find_related). " +
    "The default project is the client's root or working directory; --project pins it. Exits when the client closes stdin.",
  options: {
    project: { type: "string", arg: "path", description: "Default project/repository for every tool call" },
  },
  async run({ values }) {
    // PERF: the SDK and zod load only for this command, never on a hook's path.
    const { serve } = await import("../../mcp/server.ts");
    return serve({ project: typeof values.project === "string" ? values.project : undefined });
  },
});
