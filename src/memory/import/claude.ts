/**
 * Claude Code's past sessions: `<config dir>/projects/<slug>/<session id>.jsonl`, the config dir being
 * `$CLAUDE_CONFIG_DIR` or `~/.claude`. The slug is the session's working folder with every character
 * outside [a-zA-Z0-9] turned into `-` (paths over 200 characters keep 200 and a hash). A session
 * started in a subfolder of the project has the slug of that subfolder, so folders whose name extends
 * the project's slug are read too; a transcript is kept when its `cwd` belongs to the project.
 *
 * Subagent threads live in `<session>/subagents/` (and, in 2.0.x, in top-level `agent-*.jsonl`
 * files): they are never read; inline sidechain records are dropped by the parser.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { captureTranscript } from "../capture.ts";
import { type AgentHome, belongsTo, type FoundSession, headLines, jsonObject } from "./sessions.ts";
import type { AppendResult } from "./turns.ts";

/** Claude Code's folder name for a working folder (its `sanitizePath`, without the >200 hash). */
export function claudeSlug(path: string): string {
  return path.replace(/[^a-zA-Z0-9]/g, "-");
}

export function claudeProjectsDir({ home, env }: AgentHome): string {
  return join(env.CLAUDE_CONFIG_DIR || join(home, ".claude"), "projects");
}

/** The `cwd` of the first record in a transcript's first 256 KB that has one (metadata comes first). */
function transcriptCwd(path: string): string | undefined {
  for (const line of headLines(path, 256 << 10)) {
    const cwd = jsonObject(line)?.cwd;
    if (typeof cwd === "string" && cwd) return cwd;
  }
  return undefined;
}

export function findClaudeSessions(root: string, where: AgentHome): FoundSession[] {
  const dir = claudeProjectsDir(where);
  if (!existsSync(dir)) return [];
  const slug = claudeSlug(root);
  // Long paths: Claude Code keeps the first 200 characters and appends a hash of the whole path.
  const prefix = slug.length > 200 ? slug.slice(0, 200) : slug;
  const found: FoundSession[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const exact = entry.name === slug;
    if (!exact && !entry.name.startsWith(`${prefix}-`)) continue;
    const folder = join(dir, entry.name);
    for (const file of readdirSync(folder, { withFileTypes: true })) {
      if (!file.isFile() || !file.name.endsWith(".jsonl") || file.name.startsWith("agent-")) continue;
      const path = join(folder, file.name);
      // Even the project's own folder may hold another project's sessions: `/a/b_c` and `/a/b-c` share
      // a slug, and a subfolder can be a project of its own. The transcript's cwd decides.
      const cwd = transcriptCwd(path);
      if (cwd ? !belongsTo(cwd, root) : !exact) continue;
      const stat = statSync(path);
      found.push({
        agent: "claude",
        sessionId: file.name.slice(0, -".jsonl".length),
        path,
        bytes: stat.size,
        modifiedMs: stat.mtimeMs,
      });
    }
  }
  return found;
}

/**
 * The same capture the Stop hook runs: same parser, redaction, keys and per-session offset. One capture
 * reads for at most its time budget under the chat-log lock (so live hooks are not held off); a long
 * transcript takes several, until it is read to its end.
 */
export function importClaudeSession(root: string, session: FoundSession): AppendResult {
  const total: AppendResult = { appended: 0, skipped: 0 };
  for (;;) {
    const result = captureTranscript(root, session.sessionId, session.path);
    total.appended += result.appended;
    total.skipped += result.skipped;
    if (!result.deferred) return total;
  }
}
