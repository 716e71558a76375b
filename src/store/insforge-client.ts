/**
 * InsForge's raw SQL endpoint as the store's connection: `POST /api/database/advance/rawsql` with
 * `{"query", "params"}` and the project's admin key as `Authorization: Bearer` (InsForge/InsForge,
 * backend/src/api/routes/database/advance.routes.ts, services/database/database-advance.service.ts).
 * Each call runs on its own pooled connection, so there is no transaction across calls, and the server
 * refuses BEGIN/COMMIT. What it does give: a call with `params` is one statement, and a call without
 * them goes to Postgres as one simple-protocol query, whose statements run as ONE implicit transaction
 * (all of them commit or none). The store's writes are such scripts (see insforge.ts).
 */
import type { SqlClient } from "./pg-client.ts";
import { StoreUnavailableError } from "./pg-client.ts";

export interface InsforgeTarget {
  baseUrl: string;
  apiKey: string;
}

export interface InsforgeClientOptions {
  /** Per request; a statement runs at most 30 s on the server (its statement_timeout). */
  timeoutMs?: number;
  /** Further tries after a failure that may be tried again, with doubling waits from backoffMs. */
  retries?: number;
  backoffMs?: number;
}

/** A statement the database refused (its message as InsForge passes it on), not a connection fault. */
export class InsforgeSqlError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

/** `retrySafe`: the call may be sent again after a failure that leaves unknown whether it ran. */
export interface CallOptions {
  retrySafe?: boolean;
}

const RAW_SQL = "/api/database/advance/rawsql";

/** node-postgres turns bytea into a Buffer, which Express sends as `{"type":"Buffer","data":[…]}`. */
function revive(row: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(row)) {
    const v = value as { type?: unknown; data?: unknown } | null;
    if (v && typeof v === "object" && v.type === "Buffer" && Array.isArray(v.data))
      row[key] = Uint8Array.from(v.data as number[]);
  }
  return row;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class InsforgeClient implements SqlClient {
  readonly location: string;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly backoffMs: number;

  constructor(
    private readonly target: InsforgeTarget,
    options: InsforgeClientOptions = {},
  ) {
    this.location = target.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retries = options.retries ?? 3;
    this.backoffMs = options.backoffMs ?? 250;
  }

  private where(): string {
    return `insforge at ${this.location}`;
  }

  /** A server's message with the key taken out, should it ever echo it. */
  private clean(text: string): string {
    return text.replaceAll(this.target.apiKey, "***").split("\n")[0];
  }

  /** One call of the raw SQL endpoint; rows as node-postgres gives them (int8 and numeric as strings). */
  async sql<T = Record<string, unknown>>(
    query: string,
    params?: unknown[],
    options: CallOptions = {},
  ): Promise<T[]> {
    const body = JSON.stringify(params?.length ? { query, params } : { query });
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.send(body, options.retrySafe ?? true);
      if (outcome.rows) return outcome.rows.map(revive) as T[];
      if (!outcome.retry || attempt >= this.retries) throw outcome.error;
      await wait(this.backoffMs * 2 ** attempt);
    }
  }

  /** Statements sent as one call: one implicit transaction on the server. Nothing comes back. */
  async script(statements: string[], options: CallOptions = {}): Promise<void> {
    await this.sql(statements.map((s) => s.trim().replace(/;$/, "")).join(";\n"), undefined, options);
  }

  private async send(
    body: string,
    retrySafe: boolean,
  ): Promise<{ rows?: Record<string, unknown>[]; error?: Error; retry?: boolean }> {
    let response: Response;
    try {
      response = await fetch(this.location + RAW_SQL, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${this.target.apiKey}` },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const e = error as { name?: string; code?: string; message?: string };
      if (e?.name === "TimeoutError")
        return {
          error: new StoreUnavailableError(
            `${this.where()} did not answer within ${this.timeoutMs / 1000} s`,
          ),
          retry: retrySafe,
        };
      const refused = /ConnectionRefused|ECONNREFUSED|Unable to connect|ENOTFOUND|FailedToOpenSocket/i.test(
        `${e?.code} ${e?.message}`,
      );
      return {
        error: new StoreUnavailableError(
          refused
            ? `${this.where()} cannot be reached (${this.clean(String(e?.message ?? error))})`
            : `${this.where()} dropped the connection (${this.clean(String(e?.message ?? error))})`,
        ),
        // A refused connection never reached the server; a dropped one may have run the statements.
        retry: refused || retrySafe,
      };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      return {
        error: new StoreUnavailableError(
          `${this.where()} dropped the connection (${this.clean(String((error as Error)?.message ?? error))})`,
        ),
        retry: retrySafe,
      };
    }
    let parsed: { rows?: unknown; error?: unknown; message?: unknown } | undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok && parsed && Array.isArray(parsed.rows))
      return { rows: parsed.rows as Record<string, unknown>[] };
    const message = this.clean(
      typeof parsed?.message === "string" ? parsed.message : text.slice(0, 200) || response.statusText,
    );
    const code = typeof parsed?.error === "string" ? parsed.error : "";
    if (response.status === 401)
      return {
        error: new StoreUnavailableError(
          `${this.where()}: the API key was refused (${message}); set INSFORGE_API_KEY to the project's admin key`,
        ),
      };
    if (response.status === 404)
      return {
        error: new StoreUnavailableError(
          `${this.where()} has no ${RAW_SQL} endpoint (${response.status}): is INSFORGE_BASE_URL an InsForge backend?`,
        ),
      };
    if ([429, 502, 503, 504].includes(response.status))
      return {
        error: new StoreUnavailableError(`${this.where()} is unavailable (${response.status} ${message})`),
        retry: retrySafe,
      };
    if (response.status === 403)
      return { error: new StoreUnavailableError(`${this.where()} refused the statement (${message})`) };
    if (!parsed)
      return { error: new StoreUnavailableError(`${this.where()} answered ${response.status}: ${message}`) };
    return { error: new InsforgeSqlError(message, response.status, code) };
  }

  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]> {
    return this.sql<T>(text, params);
  }

  /** InsForge runs no transaction across calls: writes are scripts (`script`), see insforge.ts. */
  transaction<T>(): Promise<T> {
    return Promise.reject(
      new Error("InsForge's raw SQL endpoint runs no transaction across calls: send the work as one script"),
    );
  }

  async close(): Promise<void> {}
}

/** A client that has answered one statement: fails here with one line when the server is down or the key wrong. */
export async function connectInsforge(
  target: InsforgeTarget,
  options: InsforgeClientOptions = {},
): Promise<InsforgeClient> {
  const client = new InsforgeClient(target, options);
  await client.sql("SELECT 1 AS ok");
  return client;
}
