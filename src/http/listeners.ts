/**
 * `serve --http --workers N`: N more processes of this binary listening on the server's port (`SO_REUSEPORT`,
 * Linux: the kernel hands each new connection to one of the listening processes; only processes of the
 * same user can join the port). Each is a whole server (every route, the same token and page key) with
 * the served indexes loaded, so a query is parsed, searched and answered in one process: nothing is
 * forwarded or serialised twice. The server process listens too (and restarts a listener that dies).
 * What they share lives in files, as between the server and the CLI: an index re-ingested by one is
 * reloaded by the others (RagService checks its mtime), and memory changes go through the store and
 * its index lock.
 */
import type { RemoteEmbeddingConfig } from "../embed/remote.ts";
import { logError } from "../home/log.ts";
import { selfCommand } from "../memory/background.ts";
import { RagService } from "../rag/service.ts";
import { startHttpServer } from "./server.ts";

/** The environment variable that makes `serve --http` a listener process: its value is the ListenerSetup. */
export const LISTENER_ENV = "TRIFORGE_HTTP_LISTENER";
/** A listener that dies is started again this many times in all; the others (or the server) answer. */
const RESTARTS = 3;
/** How long the server waits for a listener to load its indexes and listen before it goes on without it. */
const READY_WAIT_MS = 120_000;
/** How long `close` waits for the listeners to exit before killing them. */
const STOP_WAIT_MS = 3_000;

export interface ListenerSetup {
  workspaces: string[];
  catalogPath: string;
  remote?: RemoteEmbeddingConfig;
  host: string;
  port: number;
  token: string;
  pageKey: string;
  requireToken: boolean;
  allowOrigin?: string;
}

type ListenerMessage = { ready: true } | { failed: string };

interface Slot {
  process: ReturnType<typeof Bun.spawn> | undefined;
  /** Listening now. */
  ready: boolean;
  restarts: number;
}

export class ListenerPool {
  private readonly slots: Slot[] = [];
  private closed = false;

  /** Starts `count` listeners; `ready` settles once each has listened, failed or run out of time. */
  readonly ready: Promise<void>;

  constructor(
    private readonly setup: ListenerSetup,
    count: number,
  ) {
    const started: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const slot: Slot = { process: undefined, ready: false, restarts: 0 };
      this.slots.push(slot);
      started.push(this.spawn(slot));
    }
    this.ready = Promise.all(started).then(() => undefined);
  }

  /** How many are listening now. */
  get listening(): number {
    return this.slots.filter((s) => s.ready).length;
  }

  private spawn(slot: Slot): Promise<void> {
    let settle: () => void = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const late = setTimeout(settle, READY_WAIT_MS);
    slot.process = Bun.spawn([...selfCommand(), "serve", "--http"], {
      env: { ...process.env, [LISTENER_ENV]: JSON.stringify(this.setup) },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "inherit",
      ipc: (message: ListenerMessage) => {
        if ("failed" in message)
          logError("serve --http: a listener could not start", new Error(message.failed));
        else slot.ready = true;
        clearTimeout(late);
        settle();
      },
      onExit: (_proc, code, signal) => {
        slot.process = undefined;
        clearTimeout(late);
        settle();
        if (this.closed) return;
        slot.ready = false;
        logError("serve --http: a listener exited", new Error(`exit ${signal ?? code}`));
        if (slot.restarts++ < RESTARTS) this.spawn(slot);
      },
    });
    return settled;
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = this.slots.flatMap((s) => (s.process ? [s.process] : []));
    for (const child of running) child.kill("SIGTERM");
    // A listener stuck in a request is not waited for past a few seconds.
    const late = setTimeout(() => {
      for (const child of running) child.kill("SIGKILL");
    }, STOP_WAIT_MS);
    await Promise.all(running.map((child) => child.exited));
    clearTimeout(late);
  }
}

/**
 * The listener's side: loads the indexes, listens on the server's port beside it, says so, and runs
 * until the server stops it (or dies: the IPC channel closes).
 */
export async function runListener(setup: ListenerSetup): Promise<never> {
  // Nothing this process starts (a background indexer, say) inherits the token.
  delete process.env[LISTENER_ENV];
  const send = (message: ListenerMessage) => process.send?.(message);
  try {
    const rag = new RagService(setup.workspaces, { catalogPath: setup.catalogPath, remote: setup.remote });
    // Loaded before listening, so that no connection waits here for what another process has ready.
    await rag.warm();
    startHttpServer({ ...setup, rag, reusePort: true });
  } catch (error) {
    send({ failed: (error as Error).message });
    process.exit(1);
  }
  send({ ready: true });
  await new Promise<void>((done) => {
    process.once("disconnect", done);
    process.once("SIGTERM", done);
    process.once("SIGINT", done);
  });
  // Not server.stop(): in Bun 1.4.5 stopping one listener of a shared port closed the others' sockets
  // too, the server's included. Exiting closes only this process's.
  process.exit(0);
}

/** Whether something accepts connections on `host:port` now. */
export async function portAnswers(host: string, port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: host, port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}
