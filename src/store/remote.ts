/** Opens the connection a non-local storage target names (the driver loads only here). */
import { connectPostgres, type SqlClient, StoreUnavailableError } from "./pg-client.ts";
import type { StorageTarget } from "./settings.ts";

export async function connectRemote(target: Exclude<StorageTarget, { kind: "local" }>): Promise<SqlClient> {
  if (target.kind === "postgres") return connectPostgres(target.url);
  // InsForge's raw SQL endpoint runs each call on its own connection and refuses BEGIN/COMMIT, so a batch
  // would have to be one multi-statement call; that backend is not built yet (docs/insforge-mode.md).
  throw new StoreUnavailableError("storage insforge is not available in this version");
}
