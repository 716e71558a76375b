import { statSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge serve [--project=<path>]",
  description:
    "Runs the MCP server on stdin/stdout (tools: rag_search, memory_status, code_search, find_related). " +
    "The default project is the client's root or working directory; --project pins it. Exits when the client closes stdin.",
  options: {
    project: { type: "string", arg: "path", description: "Default project/repository for every tool call" },
  },
  async run({ values }) {
    const project = typeof values.project === "string" ? values.project : undefined;
    // A mistyped --project would otherwise answer every call with "memory is not active for <path>",
    // which reads as "activate it", not "fix the server's configuration".
    if (project !== undefined && !statSync(resolve(project), { throwIfNoEntry: false })?.isDirectory())
      throw new UserError(`--project ${resolve(project)} is not an existing folder`);
    // PERF: the SDK and zod load only for this command, never on a hook's path.
    const { serve } = await import("../../mcp/server.ts");
    return serve({ project });
  },
});
