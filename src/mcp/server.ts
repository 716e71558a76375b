import { resolve } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import pkg from "../../package.json" with { type: "json" };
import { logError } from "../home/log.ts";
import { findProjectRoot } from "../project/config.ts";
import type { ServerContext } from "./context.ts";
import { activeProject } from "./errors.ts";
import instructions from "./instructions.txt" with { type: "text" };
import { ClientRoots } from "./roots.ts";
import { BoundedStdioTransport } from "./stdio.ts";
import { registerCodeSearch } from "./tools/code_search.ts";
import { registerFindRelated } from "./tools/find_related.ts";
import { registerMemoryStatus } from "./tools/memory_status.ts";
import { registerRagSearch } from "./tools/rag_search.ts";

/**
 * After stdin closes, requests already received get this long to be answered (a piped client may
 * still read). Below the 2 s the SDK's client waits before it sends SIGTERM.
 */
const SHUTDOWN_GRACE_MS = 1_500;

/** The server with every tool registered, not yet connected to a transport. */
export function createServer(context: ServerContext): McpServer {
  const server = new McpServer(
    { name: "triforge", version: pkg.version },
    { instructions, capabilities: { tools: {} } },
  );
  registerRagSearch(server, context);
  registerMemoryStatus(server, context);
  const codeContext = { defaultRepo: () => context.defaultRoot() };
  registerCodeSearch(server, codeContext);
  registerFindRelated(server, codeContext);
  return server;
}

/**
 * Serves MCP on stdin/stdout until the client goes away, then exits the process.
 * `project` pins the default project; otherwise it follows the client's roots and our cwd.
 */
export async function serve(options: { project?: string } = {}): Promise<never> {
  routeConsoleToStderr();
  const cwd = process.cwd();
  const roots = new ClientRoots(cwd);
  const context: ServerContext = {
    defaultRoot: () => (options.project ? resolve(options.project) : (roots.root ?? cwd)),
  };
  const server = createServer(context);
  const transport = new BoundedStdioTransport();
  const inFlight = instrumentTransport(transport, {
    onInitialize: (params) => {
      if (!options.project && params?.capabilities?.roots) roots.expect();
    },
    holdToolCalls: () => roots.ready,
  });

  let exiting = false;
  /** Exits once the requests already received are answered (the client may still read), or after a grace period. */
  const exit = (graceMs: number) => {
    if (exiting) return;
    exiting = true;
    setTimeout(() => process.exit(0), graceMs);
    setInterval(() => inFlight.size === 0 && transport.queued === 0 && process.exit(0), 10);
  };
  // The client closes our stdin to end the session (the MCP stdio shutdown sequence).
  process.stdin.on("end", () => exit(SHUTDOWN_GRACE_MS));
  process.stdin.on("close", () => exit(SHUTDOWN_GRACE_MS));
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") logError("mcp stdout", error);
    exit(0);
  });
  process.on("SIGTERM", () => exit(0));
  process.on("SIGINT", () => exit(0));
  // A stray failure in background work (warm-up, a late timer) is logged; the server keeps serving.
  process.on("unhandledRejection", (reason) => logError("mcp", reason));
  process.on("uncaughtException", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") return exit(0);
    logError("mcp", error);
  });

  server.server.oninitialized = () => {
    if (!options.project) void roots.follow(server);
    setTimeout(() => warmUp(context, roots.ready), 0);
  };
  await server.connect(transport);
  return new Promise<never>(() => {});
}

type InitializeParams = { capabilities?: { roots?: unknown } } | undefined;

/**
 * Wraps the transport before it starts: tracks the ids of requests not yet answered (for a clean
 * shutdown), lets the server see `initialize` first, and holds `tools/call` requests until
 * `holdToolCalls()` settles (order among them kept). Responses to our own requests pass at once.
 */
function instrumentTransport(
  transport: BoundedStdioTransport,
  hooks: { onInitialize: (params: InitializeParams) => void; holdToolCalls: () => Promise<void> },
): Set<string | number> {
  const inFlight = new Set<string | number>();
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const receive = transport.onmessage!;
    transport.onmessage = (message) => {
      if (!("method" in message)) return receive(message);
      if ("id" in message) inFlight.add(message.id);
      if (message.method === "initialize") hooks.onInitialize(message.params as InitializeParams);
      if (message.method === "tools/call") void hooks.holdToolCalls().then(() => receive(message));
      else receive(message);
    };
    return start();
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    try {
      await send(message);
    } finally {
      if (!("method" in message) && "id" in message && message.id !== undefined) inFlight.delete(message.id);
    }
  };
  return inFlight;
}

/** The warm-up's search: words a conversation's memory is likely to hold, so every stage of recall runs. */
const WARM_UP_QUERY = "what did we decide about the tests last time";

/**
 * Loads the model, the memory index of the default project when it is active (with one search
 * through it and its hits' checks), and the code index of the default folder when one is saved
 * (never building one unasked), in the background right after `initialized`, so that the first
 * rag_search or code_search answers warm.
 */
function warmUp(context: ServerContext, rootsReady: Promise<void>): void {
  void (async () => {
    const [{ loadModel }, { recall }, { warmIndex }] = await Promise.all([
      import("../embed/source.ts"),
      import("../memory/recall/recall.ts"),
      import("../code/code-search.ts"),
    ]);
    await loadModel();
    await rootsReady;
    // A shared store's marks are checked before every rag_search: one kept connection, not one each time.
    (await import("../memory/shared.ts")).keepSharedConnections();
    const root = findProjectRoot(context.defaultRoot());
    if (root) {
      // One search nobody sees, through what rag_search runs (recall, then its hits' checks), so the
      // first call meets compiled code and summary.md's replaced decisions already worked out.
      const result = await recall(root, WARM_UP_QUERY, { topK: 5 });
      await (await import("../memory/hit-checks.ts")).checkHits(root, result.hits);
    }
    await warmIndex(context.defaultRoot());
  })().catch((error) =>
    logError(
      "mcp warm-up",
      error,
      activeProject(() => context.defaultRoot()),
    ),
  );
}

/** stdout carries only protocol: anything a library logs goes to stderr instead. */
function routeConsoleToStderr(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.dir = toStderr;
  console.table = toStderr;
}
