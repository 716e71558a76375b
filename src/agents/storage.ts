import type { ProjectConfig } from "../project/config.ts";

type Storage = ProjectConfig["storage"];

/**
 * The backends this version stores memory in: `postgres` and `insforge` (a Postgres schema in an InsForge
 * project, over its REST API) are shared stores every machine pushes into and recall reads
 * (memory/shared.ts).
 */
export const AVAILABLE_STORAGES: readonly Storage[] = ["local", "postgres", "insforge"];

export function storageAvailable(storage: Storage): boolean {
  return AVAILABLE_STORAGES.includes(storage);
}

/** How status names the backend: the configured one, and where memory really goes when that differs. */
export function describeStorage(storage: Storage): string {
  return storageAvailable(storage) ? storage : `${storage} (not available in this version: stored locally)`;
}

/** The warning activate prints for a backend this version lacks; undefined when there is none to give. */
export function storageWarning(storage: Storage): string | undefined {
  if (storageAvailable(storage)) return undefined;
  return `warning: storage '${storage}' is not available in this version; memory is stored locally (SQLite) until it is. The setting is kept in .triforge/config.json.`;
}

/**
 * What activate says of a shared backend, checked now: where it is and that it answered (`note`), or why
 * memory stays on this machine for the moment (`warning`). Nothing for `local`.
 */
export async function sharedStorageCheck(
  root: string,
  config: ProjectConfig,
): Promise<{ note?: string; warning?: string }> {
  if (config.storage === "local") return {};
  const warning = storageWarning(config.storage);
  if (warning) return { warning };
  const [{ storageTarget, writerName }, { describeTarget, openRemoteStore }] = await Promise.all([
    import("../store/settings.ts"),
    import("../store/remote.ts"),
  ]);
  let target: ReturnType<typeof storageTarget>;
  try {
    target = storageTarget(config.storage, config, root);
  } catch (error) {
    return {
      warning: `warning: ${(error as Error).message}; until then memory is indexed on this machine only`,
    };
  }
  if (target.kind === "local") return {};
  try {
    const remote = await openRemoteStore(target, { writer: writerName(root), reader: true });
    try {
      const version = await remote.schemaVersion();
      return {
        note: `Storage: shared in ${target.kind} at ${describeTarget(target)} (project '${target.project}', ${version ? `schema version ${version}` : "created by the first index run"}); every index run pushes this machine's new memory there, and recall reads every machine's.`,
      };
    } finally {
      await remote.closeAsync();
    }
  } catch (error) {
    return {
      warning: `warning: ${(error as Error).message.split("\n")[0]}; memory is indexed on this machine and pushed when the database answers`,
    };
  }
}
