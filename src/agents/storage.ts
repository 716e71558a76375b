import type { ProjectConfig } from "../project/config.ts";

type Storage = ProjectConfig["storage"];

/**
 * The backends this version stores memory in. The config accepts `postgres` and `insforge` too, so a
 * project set up for them keeps its setting when a version that has them arrives; until then memory is
 * stored in the local SQLite store.
 */
export const AVAILABLE_STORAGES: readonly Storage[] = ["local"];

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
