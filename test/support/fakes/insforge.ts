/**
 * A contract server for InsForge's raw SQL endpoint, the one endpoint triforge's InsForge store calls,
 * backed by PGlite so every statement really runs. It follows InsForge's own backend (InsForge/InsForge):
 *
 * - `POST /api/database/advance/rawsql`, `{"query": string (min 1), "params"?: unknown[]}`
 *   (packages/shared-schemas/src/database-api.schema.ts, rawSQLRequestSchema), behind `verifyAdmin`
 *   (backend/src/api/middlewares/auth.ts): the admin API key as `Authorization: Bearer ik_…` or `x-api-key`.
 * - It answers `{"rows", "rowCount", "fields"}` (rawSQLResponseSchema), the rows as node-postgres parses
 *   them (int8 and numeric as strings, bytea as a Buffer that Express writes `{"type":"Buffer","data"}`).
 *   A query without params goes to node-postgres's simple protocol: several statements run as one
 *   implicit transaction, and the result is an array, so `rows` is `[]`
 *   (backend/src/services/database/database-advance.service.ts, executeRawSQL).
 * - It refuses, with 403 FORBIDDEN, any query mentioning set_config, transaction control, and SET of the
 *   role, search_path or statement_timeout (backend/src/utils/sql-parser.ts, checkSqlExecutionGuards).
 * - Errors are `{"error", "message", "statusCode", "nextActions"?}` (backend/src/utils/response.ts); a
 *   database error keeps Postgres's message, with the status of backend/src/utils/errors.ts's table
 *   (23505 → 409, 42501 → 403, 42P01 and the other validation codes → 400, anything else 500).
 *
 * Faults for the tests: `dropNext` closes every connection on the next raw SQL call (having run it or
 * not), the server staying down until `restart` or coming straight back.
 */
import { PGlite } from "@electric-sql/pglite";
import type { Server } from "bun";

export interface FakeInsforge {
  url: string;
  apiKey: string;
  db: PGlite;
  /** Raw SQL calls received (every one, refused or not). */
  calls: { query: string; params?: unknown[] }[];
  /**
   * Calls after which InsForge would reload PostgREST's schema: it does for any query whose text matches
   * /CREATE|ALTER|DROP/i (database-advance.service.ts, executeRawSQL), data included.
   */
  schemaReloads: number;
  /**
   * The next raw SQL call whose query `when` accepts (default: any) kills every connection: after running
   * it (`ran`) or before. `restart`: the server listens again at once, else it stays down until restart().
   */
  dropNext(options: { ran: boolean; restart?: boolean; when?: (query: string) => boolean }): void;
  /** The next raw SQL call is never answered (the connection stays open): client timeouts. */
  hangNext(): void;
  /** Listens again on the same port after a drop or stop. */
  restart(): void;
  /** Stops listening (connections refused) without losing the database. */
  down(): void;
  close(): Promise<void>;
}

const GUARDS: [RegExp, string][] = [
  [/\bset_config\b/i, "Changing SQL session configuration is not allowed."],
  [
    /(^|;)\s*(BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION|SAVEPOINT|RELEASE|END)\b/i,
    "Transaction control statements are not allowed.",
  ],
  [
    /(^|;)\s*(SET|RESET)\s+(SESSION\s+|LOCAL\s+)?(ROLE|SESSION\s+AUTHORIZATION)\b/i,
    "Changing SQL execution role or session authorization is not allowed.",
  ],
  [/(^|;)\s*SET\s+(SESSION\s+|LOCAL\s+)?search_path\b/i, "Changing SQL search_path is not allowed."],
  [
    /(^|;)\s*SET\s+(SESSION\s+|LOCAL\s+)?statement_timeout\b/i,
    "Changing SQL statement_timeout is not allowed.",
  ],
];

/** backend/src/utils/errors.ts, POSTGRES_ERROR_HANDLERS. */
const PG_ERRORS: Record<string, [number, string]> = {
  "23505": [409, "DATABASE_DUPLICATE"],
  "23503": [400, "DATABASE_CONSTRAINT_VIOLATION"],
  "23502": [400, "MISSING_FIELD"],
  "42P01": [400, "DATABASE_VALIDATION_ERROR"],
  "42701": [400, "DATABASE_VALIDATION_ERROR"],
  "42703": [400, "DATABASE_VALIDATION_ERROR"],
  "42830": [400, "DATABASE_VALIDATION_ERROR"],
  "42804": [400, "DATABASE_VALIDATION_ERROR"],
  "42501": [403, "FORBIDDEN"],
};

function errorBody(status: number, error: string, message: string, nextActions?: string): Response {
  return Response.json({ error, message, statusCode: status, nextActions }, { status });
}

/** A value as node-postgres would parse it and Express would write it. */
function asNodePostgres(value: unknown, typeId: number): unknown {
  if (value === null || value === undefined) return null;
  if (typeId === 20 || typeId === 1700) return String(value);
  if (value instanceof Uint8Array) return { type: "Buffer", data: Array.from(value) };
  return value;
}

function rowsOf(result: { rows: Record<string, unknown>[]; fields: { name: string; dataTypeID: number }[] }) {
  const types = new Map(result.fields.map((f) => [f.name, f.dataTypeID]));
  return result.rows.map((row) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, asNodePostgres(v, types.get(k) ?? 0)])),
  );
}

export async function startFakeInsforge(options: { apiKey?: string } = {}): Promise<FakeInsforge> {
  const apiKey = options.apiKey ?? `ik_${crypto.randomUUID().replaceAll("-", "")}`;
  const db = await PGlite.create();
  const calls: FakeInsforge["calls"] = [];
  let drop: { ran: boolean; restart?: boolean; when?: (query: string) => boolean } | undefined;
  let hang = false;
  let server: Server<undefined> | undefined;
  let port = 0;

  const handle = async (req: Request, self: Server<undefined>): Promise<Response> => {
    const url = new URL(req.url);
    if (url.pathname === "/api/health" && req.method === "GET")
      return Response.json({ status: "ok", service: "Insforge OSS Backend (triforge contract fake)" });
    if (url.pathname !== "/api/database/advance/rawsql" || req.method !== "POST")
      return errorBody(
        404,
        "NOT_FOUND",
        `Endpoint ${url.pathname} not found`,
        "Please check the API documentation for available endpoints",
      );
    const bearer = req.headers.get("authorization")?.match(/^Bearer (ik_.*)$/)?.[1];
    const given = bearer ?? req.headers.get("x-api-key");
    if (!given) return errorBody(401, "AUTH_INVALID_CREDENTIALS", "No admin token provided");
    if (given !== apiKey) return errorBody(401, "AUTH_INVALID_API_KEY", "Invalid API key");
    let body: { query?: unknown; params?: unknown };
    try {
      body = (await req.json()) as typeof body;
    } catch (error) {
      return errorBody(400, "INVALID_INPUT", String((error as Error).message));
    }
    if (typeof body?.query !== "string" || !body.query)
      return errorBody(400, "INVALID_INPUT", "query: Query is required");
    if (body.params !== undefined && !Array.isArray(body.params))
      return errorBody(400, "INVALID_INPUT", "params: Expected array");
    const query = body.query;
    const params = (body.params as unknown[] | undefined) ?? [];
    calls.push({ query, params: body.params as unknown[] | undefined });
    for (const [pattern, message] of GUARDS)
      if (pattern.test(query)) return errorBody(403, "FORBIDDEN", message);
    if (/CREATE|ALTER|DROP/i.test(query)) fake.schemaReloads++;
    if (hang) {
      hang = false;
      return new Promise<Response>(() => {});
    }
    const fault = drop && (!drop.when || drop.when(query)) ? drop : undefined;
    if (fault) drop = undefined;
    const run = async () => {
      if (params.length) {
        const result = await db.query<Record<string, unknown>>(query, params);
        return {
          rows: rowsOf(result),
          rowCount: result.affectedRows ?? result.rows.length,
          fields: result.fields,
        };
      }
      const results = await db.exec(query);
      if (results.length !== 1) return { rows: [] };
      const [result] = results;
      return {
        rows: rowsOf(result as never),
        rowCount: result.affectedRows ?? result.rows.length,
        fields: result.fields,
      };
    };
    if (fault) {
      if (fault.ran) await run().catch(() => {});
      self.stop(true);
      if (fault.restart) listen();
      return new Promise<Response>(() => {});
    }
    try {
      return Response.json(await run());
    } catch (error) {
      const e = error as { code?: string; message?: string };
      if (e.code === "57014")
        return errorBody(
          500,
          "INTERNAL_ERROR",
          "Query timeout: The query took longer than 30 seconds to execute",
        );
      const [status, code] = PG_ERRORS[e.code ?? ""] ?? [500, "INTERNAL_ERROR"];
      return errorBody(status, code, e.message ?? "Internal server error");
    }
  };

  const listen = () => {
    server = Bun.serve({ hostname: "127.0.0.1", port, fetch: (req, self) => handle(req, self) });
    port = server.port ?? port;
  };
  listen();

  const fake: FakeInsforge = {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    db,
    calls,
    schemaReloads: 0,
    dropNext(options) {
      drop = options;
    },
    hangNext() {
      hang = true;
    },
    restart() {
      server?.stop(true);
      listen();
    },
    down() {
      server?.stop(true);
    },
    async close() {
      server?.stop(true);
      await db.close();
    },
  };
  return fake;
}
