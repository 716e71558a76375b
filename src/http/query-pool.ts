/**
 * `serve --http --workers N`: code queries answered by N processes of this binary, each with the served
 * workspaces' indexes loaded, so a query's CPU (BM25, the dense scan, the rerank) runs on N cores while
 * the server's own thread only parses, routes and answers. One query is one message over the child's
 * IPC channel to the least busy process; the answer comes back the same way. Everything else (stats,
 * ingest, memory) stays in the server process. A worker reloads an index re-ingested by anyone, as the
 * server does (RagService checks the file's mtime).
 */
import { type RemoteEmbeddingConfig, RemoteEmbeddingError } from "../embed/remote.ts";
import { logError } from "../home/log.ts";
import { selfCommand } from "../memory/background.ts";
import { type RagQueryResult, RagRequestError, RagService } from "../rag/service.ts";

/** The environment variable that makes `serve --http` a query worker: its value is the WorkerSetup. */
export const QUERY_WORKER_ENV = "TRIFORGE_HTTP_QUERY_WORKER";
/** A worker that dies is started again this many times in all; after that its share goes to the others. */
const RESTARTS = 3;
/** How long `close` waits for the workers to exit before killing them. */
const STOP_WAIT_MS = 3_000;

export interface WorkerSetup {
  workspaces: string[];
  catalogPath: string;
  remote?: RemoteEmbeddingConfig;
}

interface QueryMessage {
  id: number;
  query: string;
  topK: number;
}
type AnswerMessage =
  | { id: number; result: RagQueryResult }
  | { id: number; error: { kind: "request" | "remote" | "internal"; message: string } };

interface Pending {
  resolve: (result: RagQueryResult) => void;
  reject: (error: Error) => void;
}

interface Slot {
  process: ReturnType<typeof Bun.spawn> | undefined;
  inFlight: Map<number, Pending>;
  restarts: number;
}

export class QueryPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly setup: WorkerSetup,
    count: number,
    /** Answers in this process when no worker is left (every restart spent). */
    private readonly fallback: RagService,
  ) {
    for (let i = 0; i < count; i++) {
      const slot: Slot = { process: undefined, inFlight: new Map(), restarts: 0 };
      this.slots.push(slot);
      this.spawn(slot);
    }
  }

  get workers(): number {
    return this.slots.filter((s) => s.process).length;
  }

  private spawn(slot: Slot): void {
    slot.process = Bun.spawn([...selfCommand(), "serve", "--http"], {
      env: { ...process.env, [QUERY_WORKER_ENV]: JSON.stringify(this.setup) },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "inherit",
      serialization: "advanced",
      ipc: (message: AnswerMessage) => {
        const pending = slot.inFlight.get(message.id);
        if (!pending) return;
        slot.inFlight.delete(message.id);
        if ("result" in message) return pending.resolve(message.result);
        const { kind, message: text } = message.error;
        pending.reject(
          kind === "request"
            ? new RagRequestError(text)
            : kind === "remote"
              ? new RemoteEmbeddingError(text)
              : new Error(text),
        );
      },
      onExit: (_proc, code, signal) => {
        slot.process = undefined;
        const lost = [...slot.inFlight.values()];
        slot.inFlight.clear();
        for (const pending of lost) pending.reject(new Error(`a query worker exited (${signal ?? code})`));
        if (this.closed) return;
        logError("serve --http: a query worker exited", new Error(`exit ${signal ?? code}`));
        if (slot.restarts++ < RESTARTS) this.spawn(slot);
      },
    });
  }

  /** RagService.query on the least busy worker (in this process when none is running). */
  query(query: string, topK: number): Promise<RagQueryResult> {
    let best: Slot | undefined;
    for (const slot of this.slots)
      if (slot.process && (!best || slot.inFlight.size < best.inFlight.size)) best = slot;
    if (!best?.process) return this.fallback.query(query, topK);
    const id = this.nextId++;
    const slot = best;
    return new Promise<RagQueryResult>((resolve, reject) => {
      slot.inFlight.set(id, { resolve, reject });
      slot.process!.send({ id, query, topK } satisfies QueryMessage);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = this.slots.flatMap((s) => (s.process ? [s.process] : []));
    for (const child of running) child.kill("SIGTERM");
    // A worker stuck in a query is not waited for past a few seconds.
    const late = setTimeout(() => {
      for (const child of running) child.kill("SIGKILL");
    }, STOP_WAIT_MS);
    await Promise.all(running.map((child) => child.exited));
    clearTimeout(late);
  }
}

/**
 * The worker's side: answers QueryMessages from the parent until the channel closes (the server
 * stopped, or died without stopping us).
 */
export async function runQueryWorker(setup: WorkerSetup): Promise<never> {
  const rag = new RagService(setup.workspaces, { catalogPath: setup.catalogPath, remote: setup.remote });
  rag.warm().catch((error) => logError("serve --http: query worker loading the indexes", error));
  const send = (message: AnswerMessage) => process.send?.(message);
  process.on("message", async (message: QueryMessage) => {
    try {
      send({ id: message.id, result: await rag.query(message.query, message.topK) });
    } catch (error) {
      const kind =
        error instanceof RagRequestError
          ? "request"
          : error instanceof RemoteEmbeddingError
            ? "remote"
            : "internal";
      if (kind === "internal") logError("serve --http: query worker", error);
      send({ id: message.id, error: { kind, message: (error as Error).message } });
    }
  });
  await new Promise<void>((done) => {
    process.once("disconnect", done);
    process.once("SIGTERM", done);
    process.once("SIGINT", done);
  });
  // The IPC listener would keep the event loop, and so the process, alive.
  process.exit(0);
}
