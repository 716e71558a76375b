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
  const code = `${String(e?.errno ?? "")} ${String(e?.code ?? "")}`;
  const secret = safePassword(url);
  let message = String(e?.message ?? error).replaceAll(url, redactUrl(url));
  if (secret) message = message.replaceAll(secret, "***");
  const line = message.split("\n")[0];
  const where = `postgres at ${redactUrl(url)}`;
  if (/28P01|28000/.test(code) || /password authentication failed/i.test(line))
    return `${where}: wrong user name or password`;
  if (/^(08|57P)/.test(code) || /CONNECTION_CLOSED|terminat|connection closed/i.test(`${code} ${line}`))
    return `${where} dropped the connection (${line})`;
  if (
    /REFUSED|TIMEOUT|ECONN|ENOTFOUND|CONNECT/i.test(code) ||
    /failed to connect|refused|timed? ?out/i.test(line)
  )
    return `${where} cannot be reached (${line})`;
  return `${where}: ${line}`;
}

/** Whether an error is the connection's, not the statement's (a SQLSTATE of connection, authentication, shutdown). */
function isConnectionError(error: unknown): boolean {
  const state = String((error as { errno?: unknown })?.errno ?? "");
  if (/^[0-9A-Z]{5}$/.test(state)) return /^(08|28|57P)/.test(state);
  return /CONNECTION|REFUSED|TIMEOUT|ECONN|ENOTFOUND/i.test(
    String((error as { code?: unknown })?.code ?? ""),
  );
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
  const clear = (error: unknown) =>
    isConnectionError(error) ? new StoreUnavailableError(describePgError(error, url)) : error;
  const wrap = (run: (text: string, params?: unknown[]) => Promise<unknown>): SqlClient["query"] =>
    (async (text: string, params?: unknown[]) => {
      try {
        return [...((await run(text, params)) as Record<string, unknown>[])];
      } catch (error) {
        throw clear(error);
      }
    }) as SqlClient["query"];
  const client: SqlClient = {
    query: wrap((text, params) => sql.unsafe(text, params ?? [])),
    transaction: (work) =>
      sql
        .begin(async (tx) => {
          const inTransaction: SqlClient = {
            query: wrap((text, params) => tx.unsafe(text, params ?? [])),
            transaction: (inner) => inner(inTransaction),
            close: async () => {},
          };
          return work(inTransaction);
        })
        .catch((error: unknown) => {
          // A dropped connection may fail the rollback too: the transaction is gone either way.
          throw error instanceof StoreUnavailableError ? error : clear(error);
        }) as ReturnType<typeof work>,
    close: () => sql.close(),
  };
  // Fails here, at open, with one clear line when the server is down or the credentials are wrong.
  await client.query("SELECT 1");
  return client;
}
