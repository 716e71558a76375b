/**
 * Import of existing history and capture for Codex, Cursor and OpenCode. The fixtures in
 * test/fixtures/agents/ are each agent's real on-disk format with anonymised content; their project
 * folder, /home/user/acme-shop, is rewritten to a temporary project here.
 */
import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { claudeSlug, findClaudeSessions } from "../src/memory/import/claude.ts";
import {
  codexHookRead,
  codexReplyKey,
  codexSessionAt,
  findCodexSessions,
  parseRollout,
  readCodexSession,
} from "../src/memory/import/codex.ts";
import {
  cursorSlug,
  cursorTimestamp,
  cursorUserProse,
  findCursorSessions,
  readCursorSession,
} from "../src/memory/import/cursor.ts";
import {
  catchUpDue,
  findSessions,
  INDEX_EVERY_MS,
  importHistory,
  indexDue,
} from "../src/memory/import/history.ts";
import {
  findOpencodeSession,
  findOpencodeSessions,
  opencodeHookRead,
  readOpencodeSession,
} from "../src/memory/import/opencode.ts";
import type { AgentHome } from "../src/memory/import/sessions.ts";
import { appendTurns, captureSessionTurns } from "../src/memory/import/turns.ts";
import { opencodePlugin } from "../src/agents/opencode.ts";
import { agentCaptureStateDir, chatLogPath, projectKey } from "../src/home/paths.ts";
import { compiledBinary, runBinary, spawnCollect, tempDir } from "./support/helpers.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "agents");
const PLACEHOLDER = "/home/user/acme-shop";
const CLAUDE_SESSION = "8c2f4e61-1d3b-4a5c-9e7f-0a1b2c3d4e5f";
const CODEX_SESSION = "0199a1f2-7c3e-7d10-9b8e-4f2a6c1d3e5b";
const CODEX_ROLLOUT = `rollout-2026-03-14T09-02-11-${CODEX_SESSION}.jsonl`;
const CURSOR_SESSION = "3b8e41d0-6f2a-4c19-a7d5-9e0b1c2d3f4a";

/** A fixture with the placeholder project folder replaced by `root` (JSON-escaped). */
function fixture(path: string, root: string): string {
  return readFileSync(join(FIXTURES, path), "utf8").replaceAll(
    PLACEHOLDER,
    JSON.stringify(root).slice(1, -1),
  );
}

function put(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** Lays out, under `home`, what the four agents would have on disk after sessions in `root`. */
function installHistories(home: string, root: string) {
  const claudeDir = join(home, ".claude", "projects", claudeSlug(root));
  const claude = put(
    join(claudeDir, `${CLAUDE_SESSION}.jsonl`),
    fixture(`claude/${CLAUDE_SESSION}.jsonl`, root),
  );
  put(
    join(claudeDir, CLAUDE_SESSION, "subagents", "agent-a3f9c21.jsonl"),
    fixture("claude/subagent.jsonl", root),
  );
  // Claude Code 2.0.x wrote subagent threads beside the sessions.
  put(join(claudeDir, "agent-a3f9c21.jsonl"), fixture("claude/subagent.jsonl", root));
  // Another project whose path differs only in punctuation has the same slug.
  put(
    join(claudeDir, "f6a7b8c9-d0e1-4f2a-8b3c-4d5e6f708192.jsonl"),
    fixture("claude/subfolder-d4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f70.jsonl", root).replaceAll(
      `${root}/services/worker`,
      root.replace(/-([^-/]*)$/, "_$1"),
    ),
  );
  const subfolder = "subfolder-d4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f70.jsonl";
  put(
    join(
      home,
      ".claude",
      "projects",
      claudeSlug(`${root}/services/worker`),
      "d4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f70.jsonl",
    ),
    fixture(`claude/${subfolder}`, root),
  );
  // A sibling project whose slug starts with this one's: its sessions are not this project's.
  put(
    join(
      home,
      ".claude",
      "projects",
      claudeSlug(`${root}-admin`),
      "e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7081.jsonl",
    ),
    fixture(`claude/${subfolder}`, `${root}-admin`).replaceAll("/services/worker", ""),
  );

  const codexDir = join(home, ".codex", "sessions", "2026", "03", "14");
  const codex = put(join(codexDir, CODEX_ROLLOUT), fixture(`codex/${CODEX_ROLLOUT}`, root));
  for (const name of readdirSync(join(FIXTURES, "codex")))
    if (name.startsWith("rollout-") && name !== CODEX_ROLLOUT)
      put(
        join(home, ".codex", "sessions", name.slice(8, 12), name.slice(13, 15), name.slice(16, 18), name),
        fixture(`codex/${name}`, root),
      );

  const cursorDir = join(home, ".cursor", "projects", cursorSlug(root), "agent-transcripts", CURSOR_SESSION);
  const cursor = put(
    join(cursorDir, `${CURSOR_SESSION}.jsonl`),
    fixture(`cursor/${CURSOR_SESSION}.jsonl`, root),
  );
  put(join(cursorDir, "subagents", "9f8e7d6c.jsonl"), fixture("cursor/subagent.jsonl", root));

  const opencode = join(home, ".local", "share", "opencode");
  cpSync(join(FIXTURES, "opencode", "storage"), join(opencode, "storage"), { recursive: true });
  for (const file of readdirSync(join(opencode, "storage"), { recursive: true, withFileTypes: true }))
    if (file.isFile()) {
      const path = join(file.parentPath, file.name);
      writeFileSync(path, readFileSync(path, "utf8").replaceAll(PLACEHOLDER, root));
    }
  const db = new Database(join(opencode, "opencode.db"));
  db.exec(fixture("opencode/opencode.sql", root));
  db.close();
  return { claude, codex, cursor };
}

function chatLog(root: string): { uuid: string; role: string; text: string; session_id: string }[] {
  let text = "";
  try {
    text = readFileSync(chatLogPath(root), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe("each agent's format → turns", () => {
  const home = tempDir("triforge-import-home-");
  const root = join(home, "acme-shop");
  const where: AgentHome = { home, env: {} };
  beforeAll(() => {
    mkdirSync(root, { recursive: true });
    installHistories(home, root);
  });

  test("Claude Code: the project's folder and its subfolders' folders, never subagent files or a sibling project", () => {
    const sessions = findClaudeSessions(root, where);
    expect(sessions.map((s) => s.sessionId).sort()).toEqual([
      CLAUDE_SESSION,
      "d4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f70",
    ]);
  });

  test("Claude Code: a project path over 200 characters, whose folder Claude Code names by 200 and a hash", () => {
    const long = join(home, "a".repeat(120), "b".repeat(120));
    mkdirSync(long, { recursive: true });
    // Claude Code's own rule: sanitized path cut at 200, a dash, a hash of the whole path.
    const folder = `${claudeSlug(long).slice(0, 200)}-${Bun.hash(long).toString(36)}`;
    put(
      join(home, ".claude", "projects", folder, `${CLAUDE_SESSION}.jsonl`),
      fixture(`claude/${CLAUDE_SESSION}.jsonl`, long),
    );
    expect(findClaudeSessions(long, where).map((s) => s.sessionId)).toEqual([CLAUDE_SESSION]);
  });

  test("Codex: the events' prose, in order; injected instructions, reasoning and tool calls stay out", () => {
    const [session] = findCodexSessions(root, where).filter((s) => s.sessionId === CODEX_SESSION);
    const turns = readCodexSession(session);
    expect(turns.map((t) => [t.role, t.text.slice(0, 40)])).toEqual([
      ["user", "Checkout totals are off by a cent for so"],
      ["assistant", "Rounding happens once, at the end, in sr"],
    ]);
    expect(turns[0].ts).toBe("2026-03-14T09:02:19.872Z");
    expect(turns.map((t) => t.key)).toEqual([
      `codex:${CODEX_SESSION}:7`,
      codexReplyKey(CODEX_SESSION, "0199a1f2-9a01-7e22-8c3d-2b1a0f9e8d7c", turns[1].text),
    ]);
  });

  test("Codex 0.171 (a rollout the real CLI wrote): item_completed events, one record per message", () => {
    const path = put(
      join(tempDir("triforge-import-codex-real-"), "rollout.jsonl"),
      fixture(
        "codex/cli-0.171.0/rollout-2026-12-01T22-03-57-01a233a2-cf1d-7522-91e1-cb8f2c4d9f1d.jsonl",
        root,
      ),
    );
    const session = codexSessionAt(path);
    expect(session?.sessionId).toBe("01a233a2-cf1d-7522-91e1-cb8f2c4d9f1d");
    const turns = session ? readCodexSession(session) : [];
    expect(turns.map((t) => [t.role, t.text])).toEqual([
      ["user", "How should we store money in the cart?"],
      ["assistant", "Decision: we keep money as integer cents."],
      ["user", "And the tax line?"],
      ["assistant", "Decision: we keep money as integer cents."],
      ["user", "Then what about the tax line?"],
      ["assistant", "Decision: we keep money as integer cents."],
    ]);
    // The same reply in three turns is three records; each has the key its Stop payload's reply gets.
    expect(new Set(turns.map((t) => t.key)).size).toBe(6);
    expect(turns[1].key).toBe(
      codexReplyKey(session?.sessionId ?? "", "01a233a2-cf53-7133-86ef-efdf8ba538bd", turns[1].text),
    );
  });

  test("Codex: a rollout written before events were recorded falls back to its messages; a subagent's thread stays out", () => {
    const sessions = findCodexSessions(root, where);
    expect(sessions.map((s) => s.sessionId).sort()).toEqual(
      [CODEX_SESSION, "5f0c7e21-3a4b-4c5d-9e8f-1a2b3c4d5e6f"].sort(),
    );
    const old = sessions.find((s) => s.sessionId !== CODEX_SESSION);
    expect(old && readCodexSession(old).map((t) => [t.role, t.text])).toEqual([
      ["user", "Which queue do we use for order emails?"],
      ["assistant", "Order emails go through the BullMQ queue named mailer, defined in src/jobs/mailer.ts."],
    ]);
  });

  test("Codex: a line still being written is left for the next read; numbering does not move", () => {
    const text = fixture(`codex/${CODEX_ROLLOUT}`, root);
    const cut = text.slice(0, text.lastIndexOf('{"timestamp"', text.indexOf('"agent_message"')) + 30);
    const partial = parseRollout(cut, CODEX_SESSION, "2026-01-01T00:00:00.000Z");
    expect(partial.turns.map((t) => t.key)).toEqual([`codex:${CODEX_SESSION}:7`]);
  });

  test("Codex: a Stop hook that comes before the reply is in the rollout stores the payload's reply once", () => {
    const home = tempDir("triforge-import-codex-race-");
    process.env.TRIFORGE_HOME = join(home, "data");
    const rolloutText = fixture(`codex/${CODEX_ROLLOUT}`, root);
    const turn2 = fixture("codex/turn-2.jsonl", root).split("\n");
    const path = put(join(home, CODEX_ROLLOUT), `${rolloutText}${turn2.slice(0, 3).join("\n")}\n`);
    const session = { agent: "codex" as const, sessionId: CODEX_SESSION, path, bytes: 0, modifiedMs: 0 };
    const stop = {
      session_id: CODEX_SESSION,
      turn_id: "0199a1f5-1b2c-7d3e-8f40-5a6b7c8d9e0f",
      last_assistant_message: "Done: taxCents now rounds half to even in src/cart/tax.ts.",
    };
    const hook = (input: Record<string, unknown>) =>
      captureSessionTurns(root, "codex", CODEX_SESSION, (resume) => codexHookRead(session, input, resume));
    expect(hook(stop).appended).toBe(4);
    // Codex writes the reply afterwards; the next Stop and an import find it already stored.
    writeFileSync(path, rolloutText + turn2.join("\n"));
    expect(hook({}).appended).toBe(0);
    expect(appendTurns(root, CODEX_SESSION, readCodexSession(session)).appended).toBe(0);
    // A later Stop of the same turn repeating that reply: already stored.
    expect(hook(stop).appended).toBe(0);
    expect(chatLog(root).map((r) => r.text)).toContain(stop.last_assistant_message);
    expect(chatLog(root).length).toBe(4);
  });

  test("Codex: after the first capture a hook parses only the lines added since, numbered on", () => {
    const home = tempDir("triforge-import-codex-resume-");
    const rolloutText = fixture(`codex/${CODEX_ROLLOUT}`, root);
    const path = put(join(home, CODEX_ROLLOUT), rolloutText);
    const session = { agent: "codex" as const, sessionId: CODEX_SESSION, path, bytes: 0, modifiedMs: 0 };
    const first = codexHookRead(session, {}, undefined);
    expect(first.turns.length).toBe(2);
    const turn2 = fixture("codex/turn-2.jsonl", root);
    writeFileSync(path, rolloutText + turn2);
    const next = codexHookRead(session, {}, first.resume);
    expect(next.turns.map((t) => t.text)).toEqual([
      "Also make the tax line use banker's rounding.",
      "Done: taxCents now rounds half to even in src/cart/tax.ts.",
    ]);
    const lines = rolloutText.split("\n").length - 1;
    expect(next.turns[0].key).toBe(`codex:${CODEX_SESSION}:${lines + 2}`);
    // The same keys as reading the whole file.
    expect(
      readCodexSession(session)
        .slice(2)
        .map((t) => t.key),
    ).toEqual(next.turns.map((t) => t.key));
    // A replaced file (same length, other bytes before the offset) is read from its start.
    writeFileSync(path, (rolloutText + turn2).replace("Checkout totals", "Checkout TOTALS"));
    expect(codexHookRead(session, {}, next.resume).turns.length).toBe(4);
  });

  test("a hook whose state is gone, or that died before saving it, stores nothing twice", () => {
    const home = tempDir("triforge-import-hook-state-");
    process.env.TRIFORGE_HOME = join(home, "data");
    const rolloutText = fixture(`codex/${CODEX_ROLLOUT}`, root);
    const path = put(join(home, CODEX_ROLLOUT), rolloutText);
    const session = { agent: "codex" as const, sessionId: CODEX_SESSION, path, bytes: 0, modifiedMs: 0 };
    const hook = () =>
      captureSessionTurns(root, "codex", CODEX_SESSION, (resume) => codexHookRead(session, {}, resume));
    expect(hook().appended).toBe(2);
    // New turns stored by another writer (an import) after the hook's state was saved: seen, not repeated.
    writeFileSync(path, rolloutText + fixture("codex/turn-2.jsonl", root));
    expect(appendTurns(root, CODEX_SESSION, readCodexSession(session)).appended).toBe(2);
    expect(hook().appended).toBe(0);
    // The state lost: the session is read whole and checked against every key.
    rmSync(agentCaptureStateDir(root), { recursive: true, force: true });
    expect(hook().appended).toBe(0);
    expect(chatLog(root).length).toBe(4);
  });

  test("Cursor: the person's query without attached context, thinking markers or notices Cursor writes itself", () => {
    const [session] = findCursorSessions(root, where);
    expect(session.sessionId).toBe(CURSOR_SESSION);
    const turns = readCursorSession(session);
    expect(turns.map((t) => [t.role, t.text])).toEqual([
      ["user", "search results flicker while typing, can we debounce?"],
      ["assistant", "Let me look at how the search box calls the API."],
      [
        "assistant",
        "We agreed to debounce the search box by 250 ms with useDebouncedValue in src/search/box.tsx, and to cancel stale requests with an AbortController.",
      ],
      ["assistant", "The unit tests passed."],
    ]);
    // The message's <timestamp> (UTC+1) is the only time there is; replies inherit it.
    expect(new Set(turns.map((t) => t.ts))).toEqual(new Set(["2026-03-12T14:05:00.000Z"]));
    expect(cursorTimestamp("<timestamp>Tuesday, Jul 21, 2026, 12:11 AM (UTC-4:30)</timestamp>")).toBe(
      "2026-07-21T04:41:00.000Z",
    );
    expect(cursorTimestamp("no tag")).toBeUndefined();
    expect(cursorUserProse("<rules>\nbe terse\n</rules>\nrename foo to bar")).toBe("rename foo to bar");
  });

  test("OpenCode: database and JSON storage; a migrated session once; subagents, other projects, synthetic parts and compaction summaries stay out", () => {
    const sessions = findOpencodeSessions(root, where);
    expect(sessions.map((s) => s.sessionId).sort()).toEqual([
      "ses_3a0e9b8a0ffeB2advisoryLock",
      "ses_3a1f0c9a1ffeA1pnpmWorkspcs",
      "ses_3a1f0d0a2ffeC3migratedBoth",
    ]);
    const byId = new Map(sessions.map((s) => [s.sessionId, s]));
    const fromDb = byId.get("ses_3a1f0c9a1ffeA1pnpmWorkspcs");
    expect(fromDb?.path.endsWith("opencode.db")).toBe(true);
    expect(fromDb && readOpencodeSession(fromDb).map((t) => [t.role, t.text])).toEqual([
      ["user", "Should the admin app live in this repo or its own?"],
      [
        "assistant",
        "Keep it here: we decided on pnpm workspaces, with the admin app under apps/admin sharing packages/ui.",
      ],
    ]);
    const fromFiles = byId.get("ses_3a0e9b8a0ffeB2advisoryLock");
    expect(fromFiles?.path.endsWith("storage")).toBe(true);
    expect(fromFiles && readOpencodeSession(fromFiles).map((t) => t.key)).toEqual([
      "opencode:msg_c4d0e5f0a001BbbbbbbbbbbbbB",
      "opencode:msg_c4d0e5f0b001BbbbbbbbbbbbbB",
    ]);
    expect(byId.get("ses_3a1f0d0a2ffeC3migratedBoth")?.path.endsWith("opencode.db")).toBe(true);
    // What the plugin's hook looks up by id alone: the same sessions, and nothing it must not read.
    expect(findOpencodeSession(root, "ses_3a0e9b8a0ffeB2advisoryLock", where)?.path).toBe(fromFiles?.path);
    expect(findOpencodeSession(root, "ses_3a1f0c9a1ffeA1pnpmWorkspcs", where)?.path).toBe(fromDb?.path);
    expect(findOpencodeSession(root, "ses_3a1f0e0a3ffeD4subagentTask", where)).toBeUndefined();
    expect(findOpencodeSession(root, "ses_3a1f0f0a4ffeE5otherProject", where)).toBeUndefined();
  });

  test("OpenCode: at each idle the hook reads only the messages after the last one it read", () => {
    const dir = tempDir("triforge-import-opencode-resume-");
    const path = join(dir, "opencode.db");
    const db = new Database(path);
    db.exec(fixture("opencode/opencode.sql", root));
    const session = {
      agent: "opencode" as const,
      sessionId: "ses_3a1f0c9a1ffeA1pnpmWorkspcs",
      path,
      bytes: 0,
      modifiedMs: 0,
    };
    const first = opencodeHookRead(session, undefined);
    expect(first.turns.length).toBe(2);
    expect(opencodeHookRead(session, first.resume).turns).toEqual([]);
    const id = "msg_c5e0f6a1d001AaaaaaaaaaaaaA";
    db.run("INSERT INTO message VALUES (?, ?, ?, ?, ?)", [
      id,
      session.sessionId,
      1773478900000,
      1773478900000,
      JSON.stringify({ role: "user", time: { created: 1773478900000 } }),
    ]);
    db.run("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", [
      "prt_c5e0f6a1d002AaaaaaaaaaaaaA",
      id,
      session.sessionId,
      1773478900000,
      1773478900000,
      JSON.stringify({ type: "text", text: "Add a changeset for the ui package." }),
    ]);
    db.close();
    expect(opencodeHookRead(session, first.resume).turns.map((t) => [t.key, t.text])).toEqual([
      [`opencode:${id}`, "Add a changeset for the ui package."],
    ]);
  });

  test("OpenCode 2.x: session_v2 and session_message, the same keys as before the upgrade, no turn twice", async () => {
    const upgraded = tempDir("triforge-import-opencode-v2-");
    process.env.TRIFORGE_HOME = join(upgraded, "data");
    const project = join(upgraded, "acme-shop");
    mkdirSync(project, { recursive: true });
    const there: AgentHome = { home: upgraded, env: {} };
    const dbPath = join(upgraded, ".local", "share", "opencode", "opencode.db");
    mkdirSync(dirname(dbPath), { recursive: true });
    const build = (sql: string) => {
      rmSync(dbPath, { force: true });
      const db = new Database(dbPath);
      db.exec(fixture(`opencode/${sql}`, project));
      db.close();
    };
    build("opencode.sql");
    const before = await importHistory(project, there, { agents: ["opencode"] });
    expect([before.sessions, before.appended]).toEqual([2, 4]);
    // OpenCode upgrades: the 1.x rows are copied into the 2.x tables, and a new session starts there.
    build("opencode-v2.sql");
    const sessions = findOpencodeSessions(project, there);
    expect(sessions.map((s) => s.sessionId).sort()).toEqual([
      "ses_3a1f0c9a1ffeA1pnpmWorkspcs",
      "ses_3a1f0d0a2ffeC3migratedBoth",
      "ses_3a2b0a0a5ffeF6afterUpgrade",
    ]);
    const fresh = sessions.find((s) => s.sessionId === "ses_3a2b0a0a5ffeF6afterUpgrade");
    expect(fresh && readOpencodeSession(fresh).map((t) => [t.role, t.text])).toEqual([
      ["user", "How do we write release notes now?"],
      [
        "assistant",
        "Release notes come from changesets now: every PR adds one with pnpm changeset, and the release workflow turns them into CHANGELOG entries.",
      ],
    ]);
    const after = await importHistory(project, there, { agents: ["opencode"] });
    expect([after.sessions, after.appended, after.skipped]).toEqual([3, 2, 4]);
    // The plugin's hook goes on from the newest seq it read.
    expect(fresh && opencodeHookRead(fresh, opencodeHookRead(fresh, undefined).resume).turns).toEqual([]);
  });

  test("--since keeps the sessions changed on or after the date", () => {
    const all = findSessions(root, where);
    expect(all.length).toBe(2 + 2 + 1 + 3);
    expect(findSessions(root, where, undefined, Date.now() + 60_000)).toEqual([]);
  });
});

describe("when the capture hooks index", () => {
  test("at a session's end, else at most every ten minutes", () => {
    const home = tempDir("triforge-import-index-due-");
    process.env.TRIFORGE_HOME = join(home, "data");
    const root = join(home, "project");
    const now = Date.parse("2026-03-14T09:00:00.000Z");
    expect(indexDue(root, false, now)).toBe(true);
    // The marker's time is the file's: set it to `now`, as the clock the test gives.
    utimesSync(join(agentCaptureStateDir(root), "indexed-at"), now / 1000, now / 1000);
    expect(indexDue(root, false, now + 60_000)).toBe(false);
    expect(indexDue(root, true, now + 60_000)).toBe(true);
    utimesSync(join(agentCaptureStateDir(root), "indexed-at"), now / 1000, now / 1000);
    expect(indexDue(root, false, now + INDEX_EVERY_MS + 1)).toBe(true);
  });

  test("a new session indexes what the last one left, only when chats.jsonl changed since", () => {
    const home = tempDir("triforge-import-catch-up-");
    process.env.TRIFORGE_HOME = join(home, "data");
    const root = join(home, "project");
    expect(catchUpDue(root)).toBe(false);
    appendTurns(root, "s", [{ key: "codex:s:1", role: "user", text: "hi", ts: "2026-01-01T00:00:00.000Z" }]);
    const marker = join(agentCaptureStateDir(root), "indexed-at");
    const changed = statSync(chatLogPath(root)).mtimeMs;
    expect(catchUpDue(root, changed + 1000)).toBe(true);
    utimesSync(marker, (changed + 1000) / 1000, (changed + 1000) / 1000);
    expect(catchUpDue(root, changed + 2000)).toBe(false);
  });
});

describe("the OpenCode plugin", () => {
  test("hands the session over when a reply ends, in 1.x's events and 2.x's, and for nothing else", async () => {
    const dir = tempDir("triforge-opencode-plugin-");
    // Stands in for triforge: each run keeps the payload it was given on stdin in a file of its own.
    const file = put(join(dir, "plugin.js"), opencodePlugin(["sh", "-c", `cat > '${dir}/payload.'$$`, "sh"]));
    const { TriforgeMemory } = await import(file);
    const hooks = await TriforgeMemory({ directory: dir });
    for (const event of [
      { type: "message.updated", properties: { sessionID: "ses_none" } },
      { type: "session.idle", properties: { sessionID: "ses_a" } },
      { type: "session.status", properties: { sessionID: "ses_none", status: { type: "busy" } } },
      { type: "session.status", properties: { sessionID: "ses_b", status: { type: "idle" } } },
      { type: "session.execution.succeeded", data: { sessionID: "ses_c" } },
      { type: "session.idle", properties: {} },
    ])
      await hooks.event({ event });
    const payloads = () =>
      readdirSync(dir)
        .filter((name) => name.startsWith("payload."))
        .map((name) => readFileSync(join(dir, name), "utf8"));
    const deadline = Date.now() + 10_000;
    while (payloads().filter((p) => p.endsWith("}")).length < 3 && Date.now() < deadline) await Bun.sleep(25);
    // Time for a run that should not have happened to show up.
    await Bun.sleep(300);
    expect(
      payloads()
        .map((p) => JSON.parse(p).session_id)
        .sort(),
    ).toEqual(["ses_a", "ses_b", "ses_c"]);
  }, 30_000);
});

describe("appending another agent's turns", () => {
  test("keys already in chats.jsonl are not written again; text is redacted", () => {
    const home = tempDir("triforge-import-append-");
    process.env.TRIFORGE_HOME = join(home, "data");
    const root = join(home, "project");
    mkdirSync(root, { recursive: true });
    const secret = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
    const turns = [
      {
        key: "codex:s:1",
        role: "user" as const,
        text: `deploy with ${secret}`,
        ts: "2026-01-01T00:00:00.000Z",
      },
      { key: "codex:s:2", role: "assistant" as const, text: "Deployed.", ts: "2026-01-01T00:00:01.000Z" },
    ];
    expect(appendTurns(root, "s", turns)).toEqual({ appended: 2, skipped: 0 });
    expect(appendTurns(root, "s", turns)).toEqual({ appended: 0, skipped: 2 });
    const more = [
      ...turns,
      { key: "codex:s:3", role: "user" as const, text: "thanks", ts: "2026-01-01T00:00:02.000Z" },
    ];
    expect(appendTurns(root, "s", more)).toEqual({ appended: 1, skipped: 2 });
    const log = chatLog(root);
    expect(log.map((r) => r.uuid)).toEqual(["codex:s:1", "codex:s:2", "codex:s:3"]);
    expect(log[0].text).not.toContain(secret);
  });
});

describe("triforge activate --import, then import again and capture live (compiled binary)", () => {
  const home = tempDir("triforge-import-e2e-");
  const root = join(home, "acme-shop");
  const env = {
    CLAUDE_CONFIG_DIR: "",
    CODEX_HOME: join(home, ".codex"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CONFIG_HOME: join(home, ".config"),
  };
  const run = (args: string[], stdin?: string) => runBinary(args, { home, env, stdin, cwd: root });
  let files: ReturnType<typeof installHistories>;
  beforeAll(() => {
    mkdirSync(root, { recursive: true });
    files = installHistories(home, root);
  });

  /** Runs a hook command as the agent does: the line install wrote, through the shell, payload on stdin. */
  const runHook = (command: string, payload: object) =>
    spawnCollect(["sh", "-c", command], {
      cwd: root,
      stdin: JSON.stringify(payload),
      env: { ...process.env, ...env, HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") },
    });
  const installed = () => {
    const codex = JSON.parse(readFileSync(join(home, ".codex", "hooks.json"), "utf8")).hooks;
    const cursor = JSON.parse(readFileSync(join(home, ".cursor", "hooks.json"), "utf8")).hooks;
    return {
      codex: codex.Stop[0].hooks[0].command,
      codexStart: codex.SessionStart[0].hooks[0].command,
      codexCatchUp: codex.SessionStart[1].hooks[0].command,
      cursor: cursor.stop[0].command,
    };
  };

  test("every agent's history is searchable right after install and activate --import", async () => {
    mkdirSync(join(home, ".config", "opencode"), { recursive: true });
    const install = await run(["install", "--without", "insforge"]);
    expect(install.code).toBe(0);
    for (const line of [
      "~/.codex/hooks.json — memory for Codex",
      "~/.cursor/hooks.json — memory capture",
      "~/.config/opencode/plugins/triforge-memory.js — memory capture",
    ])
      expect(install.stdout).toContain(line);
    const activated = await run(["activate", "--import"]);
    expect(activated.stderr).toBe("");
    expect(activated.code).toBe(0);
    expect(activated.stdout).toContain(
      "Imported 8 session(s) (Claude Code 2, Codex 2, Cursor 1, OpenCode 3;",
    );
    for (const [query, expected] of [
      ["stream uploads to S3 multipart", "multipart upload (5 MB parts)"],
      ["money as integer cents", "integer cents (priceCents)"],
      ["debounce the search box", "debounce the search box by 250 ms"],
      ["pnpm workspaces admin app", "pnpm workspaces"],
      ["advisory lock invoice job", "pg_try_advisory_lock"],
      ["worker health check port", "9464"],
    ]) {
      const recalled = await run(["recall", query, "--json"]);
      expect(recalled.code).toBe(0);
      const hits = JSON.parse(recalled.stdout).hits as { text: string }[];
      expect(hits.some((h) => h.text.includes(expected))).toBe(true);
    }
  }, 120_000);

  test("Codex's SessionStart hook prints the prelude in the output shape Codex accepts", async () => {
    const start = await runHook(installed().codexStart, {
      session_id: "0199b000-0000-7000-8000-000000000001",
      cwd: root,
      hook_event_name: "SessionStart",
      source: "startup",
    });
    expect([start.code, start.stderr]).toEqual([0, ""]);
    const output = JSON.parse(start.stdout);
    // Codex refuses unknown fields here: exactly these two.
    expect(Object.keys(output)).toEqual(["hookSpecificOutput"]);
    expect(Object.keys(output.hookSpecificOutput).sort()).toEqual(["additionalContext", "hookEventName"]);
    expect(output.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(output.hookSpecificOutput.additionalContext.length).toBeGreaterThan(0);
    // Its other SessionStart hook, the catch-up index, prints nothing and fails nothing.
    const catchUp = await runHook(installed().codexCatchUp, {
      session_id: "0199b000-0000-7000-8000-000000000001",
      cwd: root,
      hook_event_name: "SessionStart",
    });
    expect([catchUp.code, catchUp.stdout, catchUp.stderr]).toEqual([0, "", ""]);
    const errors = join(home, ".claude", "triforge", projectKey(root), "errors.log");
    expect(existsSync(errors) ? readFileSync(errors, "utf8") : "").not.toContain("capture-agent");
  }, 120_000);

  test("a second import adds nothing; live capture on top adds only the new turns", async () => {
    const before = chatLogFrom(home, root);
    const again = await run(["import"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("0 new record(s)");
    expect(chatLogFrom(home, root)).toEqual(before);

    // One more turn in each live-captured session, then each agent's hook.
    writeFileSync(files.claude, readFileSync(files.claude, "utf8") + fixture("claude/turn-2.jsonl", root));
    writeFileSync(files.codex, readFileSync(files.codex, "utf8") + fixture("codex/turn-2.jsonl", root));
    writeFileSync(files.cursor, readFileSync(files.cursor, "utf8") + fixture("cursor/turn-2.jsonl", root));
    const hooks = [
      await run(
        ["capture", `--project=${root}`],
        JSON.stringify({
          session_id: CLAUDE_SESSION,
          transcript_path: files.claude,
          cwd: root,
          hook_event_name: "Stop",
        }),
      ),
      await runHook(installed().codex, {
        session_id: CODEX_SESSION,
        transcript_path: files.codex,
        cwd: root,
        hook_event_name: "Stop",
      }),
      await runHook(installed().cursor, {
        conversation_id: CURSOR_SESSION,
        workspace_roots: [root],
        hook_event_name: "stop",
      }),
    ];
    for (const hook of hooks) expect([hook.code, hook.stdout]).toEqual([0, ""]);
    const after = chatLogFrom(home, root);
    expect(after.length).toBe(before.length + 6);
    expect(new Set(after.map((r) => r.uuid)).size).toBe(after.length);
    expect(after.slice(before.length).map((r) => r.text)).toContain(
      "Done: taxCents now rounds half to even in src/cart/tax.ts.",
    );

    // The hooks once more, and a third import: nothing new.
    await run(
      ["capture-agent", "--agent=codex"],
      JSON.stringify({ session_id: CODEX_SESSION, transcript_path: files.codex, cwd: root }),
    );
    const third = await run(["import"]);
    expect(third.stdout).toContain("0 new record(s)");
    expect(chatLogFrom(home, root).length).toBe(after.length);
  }, 120_000);

  test("OpenCode: the plugin install wrote hands an idle session to the capture", async () => {
    const before = chatLogFrom(home, root).length;
    const db = new Database(join(home, ".local", "share", "opencode", "opencode.db"));
    const session = "ses_3a1f0c9a1ffeA1pnpmWorkspcs";
    const message = "msg_c5e0f6a1d001AaaaaaaaaaaaaA";
    db.run("INSERT INTO message VALUES (?, ?, ?, ?, ?)", [
      message,
      session,
      1773478900000,
      1773478900000,
      JSON.stringify({ role: "user", time: { created: 1773478900000 }, agent: "build" }),
    ]);
    db.run("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", [
      "prt_c5e0f6a1d002AaaaaaaaaaaaaA",
      message,
      session,
      1773478900000,
      1773478900000,
      JSON.stringify({ type: "text", text: "Rename packages/ui to packages/design-system." }),
    ]);
    db.close();
    const { TriforgeMemory } = await import(
      join(home, ".config", "opencode", "plugins", "triforge-memory.js")
    );
    const saved = { ...process.env };
    Object.assign(process.env, env, { HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") });
    try {
      const hooks = await TriforgeMemory({ directory: root });
      await hooks.event({ event: { type: "message.updated", properties: { sessionID: session } } });
      await hooks.event({ event: { type: "session.idle", properties: { sessionID: session } } });
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
    // The plugin waits for nothing: the capture finishes on its own.
    const deadline = Date.now() + 20_000;
    while (chatLogFrom(home, root).length === before && Date.now() < deadline) await Bun.sleep(50);
    const added = chatLogFrom(home, root).slice(before);
    expect(added.map((r) => [r.uuid, r.text])).toEqual([
      [`opencode:${message}`, "Rename packages/ui to packages/design-system."],
    ]);
  }, 60_000);

  test("a forgotten session stays out of later imports and hooks", async () => {
    const forget = await run(["forget", "--session", CODEX_SESSION]);
    expect(forget.code).toBe(0);
    const gone = chatLogFrom(home, root);
    expect(gone.some((r) => r.session_id === CODEX_SESSION)).toBe(false);
    const again = await run(["import"]);
    expect(again.stdout).toContain("0 new record(s)");
    expect(again.stdout).toContain("1 forgotten session(s) left out");
    await run(
      ["capture-agent", "--agent=codex"],
      JSON.stringify({ session_id: CODEX_SESSION, transcript_path: files.codex, cwd: root }),
    );
    expect(chatLogFrom(home, root)).toEqual(gone);
  }, 120_000);

  test("bad options and an inactive project get a clear error and write nothing", async () => {
    const elsewhere = join(home, "not-active");
    mkdirSync(elsewhere, { recursive: true });
    const inactive = await run(["import", `--project=${elsewhere}`]);
    expect(inactive.code).toBe(1);
    expect(inactive.stderr).toContain("run 'triforge activate' first");
    const agent = await run(["import", "--agent=vim"]);
    expect([
      agent.code,
      agent.stderr.includes("--agent takes claude, codex, cursor, opencode or all"),
    ]).toEqual([2, true]);
    const since = await run(["import", "--since=last tuesday"]);
    expect([since.code, since.stderr.includes("--since takes a date")]).toEqual([2, true]);
    const both = await run(["activate", "--import", "--no-import"]);
    expect(both.code).toBe(2);
  }, 120_000);

  test("the capture hook of another agent does nothing outside an active project", async () => {
    const elsewhere = join(home, "elsewhere");
    mkdirSync(elsewhere, { recursive: true });
    const hook = await runBinary(["capture-agent", "--agent=codex"], {
      home,
      env,
      stdin: JSON.stringify({ session_id: CODEX_SESSION, transcript_path: files.codex, cwd: elsewhere }),
    });
    expect([hook.code, hook.stdout, hook.stderr]).toEqual([0, "", ""]);
  });
});

function chatLogFrom(home: string, root: string) {
  const previous = process.env.TRIFORGE_HOME;
  process.env.TRIFORGE_HOME = join(home, ".claude", "triforge");
  try {
    return chatLog(root);
  } finally {
    process.env.TRIFORGE_HOME = previous;
  }
}

/** util-linux `script` runs a command on a pseudo-terminal, so activate sees a terminal and asks. */
const ptyRunner = Bun.spawnSync(["script", "--version"]).stdout?.toString().includes("util-linux");

describe.skipIf(!ptyRunner)("activate on a terminal asks before importing (util-linux script)", () => {
  for (const [answer, expected] of [
    ["y", "Imported 8 session(s)"],
    ["n", "Not imported; 'triforge import' adds them any time."],
  ] as const) {
    test(`answering ${answer}`, async () => {
      const home = tempDir("triforge-import-tty-");
      const root = join(home, "acme-shop");
      mkdirSync(root, { recursive: true });
      installHistories(home, root);
      const command = `${await compiledBinary()} activate --project=${root}`;
      const result = await spawnCollect(["script", "-qec", command, "/dev/null"], {
        stdin: `${answer}\n`,
        env: {
          ...process.env,
          HOME: home,
          TRIFORGE_HOME: join(home, ".claude", "triforge"),
          CLAUDE_CONFIG_DIR: "",
          CODEX_HOME: join(home, ".codex"),
          XDG_DATA_HOME: join(home, ".local", "share"),
        },
      });
      // The output goes with the exit code, so that a failure shows what activate said.
      expect({ code: result.code, output: result.stdout }).toMatchObject({ code: 0 });
      expect(result.stdout).toContain(
        "Found 8 earlier session(s) of this project (Claude Code 2, Codex 2, Cursor 1, OpenCode 3;",
      );
      expect(result.stdout).toContain(expected);
      expect(chatLogFrom(home, root).length > 0).toBe(answer === "y");
    }, 120_000);
  }
});
