import { resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { logError } from "../home/log.ts";

/** A client that advertises roots but never answers must not stall tool calls for long. */
const ROOTS_TIMEOUT_MS = 5_000;

/**
 * The folder the client works in, from MCP roots when the client offers them. Our cwd stays the
 * default when it lies inside one of the roots (it is the more specific place); otherwise the first
 * local root is. Tool calls wait for `ready` so that even the first call sees the right project.
 */
export class ClientRoots {
  /** The chosen root, or undefined to use the cwd. */
  root: string | undefined;
  ready: Promise<void> = Promise.resolve();
  private settle: () => void = () => {};

  constructor(private readonly cwd: string) {}

  /** Called when the client's `initialize` says it offers roots: calls wait until they are known. */
  expect(): void {
    this.ready = new Promise<void>((done) => {
      this.settle = done;
      setTimeout(done, ROOTS_TIMEOUT_MS).unref();
    });
  }

  /** Reads the roots now and again whenever the client says they changed. */
  async follow(server: McpServer): Promise<void> {
    const capability = server.server.getClientCapabilities()?.roots;
    if (!capability) return this.settle();
    const refresh = async () => {
      try {
        const { roots } = await server.server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS });
        const local = roots
          .filter((r) => r.uri.startsWith("file://"))
          .map((r) => resolve(fileURLToPath(r.uri)));
        this.root = local.some((root) => this.cwd === root || this.cwd.startsWith(root + sep))
          ? undefined
          : local[0];
      } catch (error) {
        logError("mcp roots", error);
      } finally {
        this.settle();
      }
    };
    if (capability.listChanged)
      server.server.setNotificationHandler(RootsListChangedNotificationSchema, refresh);
    await refresh();
  }
}
