/**
 * What the fake provider servers (anthropic.ts, openai.ts, ollama.ts) share: a request log, a queue of
 * scripted replies, and replies that never come (for client timeouts). Each fake is a real HTTP server
 * on 127.0.0.1 (Bun.serve on a free port) speaking its provider's wire format, so the code under test
 * runs its real SDK and HTTP stack.
 */
import type { Server } from "bun";

/** One request as the fake received it. */
export interface ReceivedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The body parsed as JSON, or undefined when it was empty or not JSON (see rawBody). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary request fields.
  body: any;
  rawBody: string;
}

/** Shared reply kinds; each fake adds its own success reply. */
export type CommonReply =
  /** An HTTP error with the provider's error body; `headers` e.g. `{"retry-after": "2"}`. */
  | { kind: "error"; status: number; type?: string; message?: string; headers?: Record<string, string> }
  /** Exactly these bytes (malformed JSON, an HTML error page from a proxy…). */
  | { kind: "raw"; status?: number; body: string; headers?: Record<string, string> }
  /** No answer at all until the client gives up or the server stops: exercises client timeouts. */
  | { kind: "hang" };

/** Options every scripted reply may carry. */
export interface ReplyControls {
  /** Use this reply only for a request it accepts; other requests skip it (it stays queued). */
  when?: (request: ReceivedRequest) => boolean;
  /** Wait this long before answering. */
  delayMs?: number;
}

export function errorReply(
  status: number,
  options: { type?: string; message?: string; headers?: Record<string, string> } = {},
) {
  return { kind: "error" as const, status, ...options };
}

export function rawReply(body: string, options: { status?: number; headers?: Record<string, string> } = {}) {
  return { kind: "raw" as const, body, ...options };
}

export function hangReply() {
  return { kind: "hang" as const };
}

/** A FIFO of scripted replies; `take` removes the first one whose `when` accepts the request. */
export class ReplyQueue<R extends ReplyControls> {
  private readonly queue: R[] = [];

  push(...replies: R[]): void {
    this.queue.push(...replies);
  }

  take(request: ReceivedRequest): R | undefined {
    const index = this.queue.findIndex((r) => !r.when || r.when(request));
    return index < 0 ? undefined : this.queue.splice(index, 1)[0];
  }

  get length(): number {
    return this.queue.length;
  }
}

export async function readRequest(req: Request): Promise<ReceivedRequest> {
  const url = new URL(req.url);
  const rawBody = await req.text();
  let body: unknown;
  try {
    body = rawBody ? JSON.parse(rawBody) : undefined;
  } catch {
    body = undefined;
  }
  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  return {
    method: req.method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body,
    rawBody,
  };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Crude token count (4 characters a token), enough for replies whose usage a test does not script. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function randomId(prefix: string): string {
  return `${prefix}${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

/** How a provider words its errors: the body for a type and message, and the type of a bare status. */
export interface ErrorFormat {
  body: (type: string, message: string) => unknown;
  defaultType: (status: number) => string;
}

/** What every provider fake gives a test: its address, the request log and its reply script. */
export interface ScriptedFake<R> {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  requests: ReceivedRequest[];
  /** Queues replies; each request takes the first one whose `when` accepts it. */
  enqueue(...replies: R[]): void;
  /** Replies still queued. */
  pending(): number;
  stop(): Promise<void>;
}

/**
 * A Bun server on 127.0.0.1 whose `handle` runs with a logged request. Pending `hang` replies end when
 * the client aborts or the server stops.
 */
export class FakeHttpServer {
  readonly requests: ReceivedRequest[] = [];
  private readonly server: Server<undefined>;
  private readonly hanging = new Set<() => void>();

  constructor(handle: (request: ReceivedRequest, signal: AbortSignal) => Promise<Response> | Response) {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      // Never cut a slow or hanging request ourselves: the client's timeout is what is under test.
      idleTimeout: 0,
      fetch: async (req) => {
        const request = await readRequest(req);
        this.requests.push(request);
        return handle(request, req.signal);
      },
    });
  }

  /** `http://127.0.0.1:<port>`, no trailing slash. */
  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** Waits `ms`, or resolves early when the client goes away. */
  delay(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** A response that never comes: resolves with a 499 only once the client aborts or the server stops. */
  hang(signal: AbortSignal): Promise<Response> {
    return new Promise((resolve) => {
      const end = () => {
        this.hanging.delete(end);
        resolve(new Response(null, { status: 499 }));
      };
      this.hanging.add(end);
      signal.addEventListener("abort", end);
    });
  }

  /** The common replies (error, raw, hang) in the provider's error format. */
  async common(reply: CommonReply, signal: AbortSignal, errors: ErrorFormat): Promise<Response> {
    switch (reply.kind) {
      case "error": {
        const type = reply.type ?? errors.defaultType(reply.status);
        return json(errors.body(type, reply.message ?? `fake ${type}`), reply.status, reply.headers);
      }
      case "raw":
        return new Response(reply.body, {
          status: reply.status ?? 200,
          headers: { "content-type": "application/json", ...reply.headers },
        });
      case "hang":
        return this.hang(signal);
    }
  }

  async stop(): Promise<void> {
    for (const end of [...this.hanging]) end();
    await this.server.stop(true);
  }
}

const COMMON_KINDS = new Set(["error", "raw", "hang"]);

/**
 * A FakeHttpServer answering from a script: a queue of replies of type R (the common kinds plus the
 * fake's own) and a fallback for an empty queue. `handle` checks a request as the provider would, then
 * calls `reply()` for what to answer with.
 */
export class ScriptedServer<R extends ReplyControls & { kind: string }> extends FakeHttpServer {
  private readonly queue = new ReplyQueue<R>();

  constructor(
    private readonly fallback: R | null,
    private readonly errors: ErrorFormat,
    handle: (request: ReceivedRequest, signal: AbortSignal) => Promise<Response> | Response,
  ) {
    super(handle);
  }

  /**
   * The scripted reply for a request, after its delay: the fake's own kinds are returned for it to
   * build; a Response otherwise — nothing scripted (`noReply`, a 500), a client that went away (499),
   * or a common reply (error, raw, hang) in the provider's error format.
   */
  async reply(
    request: ReceivedRequest,
    signal: AbortSignal,
    noReply: () => Response,
  ): Promise<Exclude<R, CommonReply> | Response> {
    const reply = this.queue.take(request) ?? this.fallback;
    if (!reply) return noReply();
    if (reply.delayMs) await this.delay(reply.delayMs, signal);
    if (signal.aborted) return new Response(null, { status: 499 });
    if (COMMON_KINDS.has(reply.kind)) return this.common(reply as CommonReply, signal, this.errors);
    return reply as Exclude<R, CommonReply>;
  }

  /** The logged requests for one endpoint, in order. */
  requestsTo(method: string, path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path === path);
  }

  /** The handle a test holds. */
  fake(): ScriptedFake<R> {
    return {
      url: this.url,
      requests: this.requests,
      enqueue: (...replies) => this.queue.push(...replies),
      pending: () => this.queue.length,
      stop: () => this.stop(),
    };
  }
}
