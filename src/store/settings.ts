/**
 * Where a project's memory lives when it is not the local SQLite file: `storage` in
 * `.triforge/config.json` names the backend, and its settings sit beside it:
 *   {"storage": "postgres", "postgres": {"url": "postgres://…", "project": "shop"}}
 *   {"storage": "insforge", "insforge": {"baseUrl": "https://….insforge.app", "project": "shop"}}
 * The URL and the key are better left to TRIFORGE_PG_URL / INSFORGE_BASE_URL + INSFORGE_API_KEY, so no
 * secret sits in a file that may be committed. `project` names the project in the shared database
 * (default: the project folder's name), so every machine's checkout writes the same memory.
 */
import { hostname } from "node:os";
import { basename } from "node:path";

export type StorageKind = "local" | "postgres" | "insforge";

export type StorageTarget =
  | { kind: "local" }
  | { kind: "postgres"; url: string; project: string }
  | { kind: "insforge"; baseUrl: string; apiKey: string; project: string };

interface RemoteSettings {
  postgres?: { url?: unknown; project?: unknown };
  insforge?: { baseUrl?: unknown; apiKey?: unknown; project?: unknown };
}

const text = (value: unknown) => (typeof value === "string" && value.trim() ? value.trim() : undefined);

/**
 * The backend's connection settings from the config and the environment (the environment wins). Throws
 * one line that says what to set when one is missing.
 */
export function storageTarget(
  kind: StorageKind,
  config: object,
  projectRoot: string,
  env: Record<string, string | undefined> = process.env,
): StorageTarget {
  const settings = config as RemoteSettings;
  if (kind === "local") return { kind };
  if (kind === "postgres") {
    const url = text(env.TRIFORGE_PG_URL) ?? text(settings.postgres?.url);
    if (!url)
      throw new Error(
        "storage postgres needs a connection URL: set TRIFORGE_PG_URL (or postgres.url in .triforge/config.json)",
      );
    return { kind, url, project: text(settings.postgres?.project) ?? basename(projectRoot) };
  }
  const baseUrl = text(env.INSFORGE_BASE_URL) ?? text(settings.insforge?.baseUrl);
  const apiKey = text(env.INSFORGE_API_KEY) ?? text(settings.insforge?.apiKey);
  if (!baseUrl || !apiKey)
    throw new Error(
      "storage insforge needs INSFORGE_BASE_URL and INSFORGE_API_KEY (the project's admin key), or insforge.baseUrl in .triforge/config.json",
    );
  return {
    kind,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    apiKey,
    project: text(settings.insforge?.project) ?? basename(projectRoot),
  };
}

/** This machine's checkout of the project: its chats.jsonl offset is kept under this name. */
export function writerName(projectRoot: string): string {
  return `${hostname()}:${projectRoot}`;
}
