/** doctor's check of a shared store (`storage: postgres` or `insforge`): reachable, its schema version, what is left to push. */
import type { Check } from "./checks.ts";

export async function sharedStoreChecks(root: string): Promise<Check[]> {
  const [{ sharedStatus }, { openStoreForRead }, { PG_SCHEMA_VERSION }] = await Promise.all([
    import("../memory/shared.ts"),
    import("../store/open.ts"),
    import("../store/pg-schema.ts"),
  ]);
  let local: ReturnType<typeof openStoreForRead>;
  try {
    local = openStoreForRead(root);
  } catch {
    local = undefined; // the memory store check above says what is wrong with it
  }
  try {
    const status = await sharedStatus(root, local);
    if (!status) return [];
    const name = "shared store";
    const pending = `this machine has ${status.pending} of its ${status.localChunks} chunks still to push`;
    if (!status.reachable)
      return [
        {
          name,
          ok: false,
          detail: `${status.backend} at ${status.location}: ${status.problem}; ${pending}`,
          fix: `${status.backend === "insforge" ? "start InsForge or set INSFORGE_BASE_URL and INSFORGE_API_KEY (the project's admin key) to one that answers" : "start the database or set TRIFORGE_PG_URL to one that answers"} (memory keeps being indexed here, and the next index pushes it)`,
        },
      ];
    const version = status.schemaVersion ?? 0;
    if (version > PG_SCHEMA_VERSION)
      return [
        {
          name,
          ok: false,
          detail: `${status.location}: schema version ${version}, newer than this triforge knows (${PG_SCHEMA_VERSION})`,
          fix: "upgrade triforge on this machine",
        },
      ];
    const held = status.store
      ? `${status.store.chunks} chunks from ${status.store.sessions} sessions`
      : "empty (the next index creates the project there)";
    return [
      {
        name,
        ok: true,
        detail: `${status.backend} at ${status.location}, schema version ${version || "none yet"}: ${held}; ${pending}`,
      },
    ];
  } finally {
    local?.close();
  }
}
