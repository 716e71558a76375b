/**
 * `triforge serve --http`: claw-rag-service's API (`/health`, `/v1/stats`, `/v1/query`), triforge's own
 * (`/v1/ingest` with server-sent progress, `/v1/memory/…` to search, browse and curate memory) and the
 * web page, on Bun.serve. Only parsing, checking and formatting live here; every answer comes from the
 * cores the CLI and MCP use (src/rag, src/memory, src/code).
 */
import { existsSync, readFileSync } from "node:fs";
import { RemoteEmbeddingError } from "../embed/remote.ts";
import { ledgerProblems, ledgerTotals, readLedger, sessionTokens } from "../home/ledger.ts";
import { logError } from "../home/log.ts";
import { summaryPath } from "../home/paths.ts";
import { type Pin, PinLimitError, readPins, removePin } from "../memory/pins.ts";
import { preludeContext } from "../memory/prelude.ts";
import { projectPreludeOptions } from "../memory/prelude-project.ts";
import { RECALLED_NOTICE } from "../memory/recall/format.ts";
import { MODES, type Mode } from "../memory/recall/modes.ts";
import { configPath, findProjectRoot } from "../project/config.ts";
import {
  DEFAULT_TOP_K,
  type IngestProgress,
  MAX_TOP_K,
  type RagQueryResult,
  RagRequestError,
  type RagService,
  realFolder,
} from "../rag/service.ts";
import {
  type Access,
  type AuthContext,
  deny,
  isLoopback,
  newPageKey,
  sameSecret,
  serverHosts,
  TOKEN_COOKIE,
} from "./auth.ts";
import { pageAsset } from "./page/assets.ts";
import { TurnQueue } from "./turns.ts";

/** Request bodies larger than this are refused (413): a query is at most a few thousand characters. */
export const MAX_BODY_BYTES = 1 << 20;
/** claw-rag-service's clients send at most 12,000 characters; code search reads the first 4,000. */
export const MAX_QUERY_CHARS = 16_000;
export const MEMORY_DEFAULT_TOP_K = 5;
export const MEMORY_MAX_TOP_K = 50;
/** Hook records the ledger route returns: enough to see the last few sessions' runs. */
const RECENT_HOOK_RECORDS = 50;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...SECURITY_HEADERS, ...headers },
  });
}

/** An unexpected failure: logged in full, answered without details. */
function internalError(error: unknown): Response {
  logError("http", error);
  return json({ error: "internal error; the details are in triforge's errors.log" }, 500);
}

/** The body as a JSON object: 415 unless JSON, 413 past MAX_BODY_BYTES, 400 unparsable, 422 not an object. */
export async function readJsonObject(req: Request): Promise<Record<string, unknown>> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") throw new HttpError(415, "send the body as application/json");
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
  const parts: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    for await (const part of req.body) {
      size += part.byteLength;
      if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
      parts.push(part);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(parts).toString("utf8"));
  } catch {
    throw new HttpError(400, "the body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new HttpError(422, "the body must be a JSON object");
  return value as Record<string, unknown>;
}

function queryField(body: Record<string, unknown>): string {
  if (typeof body.query !== "string") throw new HttpError(422, "'query' must be a string");
  const query = body.query.trim();
  if (!query) throw new HttpError(400, "'query' is empty");
  if (query.length > MAX_QUERY_CHARS)
    throw new HttpError(400, `'query' is longer than ${MAX_QUERY_CHARS} characters`);
  return query;
}

/** `top_k`: a positive integer (default `fallback`), capped at `max` as claw-rag-service caps it. */
function topKField(value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value))
    throw new HttpError(422, "'top_k' must be an integer");
  if (value < 1) throw new HttpError(422, "'top_k' must be at least 1");
  return Math.min(max, value);
}

/** A query parameter that must be a whole number from 0 (422 otherwise); undefined when absent. */
function wholeParam(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value))
    throw new HttpError(422, `'${name}' must be a whole number from 0, not '${raw.slice(0, 40)}'`);
  return value;
}

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new HttpError(422, `'${field}' must be a string`);
  return value;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  token: string;
  rag: RagService;
  /** Ask for the token on every route but /health on loopback too. */
  requireToken?: boolean;
  /** The one other origin whose pages may call the API (CORS); none by default. */
  allowOrigin?: string;
  /** Answers `/v1/query` in place of `rag.query` (`--workers`: a pool of query processes). */
  query?: (query: string, topK: number) => Promise<RagQueryResult>;
}

export interface RunningServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

type Handler = (req: Request, params: string[], url: URL) => Promise<Response> | Response;
interface Route {
  pattern: RegExp;
  methods: Partial<Record<string, { access: Access; handle: Handler }>>;
}

export function startHttpServer(options: HttpServerOptions): RunningServer {
  const { rag } = options;
  const loopback = isLoopback(options.host);
  const pageKey = newPageKey();
  let auth: AuthContext;
  /** Code queries answered in this process, in arrival order (turns.ts; a pool orders its own). */
  const searches = new TurnQueue();

  /** The memory projects of the served workspaces (a workspace's nearest active project, else itself). */
  const projects = () => [...new Set(rag.workspaces.map((w) => findProjectRoot(w) ?? w))];
  /** The project a request names (it must be one of `projects()`), or the first. */
  const projectOf = (path: string | null | undefined): string => {
    const known = projects();
    if (!path) return known[0];
    // One answer for a missing folder and a foreign one: the API does not tell what exists elsewhere.
    const refused = new HttpError(404, `${path} is not a project of a served workspace`);
    let real: string;
    try {
      real = realFolder(path);
    } catch {
      throw refused;
    }
    const root = findProjectRoot(real) ?? real;
    if (!known.includes(root)) throw refused;
    return root;
  };
  const memoryCore = () => import("../memory/browse.ts");
  const recallCore = () => import("../memory/recall/recall.ts");
  const isActive = (root: string) => existsSync(configPath(root));
  /** The project a curation request names, 404 unless its memory is active. */
  const activeProjectOf = (path: string | null | undefined): string => {
    const project = projectOf(path);
    if (!isActive(project)) throw new HttpError(404, `memory is not active for ${project}`);
    return project;
  };
  const busy = () => new HttpError(409, "an indexer is running for this project; try again in a moment");
  const chunkId = (raw: string) => {
    const id = Number(raw);
    if (!Number.isSafeInteger(id) || id < 0) throw new HttpError(404, `no chunk ${raw}`);
    return id;
  };

  const routes: Route[] = [
    { pattern: /^\/$/, methods: { GET: { access: "read", handle: (_req, _p, url) => page(url) } } },
    {
      pattern: /^\/(page\.js|page\.css)$/,
      methods: { GET: { access: "read", handle: (_req, [name]) => asset(name) } },
    },
    {
      pattern: /^\/health$/,
      methods: {
        GET: {
          access: "open",
          handle: () =>
            new Response("ok", { headers: { "content-type": "text/plain", ...SECURITY_HEADERS } }),
        },
      },
    },
    {
      pattern: /^\/v1\/stats$/,
      methods: {
        GET: {
          access: "read",
          handle: async () => {
            const stats = await rag.stats();
            const { memoryCounts } = await import("../memory/status.ts");
            const memory = await Promise.all(
              projects().map(async (root) => {
                const s = await memoryCounts(root);
                return {
                  project: root,
                  active: s.active,
                  chunks: s.chunks,
                  sessions: s.sessions,
                  last_indexed: s.lastIndexed,
                  ...(s.reason ? { reason: s.reason } : {}),
                };
              }),
            );
            return json({ ...stats, memory });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/query$/,
      methods: {
        POST: {
          access: "read",
          handle: async (req) => {
            const body = await readJsonObject(req);
            const query = queryField(body);
            const topK = topKField(body.top_k, DEFAULT_TOP_K, MAX_TOP_K);
            return json(
              await (options.query ?? ((q, k) => searches.run(() => rag.query(q, k))))(query, topK),
            );
          },
        },
      },
    },
    {
      pattern: /^\/v1\/ingest$/,
      methods: { POST: { access: "curate", handle: (req) => ingest(req) } },
    },
    {
      pattern: /^\/v1\/memory\/query$/,
      methods: {
        POST: {
          access: "read",
          handle: async (req) => {
            const body = await readJsonObject(req);
            const query = queryField(body);
            const topK = topKField(body.top_k, MEMORY_DEFAULT_TOP_K, MEMORY_MAX_TOP_K);
            const mode = optionalString(body, "mode") ?? "hybrid";
            if (!(MODES as readonly string[]).includes(mode))
              throw new HttpError(422, `'mode' must be one of ${MODES.join(", ")}`);
            const project = projectOf(optionalString(body, "project"));
            const { recall } = await recallCore();
            const result = await recall(project, query, {
              topK,
              mode: mode as Mode,
            });
            // Checked against the project now, as rag_search's hits are: files gone or changed, a
            // decision replaced later.
            const { withChecks } = await import("../memory/hit-checks.ts");
            const hits = await withChecks(project, result.hits);
            return json({
              notice: RECALLED_NOTICE,
              project,
              mode,
              hits: hits.map(({ turns: _turns, ...hit }) => hit),
              ...(result.reason ? { reason: result.reason } : {}),
            });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/prelude$/,
      methods: {
        GET: {
          access: "read",
          handle: async (_req, _p, url) => {
            const project = projectOf(url.searchParams.get("project"));
            const active = isActive(project);
            const file = summaryPath(project);
            const summary = active && existsSync(file) ? readFileSync(file, "utf8") : "";
            const options = active ? await projectPreludeOptions(project) : undefined;
            return json({
              project,
              active,
              // The hook's own options: prelude.tokens, the pins first, entries ranked by the project's
              // present, files marked changed or gone.
              context: summary && options ? (preludeContext(summary, options) ?? null) : null,
              pinned: options?.pinned ?? "",
            });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/ledger$/,
      methods: {
        GET: {
          access: "read",
          handle: (_req, _p, url) => {
            const project = projectOf(url.searchParams.get("project"));
            const records = isActive(project) ? readLedger(project) : [];
            return json({
              project,
              totals: ledgerTotals(records),
              sessions: sessionTokens(records),
              // Hook runs that failed or never finished, as doctor reports them, and the latest records.
              problems: ledgerProblems(records),
              records: records.slice(-RECENT_HOOK_RECORDS),
            });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/sessions$/,
      methods: {
        GET: {
          access: "read",
          handle: async (_req, _p, url) => {
            const project = projectOf(url.searchParams.get("project"));
            // A page of them (`limit`, `offset`), or every one: at a year's scale thousands, megabytes.
            const limit = wholeParam(url, "limit");
            const offset = wholeParam(url, "offset") ?? 0;
            if (!isActive(project)) return json({ project, active: false, sessions: [], total: 0 });
            const { sessions, total } = await (await memoryCore()).listSessions(project, { limit, offset });
            return json({ project, active: true, sessions, total });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/sessions\/([^/]+)$/,
      methods: {
        GET: {
          access: "read",
          handle: async (_req, [session], url) => {
            const project = projectOf(url.searchParams.get("project"));
            const chunks = isActive(project)
              ? await (await memoryCore()).sessionChunks(project, session)
              : [];
            if (chunks.length === 0)
              throw new HttpError(404, `no session ${session} in the memory of ${project}`);
            return json({ project, session_id: session, chunks });
          },
        },
        DELETE: {
          access: "curate",
          handle: async (_req, [session], url) => {
            const project = activeProjectOf(url.searchParams.get("project"));
            const { forgetSession } = await import("../memory/forget.ts");
            const report = await forgetSession(project, session);
            if (report.status === "unknown")
              throw new HttpError(404, `no session ${session} in the memory of ${project}`);
            if (report.status === "busy") throw busy();
            return json({ project, session_id: session, ...report });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/sessions\/([^/]+)\/summary$/,
      methods: {
        PUT: {
          access: "curate",
          handle: async (req, [session], url) => {
            const body = await readJsonObject(req);
            const line = optionalString(body, "line");
            const text = optionalString(body, "text");
            if (line === undefined || text === undefined)
              throw new HttpError(422, "send 'line' (the line as it is) and 'text' (what it should say)");
            const project = activeProjectOf(
              optionalString(body, "project") ?? url.searchParams.get("project"),
            );
            const { editSummaryLine, SummaryEditError } = await memoryCore();
            let edit: Awaited<ReturnType<typeof editSummaryLine>>;
            try {
              edit = await editSummaryLine(project, session, line, text);
            } catch (error) {
              if (error instanceof SummaryEditError) throw new HttpError(422, error.message);
              throw error;
            }
            if (edit.status === "unknown")
              throw new HttpError(404, `session ${session} has no summary line '${line}'`);
            if (edit.status === "busy") throw busy();
            return json({ project, session_id: session, line: edit.text });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/chunks\/([^/]+)$/,
      methods: {
        GET: {
          access: "read",
          handle: async (_req, [raw], url) => {
            const project = projectOf(url.searchParams.get("project"));
            const chunk = isActive(project)
              ? await (await memoryCore()).readChunk(project, chunkId(raw))
              : undefined;
            if (!chunk) throw new HttpError(404, `no chunk ${raw} in the memory of ${project}`);
            return json({ project, notice: RECALLED_NOTICE, chunk });
          },
        },
        DELETE: {
          access: "curate",
          handle: async (_req, [raw], url) => {
            const project = activeProjectOf(url.searchParams.get("project"));
            const { forgetChunk } = await import("../memory/forget-chunk.ts");
            const report = await forgetChunk(project, chunkId(raw));
            if (report.status === "unknown")
              throw new HttpError(404, `no chunk ${raw} in the memory of ${project}`);
            if (report.status === "busy") throw busy();
            return json({ project, chunk_id: Number(raw), ...report });
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/pins$/,
      methods: {
        GET: {
          access: "read",
          handle: async (_req, _p, url) => {
            const project = projectOf(url.searchParams.get("project"));
            return json({ project, pins: isActive(project) ? await readPins(project) : [] });
          },
        },
        POST: {
          access: "curate",
          handle: async (req, _p, url) => {
            const body = await readJsonObject(req);
            if (typeof body.chunk_id !== "number" || !Number.isSafeInteger(body.chunk_id))
              throw new HttpError(422, "'chunk_id' must be an integer");
            const project = activeProjectOf(
              optionalString(body, "project") ?? url.searchParams.get("project"),
            );
            let pin: Pin | undefined;
            try {
              pin = await (await memoryCore()).pinChunk(project, body.chunk_id);
            } catch (error) {
              if (error instanceof PinLimitError) throw new HttpError(409, error.message);
              throw error;
            }
            if (!pin) throw new HttpError(404, `no chunk ${body.chunk_id} in the memory of ${project}`);
            return json({ project, pin }, 201);
          },
        },
      },
    },
    {
      pattern: /^\/v1\/memory\/pins\/([^/]+)$/,
      methods: {
        DELETE: {
          access: "curate",
          handle: (_req, [raw], url) => {
            const project = projectOf(url.searchParams.get("project"));
            if (!isActive(project) || !removePin(project, chunkId(raw)))
              throw new HttpError(404, `chunk ${raw} is not pinned`);
            return json({ project, unpinned: Number(raw) });
          },
        },
      },
    },
  ];

  function page(url: URL): Response {
    const token = url.searchParams.get("token");
    // `/?token=…` turns into an HttpOnly cookie, and the token leaves the address bar at once.
    if (token !== null) {
      if (!sameSecret(token, options.token)) throw new HttpError(401, "the token is wrong");
      return new Response(null, {
        status: 303,
        headers: {
          location: "/",
          "set-cookie": `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`,
          ...SECURITY_HEADERS,
        },
      });
    }
    return new Response(pageAsset("page.html").replace("%PAGE_KEY%", pageKey), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy":
          "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        "x-frame-options": "DENY",
        ...SECURITY_HEADERS,
      },
    });
  }

  function asset(name: string): Response {
    const type = name.endsWith(".js") ? "text/javascript" : "text/css";
    return new Response(pageAsset(name), {
      headers: { "content-type": `${type}; charset=utf-8`, ...SECURITY_HEADERS },
    });
  }

  /** Re-index one served workspace (or all), with progress as server-sent events. */
  async function ingest(req: Request): Promise<Response> {
    const body = await readJsonObject(req);
    const named = optionalString(body, "workspace");
    let roots: string[];
    try {
      roots = named ? [rag.workspace(named)] : rag.workspaces;
    } catch (error) {
      if (error instanceof RagRequestError) throw new HttpError(404, error.message);
      throw error;
    }
    server.timeout(req, 0);
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        const send = (event: string, data: unknown) => {
          try {
            controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
          } catch {
            // The client went away; the ingest itself finishes regardless.
          }
        };
        let last = 0;
        const progress = (p: IngestProgress) => {
          const now = performance.now();
          // At most ~20 events a second, and always the last one of a stage.
          if (p.done !== p.total && now - last < 50) return;
          last = now;
          send("progress", p);
        };
        try {
          for (const root of roots) {
            send("start", { workspace: root });
            send("done", await rag.ingest(root, progress));
          }
          send("end", { workspaces: roots.length });
        } catch (error) {
          logError("http ingest", error);
          send("error", { error: (error as Error).message });
        }
        try {
          controller.close();
        } catch {
          // Already closed by the client.
        }
      },
    });
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        ...SECURITY_HEADERS,
        "x-accel-buffering": "no",
      },
    });
  }

  /**
   * A CORS preflight: answered only for the configured origin (the token and the page rules still apply
   * to the request that follows); any other origin gets none, so its page cannot call the API.
   */
  function preflight(req: Request, route: Route): Response {
    const allow = Object.keys(route.methods).join(", ");
    if (!options.allowOrigin || req.headers.get("origin") !== options.allowOrigin)
      throw new HttpError(405, `OPTIONS is not allowed on ${new URL(req.url).pathname} (use ${allow})`, {
        allow,
      });
    return new Response(null, {
      status: 204,
      headers: {
        "access-control-allow-methods": allow,
        "access-control-allow-headers": "authorization, content-type",
        "access-control-max-age": "600",
      },
    });
  }

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const route = routes.find((r) => r.pattern.test(url.pathname));
    if (!route) throw new HttpError(404, `no route ${url.pathname}`);
    if (req.method === "OPTIONS") return preflight(req, route);
    const method = req.method === "HEAD" ? "GET" : req.method;
    const entry = route.methods[method];
    if (!entry) {
      const allow = Object.keys(route.methods).join(", ");
      throw new HttpError(405, `${req.method} is not allowed on ${url.pathname} (use ${allow})`, { allow });
    }
    // `/?token=…` is how a browser brings the token: page() checks it and turns it into a cookie.
    const access = url.pathname === "/" && url.searchParams.has("token") ? "open" : entry.access;
    const denied = deny(req, access, auth);
    if (denied)
      throw new HttpError(
        denied.status,
        denied.error,
        denied.status === 401 ? { "www-authenticate": "Bearer" } : {},
      );
    const params = (route.pattern.exec(url.pathname) ?? []).slice(1).map(decodeURIComponent);
    return entry.handle(req, params, url);
  }

  async function answer(req: Request): Promise<Response> {
    try {
      return await handle(req);
    } catch (error) {
      if (error instanceof HttpError) return json({ error: error.message }, error.status, error.headers);
      if (error instanceof RagRequestError) return json({ error: error.message }, 400);
      if (error instanceof RemoteEmbeddingError) return json({ error: error.message }, 502);
      return internalError(error);
    }
  }

  const server = Bun.serve({
    hostname: options.host,
    port: options.port,
    // Our own limit answers 413 as JSON; Bun's is only the backstop.
    maxRequestBodySize: MAX_BODY_BYTES * 4,
    async fetch(req) {
      const response = await answer(req);
      // CORS for the configured origin only, on every answer (errors too, so its page can read them).
      if (options.allowOrigin && req.headers.get("origin") === options.allowOrigin) {
        response.headers.set("access-control-allow-origin", options.allowOrigin);
        response.headers.set("vary", "Origin");
      }
      return response;
    },
    error: internalError,
  });
  const port = server.port ?? options.port;
  auth = {
    token: options.token,
    pageKey,
    loopback,
    readsNeedToken: !loopback || options.requireToken === true,
    hosts: serverHosts(options.host, port),
  };
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${shown}:${port}`,
    port,
    stop: () => server.stop(true),
  };
}
