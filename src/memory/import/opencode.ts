/**
 * OpenCode's sessions, in `$XDG_DATA_HOME/opencode/` (default `~/.local/share/opencode/`):
 *
 * - OpenCode 2.0.3 and later: the SQLite database `opencode.db` (other release channels:
 *   `opencode-<channel>.db`), tables `session_v2` (`id`, `directory`, `parent_id`, `time_updated`) and
 *   `session_message` (`id`, `session_id`, `type` — user, assistant, synthetic, compaction, … —, `seq`,
 *   `time_created`, `data`: a user's `text`, an assistant's `content` blocks). The upgrade copies the 1.x
 *   rows in with their ids and freezes the 1.x tables, so a database whose `session_message` has rows is
 *   read from these alone.
 * - OpenCode 1.2 to 2.0: the same database with tables `session` (`id`, `directory`, `parent_id`,
 *   `time_updated`), `message` (`id`, `session_id`, `time_created`, `data`) and `part` (`id`,
 *   `message_id`, `session_id`, `data`); `data` is the JSON of the message or part without its ids.
 * - Earlier: one JSON file per object under `storage/`: `session/<project>/<id>.json`,
 *   `message/<session>/<id>.json`, `part/<message>/<id>.json`. The migration to the database leaves
 *   these behind, so a session in both is read from the database.
 *
 * A message's prose is its `text` parts; parts OpenCode adds itself (`synthetic`, `ignored`: file
 * contents, tool notices; 2.x: messages of type `synthetic`), tool calls, reasoning, and the summary a
 * compaction writes (`summary: true`; 2.x: type `compaction`) stay out. A session with a `parent_id` is
 * a subagent's and stays out too. Ids (1.x) and `seq` (2.x) sort in creation order. Each turn is keyed
 * `opencode:<message id>`, the same before and after the upgrade; a message is read only once the
 * session is idle (the plugin's event), when it is complete.
 */
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Role } from "../transcript.ts";
import { type AgentHome, belongsTo, type FoundSession } from "./sessions.ts";
import type { ResumePoint, SessionRead, SourceTurn } from "./turns.ts";

export function opencodeDataDir({ home, env }: AgentHome): string {
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "opencode");
}

interface MessageData {
  role?: unknown;
  summary?: unknown;
  time?: { created?: unknown };
}

interface PartData {
  type?: unknown;
  text?: unknown;
  synthetic?: unknown;
  ignored?: unknown;
}

/** One message with its parts, in either storage. */
interface StoredMessage {
  id: string;
  data: MessageData;
  parts: PartData[];
  /** ms since the epoch, when `data.time.created` is missing. */
  created?: number;
}

/** The prose of a session's messages, in order. Pure. */
export function opencodeTurns(messages: StoredMessage[]): SourceTurn[] {
  const turns: SourceTurn[] = [];
  for (const message of messages) {
    const role = message.data.role;
    if (role !== "user" && role !== "assistant") continue;
    if (message.data.summary === true) continue;
    const text = message.parts
      .filter(
        (p) => p.type === "text" && typeof p.text === "string" && p.synthetic !== true && p.ignored !== true,
      )
      .map((p) => (p.text as string).trim())
      .filter(Boolean)
      .join("\n\n");
    if (!text) continue;
    const created =
      typeof message.data.time?.created === "number" ? message.data.time.created : message.created;
    turns.push({
      key: `opencode:${message.id}`,
      role: role as Role,
      text,
      ts: new Date(created ?? Date.now()).toISOString(),
    });
  }
  return turns;
}

function parseJson<T>(text: string): T | undefined {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

function openDb(path: string): Database {
  // Read-only: OpenCode may be writing (WAL); we never hold a write lock on its database.
  return new Database(path, { readonly: true });
}

/** Which generation of tables holds a database's sessions: 2.x's once it has messages, else 1.x's. */
function schemaOf(handle: Database): "v2" | "v1" | undefined {
  const tables = new Set(
    (handle.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
      (t) => t.name,
    ),
  );
  if (
    tables.has("session_v2") &&
    tables.has("session_message") &&
    handle.query("SELECT 1 FROM session_message LIMIT 1").get()
  )
    return "v2";
  return tables.has("session") && tables.has("message") ? "v1" : undefined;
}

/** The project's main sessions in the database (only session `id`, when given). */
function databaseSessions(db: string, root: string, id?: string): FoundSession[] {
  const handle = openDb(db);
  try {
    const schema = schemaOf(handle);
    if (!schema) return [];
    const [sessions, texts] = schema === "v2" ? ["session_v2", "session_message"] : ["session", "part"];
    const only = id === undefined ? "" : " AND id = ?1";
    const rows = handle
      .query(`SELECT id, directory, time_updated AS updated FROM ${sessions} WHERE parent_id IS NULL${only}`)
      .all(...(id === undefined ? [] : [id])) as { id: string; directory: string; updated: number }[];
    const sizes = new Map<string, number>();
    for (const row of handle
      .query(
        `SELECT session_id AS id, SUM(LENGTH(data)) AS bytes FROM ${texts}${id === undefined ? "" : " WHERE session_id = ?1"} GROUP BY session_id`,
      )
      .all(...(id === undefined ? [] : [id])) as { id: string; bytes: number }[])
      sizes.set(row.id, row.bytes);
    return rows
      .filter((row) => typeof row.directory === "string" && belongsTo(row.directory, root))
      .map((row) => ({
        agent: "opencode" as const,
        sessionId: row.id,
        path: db,
        bytes: sizes.get(row.id) ?? 0,
        modifiedMs: row.updated,
      }));
  } finally {
    handle.close();
  }
}

/** Where a hook stopped in a session: the last message id (1.x, JSON files) or `seq` (2.x) read. */
interface MessageCursor {
  after?: string;
  seq?: number;
}

/**
 * A session's messages with their parts, those past `cursor` only, and the cursor past them. 2.x rows
 * become the 1.x shape: the type is the role, a user's `text` and an assistant's `text` blocks the parts.
 */
function databaseMessages(
  db: string,
  sessionId: string,
  cursor: MessageCursor = {},
): { messages: StoredMessage[]; cursor: MessageCursor } {
  const handle = openDb(db);
  try {
    if (schemaOf(handle) === "v2") {
      const rows = handle
        .query(
          "SELECT id, type, seq, time_created AS created, data FROM session_message WHERE session_id = ?1 AND seq > ?2 ORDER BY seq",
        )
        .all(sessionId, cursor.seq ?? -1) as {
        id: string;
        type: string;
        seq: number;
        created: number;
        data: string;
      }[];
      const messages = rows.map((row) => {
        const data = parseJson<{ text?: unknown; content?: unknown }>(row.data) ?? {};
        const parts: PartData[] =
          typeof data.text === "string"
            ? [{ type: "text", text: data.text }]
            : Array.isArray(data.content)
              ? (data.content as PartData[])
              : [];
        return { id: row.id, created: row.created, data: { role: row.type }, parts };
      });
      return { messages, cursor: { seq: rows.at(-1)?.seq ?? cursor.seq } };
    }
    const after = cursor.after ?? "";
    const messages = (
      handle
        .query(
          "SELECT id, time_created AS created, data FROM message WHERE session_id = ?1 AND id > ?2 ORDER BY time_created, id",
        )
        .all(sessionId, after) as { id: string; created: number; data: string }[]
    ).map((row) => ({
      id: row.id,
      created: row.created,
      data: parseJson<MessageData>(row.data) ?? {},
      parts: [] as PartData[],
    }));
    const byId = new Map(messages.map((m) => [m.id, m]));
    for (const row of handle
      .query(
        "SELECT message_id AS message, data FROM part WHERE session_id = ?1 AND message_id > ?2 ORDER BY id",
      )
      .all(sessionId, after) as { message: string; data: string }[]) {
      const part = parseJson<PartData>(row.data);
      if (part) byId.get(row.message)?.parts.push(part);
    }
    return { messages, cursor: { after: newestId(messages) ?? cursor.after } };
  } finally {
    handle.close();
  }
}

/** The newest id among messages: ids sort in creation order. */
function newestId(messages: StoredMessage[]): string | undefined {
  return messages
    .map((m) => m.id)
    .sort()
    .at(-1);
}

function jsonFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => join(dir, name));
}

function readJsonFile<T>(path: string): T | undefined {
  try {
    return parseJson<T>(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** The session a JSON file under `storage/session/` describes, when it is one of the project's main sessions. */
function storageSession(storage: string, file: string, root: string): FoundSession | undefined {
  const info = readJsonFile<{ id?: unknown; directory?: unknown; parentID?: unknown }>(file);
  if (typeof info?.id !== "string" || typeof info.directory !== "string" || info.parentID) return undefined;
  if (!belongsTo(info.directory, root)) return undefined;
  let bytes = 0;
  let modifiedMs = statSync(file).mtimeMs;
  for (const message of jsonFiles(join(storage, "message", info.id))) {
    modifiedMs = Math.max(modifiedMs, statSync(message).mtimeMs);
    const id = basename(message, ".json");
    for (const part of jsonFiles(join(storage, "part", id))) bytes += statSync(part).size;
  }
  return { agent: "opencode", sessionId: info.id, path: storage, bytes, modifiedMs };
}

function storageSessions(storage: string, root: string): FoundSession[] {
  const sessions = join(storage, "session");
  if (!existsSync(sessions)) return [];
  const found: FoundSession[] = [];
  for (const project of readdirSync(sessions, { withFileTypes: true })) {
    if (!project.isDirectory()) continue;
    for (const file of jsonFiles(join(sessions, project.name))) {
      const session = storageSession(storage, file, root);
      if (session) found.push(session);
    }
  }
  return found;
}

function storageMessages(
  storage: string,
  sessionId: string,
  cursor: MessageCursor = {},
): { messages: StoredMessage[]; cursor: MessageCursor } {
  const after = cursor.after ?? "";
  const files = jsonFiles(join(storage, "message", sessionId)).filter(
    (file) => basename(file, ".json") > after,
  );
  const messages = files.flatMap((file) => {
    const data = readJsonFile<MessageData & { id?: unknown; parts?: unknown }>(file);
    if (!data || typeof data.id !== "string") return [];
    const parts = jsonFiles(join(storage, "part", data.id)).flatMap((p) => readJsonFile<PartData>(p) ?? []);
    // The first releases kept the parts inside the message.
    if (!parts.length && Array.isArray(data.parts)) parts.push(...(data.parts as PartData[]));
    return [{ id: data.id, data, parts }];
  });
  return { messages, cursor: { after: newestId(messages) ?? cursor.after } };
}

/** `opencode.db` and the databases of other release channels (`opencode-<channel>.db`). */
function databases(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^opencode(-[\w.-]+)?\.db$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

export function findOpencodeSessions(root: string, where: AgentHome): FoundSession[] {
  const dir = opencodeDataDir(where);
  const found = new Map<string, FoundSession>();
  for (const db of databases(dir))
    for (const session of databaseSessions(db, root))
      if (!found.has(session.sessionId)) found.set(session.sessionId, session);
  for (const session of storageSessions(join(dir, "storage"), root))
    if (!found.has(session.sessionId)) found.set(session.sessionId, session);
  return [...found.values()];
}

function sessionMessages(session: FoundSession, cursor?: MessageCursor) {
  return session.path.endsWith(".db")
    ? databaseMessages(session.path, session.sessionId, cursor)
    : storageMessages(session.path, session.sessionId, cursor);
}

export function readOpencodeSession(session: FoundSession): SourceTurn[] {
  return opencodeTurns(sessionMessages(session).messages);
}

/** What the plugin's hook reads, at each idle: the messages after the last one it read. */
export function opencodeHookRead(session: FoundSession, resume: ResumePoint | undefined): SessionRead {
  const previous = resume as MessageCursor | undefined;
  const { messages, cursor } = sessionMessages(session, previous);
  return {
    turns: opencodeTurns(messages),
    resume: { ...cursor },
    whole: previous?.after === undefined && previous?.seq === undefined,
  };
}

/**
 * Session `id` of the project, wherever OpenCode keeps it (the plugin names only the id). Looked up by
 * its id alone: the hook runs after every reply and must not read every session there is.
 */
export function findOpencodeSession(root: string, id: string, where: AgentHome): FoundSession | undefined {
  const dir = opencodeDataDir(where);
  for (const db of databases(dir)) {
    const found = databaseSessions(db, root, id);
    if (found.length) return found[0];
  }
  const storage = join(dir, "storage");
  const sessions = join(storage, "session");
  if (!existsSync(sessions)) return undefined;
  for (const project of readdirSync(sessions))
    if (existsSync(join(sessions, project, `${id}.json`)))
      return storageSession(storage, join(sessions, project, `${id}.json`), root);
  return undefined;
}
