/** PGlite (Postgres in WebAssembly, with pgvector) as the Postgres store's SqlClient, in-process. */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type { SqlClient } from "../../src/store/pg-client.ts";

function wrap(db: Pick<PGlite, "query">): SqlClient["query"] {
  return (async (text: string, params?: unknown[]) =>
    (await db.query(text, params ?? [])).rows) as SqlClient["query"];
}

/** A fresh in-memory database, or one kept in `dataDir`. `vectors: false` leaves pgvector out. */
export async function pgliteClient(
  options: { dataDir?: string; vectors?: boolean } = {},
): Promise<SqlClient & { db: PGlite }> {
  const db = await PGlite.create({
    dataDir: options.dataDir,
    extensions: options.vectors === false ? {} : { vector },
  });
  const client: SqlClient & { db: PGlite } = {
    db,
    query: wrap(db),
    transaction: (work) =>
      db.transaction(async (tx) => {
        const inner: SqlClient = { query: wrap(tx), transaction: (w) => w(inner), close: async () => {} };
        return work(inner);
      }),
    close: () => db.close(),
  };
  return client;
}
