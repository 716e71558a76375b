/**
 * The few things the Postgres store asks of a connection, so the same store runs on a server (Bun.sql), on
 * PGlite in the tests, and on InsForge. Every statement takes positional `$n` parameters of text, numbers
 * or null; larger inputs travel as one JSON parameter (`jsonb_to_recordset`), which every client passes.
 */
export interface SqlClient {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs `work` in one transaction: all of it commits or none. */
  transaction<T>(work: (tx: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The database could not be reached or refused us: one line for the person, no secret in it. */
export class StoreUnavailableError extends Error {}

/** `postgres://user:secret@host/db` → `postgres://user@host/db`: what an error may show of a URL. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "(an unreadable URL)";
  }
}

/** A driver's error as one line that names the server but never its password. */
export function describePgError(error: unknown, url: string): string {
  const e = error as { code?: unknown; errno?: unknown; message?: unknown };
  const code = String(e?.errno ?? e?.code ?? "");
  const message = String(e?.message ?? error).replaceAll(url, redactUrl(url));
  const secret = safePassword(url);
  const clean = secret ? message.replaceAll(secret, "***") : message;
  if (code === "28P01" || /password authentication failed|authentication/i.test(clean))
    return `postgres at ${redactUrl(url)}: wrong user name or password`;
  if (
    /ECONNREFUSED|ConnectionRefused|connection refused|ENOTFOUND|ECONNRESET|closed|timed? ?out/i.test(clean)
  )
    return `postgres at ${redactUrl(url)} cannot be reached (${clean.split("\n")[0]})`;
  return `postgres at ${redactUrl(url)}: ${clean.split("\n")[0]}`;
}

function safePassword(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}

/** A Bun.sql connection pool to a Postgres server. */
export async function connectPostgres(url: string): Promise<SqlClient> {
  const { SQL } = await import("bun");
  const sql = new SQL({ url, max: 4, idleTimeout: 30, connectionTimeout: 10 });
  const wrap = (run: (text: string, params?: unknown[]) => Promise<unknown>): SqlClient["query"] =>
    (async (text: string, params?: unknown[]) => {
      try {
        return [...((await run(text, params)) as Record<string, unknown>[])];
      } catch (error) {
        // An SQL error of ours (a SQLSTATE outside connection, authentication and shutdown) stays as it is.
        const state = String((error as { errno?: unknown }).errno ?? "");
        if (/^[0-9A-Z]{5}$/.test(state) && !/^(08|28|57P)/.test(state)) throw error;
        throw new StoreUnavailableError(describePgError(error, url));
      }
    }) as SqlClient["query"];
  const client: SqlClient = {
    query: wrap((text, params) => sql.unsafe(text, params ?? [])),
    transaction: (work) =>
      sql.begin(async (tx) => {
        const inTransaction: SqlClient = {
          query: wrap((text, params) => tx.unsafe(text, params ?? [])),
          transaction: (inner) => inner(inTransaction),
          close: async () => {},
        };
        return work(inTransaction);
      }) as ReturnType<typeof work>,
    close: () => sql.close(),
  };
  // Fails here, at open, with one clear line when the server is down or the credentials are wrong.
  await client.query("SELECT 1");
  return client;
}
