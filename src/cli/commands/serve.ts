import { statSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand, UsageError, UserError } from "../command.ts";

export default defineCommand({
  usage:
    "triforge serve [--project=<path>]\n       triforge serve --http [--host 127.0.0.1] [--port 8787] [--workspace DIR …] [--token T] [--db PATH] [--workers N]",
  description:
    "Runs the MCP server on stdin/stdout (tools: rag_search, memory_status, code_search, find_related). " +
    "The default project is the client's root or working directory; --project pins it. Exits when the client closes stdin. " +
    "With --http: an HTTP server instead (claw-rag-service's API, triforge's memory API and a web page; docs/http.md), " +
    "on loopback unless --host says otherwise; any other address requires a token.",
  options: {
    project: { type: "string", arg: "path", description: "Default project/repository for every tool call" },
    http: {
      type: "boolean",
      description: "Serve HTTP (the RAG API and the web page) instead of MCP on stdio",
    },
    host: {
      type: "string",
      arg: "address",
      description: "--http: address to listen on (TRIFORGE_HTTP_HOST, CLAW_RAG_HOST; default 127.0.0.1)",
    },
    port: {
      type: "string",
      arg: "port",
      description: "--http: port (TRIFORGE_HTTP_PORT, CLAW_RAG_PORT; default 8787; 0 picks a free one)",
    },
    workspace: {
      type: "string",
      short: "w",
      multiple: true,
      arg: "dir",
      description:
        "--http: a folder to serve (repeatable; default: the ingested ones, else the current folder)",
    },
    token: {
      type: "string",
      arg: "token",
      description:
        "--http: the bearer token (TRIFORGE_HTTP_TOKEN; default: the stored one, generated with mode 0600)",
    },
    "require-token": {
      type: "boolean",
      description:
        "--http: ask for the token on every route but /health on loopback too (a machine shared with other users)",
    },
    "allow-origin": {
      type: "string",
      arg: "origin",
      description:
        "--http: one other origin whose pages may call the API (CORS), e.g. http://localhost:3000; none by default",
    },
    db: {
      type: "string",
      arg: "path",
      description: "--http: the ingest catalog (CLAW_RAG_DB; default: http/catalog.db in the data folder)",
    },
    workers: {
      type: "string",
      arg: "n",
      description:
        "--http: answer code queries in N processes beside the server, one core each (default 0: in the server)",
    },
  },
  async run({ values }) {
    if (values.http === true) {
      if (values.project !== undefined)
        throw new UsageError("--project is the MCP server's; 'serve --http' serves --workspace folders");
      const { serveHttp } = await import("../http-options.ts");
      return serveHttp(values);
    }
    const httpOnly = [
      "host",
      "port",
      "workspace",
      "token",
      "require-token",
      "allow-origin",
      "db",
      "workers",
    ].find((name) => values[name] !== undefined);
    if (httpOnly) throw new UsageError(`--${httpOnly} is an option of 'serve --http'`);
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
