/** A separate process writing seeded batches to one project's Postgres store (the several-writers test). */
import { connectPostgres } from "../../src/store/pg-client.ts";
import { PgMemoryStore } from "../../src/store/postgres.ts";
import { storeBatches } from "./store-batches.ts";

const [url, project, writer, order] = process.argv.slice(2);
const store = await PgMemoryStore.open(await connectPostgres(url), { project, writer });
const batches = storeBatches(7, 6, 6, 3, true);
for (const i of order.split(",").map(Number)) await store.writeBatch(batches[i]);
await store.setState({ offset: 100, offsetCheck: writer });
await store.closeAsync();
