/**
 * The real Claude Code CLI for end-to-end tests: installed from the npm registry once per version into
 * a cache outside the repository (TRIFORGE_E2E_DIR), and helpers to script the fake Messages API by
 * what each request carries.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ReceivedRequest } from "./fakes/anthropic.ts";

/** Where Claude Code is installed (and kept between runs): outside the repository. */
const CACHE = process.env.TRIFORGE_E2E_DIR ?? join(tmpdir(), "triforge-e2e");

/** npm failures that mean "no registry here", the only reason this test may skip. */
const OFFLINE =
  /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network request .* failed|getaddrinfo/i;

function claudeRuns(binary: string, version: string): boolean {
  if (!existsSync(binary)) return false;
  const result = Bun.spawnSync([binary, "--version"], {
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "", HOME: tmpdir() },
  });
  return result.exitCode === 0 && result.stdout.toString().includes(version.replace(/^latest$/, ""));
}

/** The native binary npm installed: the wrapper's bin (linked by its postinstall) or the platform package's. */
function findClaude(dir: string, version: string): string | undefined {
  const scope = join(dir, "node_modules", "@anthropic-ai");
  const candidates = [join(scope, "claude-code", "bin", "claude.exe")];
  if (existsSync(scope)) {
    for (const name of readdirSync(scope).filter((n) => n.startsWith("claude-code-"))) {
      candidates.push(join(scope, name, process.platform === "win32" ? "claude.exe" : "claude"));
    }
  }
  return candidates.find((binary) => claudeRuns(binary, version));
}

/**
 * Installs Claude Code once per version into the cache (into a scratch folder, then renamed: runs may
 * race); `skip` says why when the npm registry cannot be reached, the only reason a test may skip.
 */
export async function installClaudeCode(version: string): Promise<{ binary?: string; skip?: string }> {
  const dir = join(CACHE, `claude-code-${version}`);
  const cached = findClaude(dir, version);
  if (cached) return { binary: cached };
  mkdirSync(CACHE, { recursive: true });
  const scratch = mkdtempSync(join(CACHE, ".install-"));
  try {
    const npm = Bun.spawn(
      [
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--prefix",
        scratch,
        `@anthropic-ai/claude-code@${version}`,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const [out, err, code] = await Promise.all([
      new Response(npm.stdout).text(),
      new Response(npm.stderr).text(),
      npm.exited,
    ]);
    if (code !== 0) {
      if (OFFLINE.test(out + err))
        return { skip: `the npm registry is unreachable (${(err.match(OFFLINE) ?? [""])[0]})` };
      throw new Error(`npm install @anthropic-ai/claude-code@${version} failed (${code}):\n${err || out}`);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(scratch, dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const binary = findClaude(dir, version);
  if (!binary)
    throw new Error(
      `npm installed @anthropic-ai/claude-code@${version} into ${dir}, but no native claude binary there runs`,
    );
  return { binary };
}

// ---- scripting the fake Messages API ------------------------------------------------------------

export type Block = {
  type: string;
  text?: string;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
};

/** Claude Code's conversation requests carry tools; anything else (side requests) does not. */
export const isConversation = (r: ReceivedRequest) => Array.isArray(r.body?.tools) && r.body.tools.length > 0;

export function lastUserBlocks(r: ReceivedRequest): Block[] {
  const last = (r.body.messages as { role: string; content: string | Block[] }[])
    .filter((m) => m.role === "user")
    .at(-1);
  if (!last) return [];
  return typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
}

export function toolResult(r: ReceivedRequest, id: string): Block | undefined {
  return lastUserBlocks(r).find((b) => b.type === "tool_result" && b.tool_use_id === id);
}

export const startsTurn = (r: ReceivedRequest) =>
  isConversation(r) && !lastUserBlocks(r).some((b) => b.type === "tool_result");
export const answers = (id: string) => (r: ReceivedRequest) =>
  isConversation(r) && toolResult(r, id) !== undefined;

/** The text of a tool result, however Claude Code packed it (string or content blocks). */
export function resultText(block: Block | undefined): string {
  if (!block) return "";
  if (typeof block.content === "string") return block.content;
  return (block.content as Block[]).map((b) => b.text ?? "").join("\n");
}

// ---- running it ----------------------------------------------------------------------------------

/**
 * Only what Claude Code needs to run headless against the fake API: no key, setting or proxy of the
 * machine running the test leaks in. The hooks inherit TRIFORGE_LLM=none: the indexer runs without an
 * LLM, as for a user with no key.
 */
export function claudeEnv(options: { home: string; apiUrl: string; path?: string }): Record<string, string> {
  return {
    PATH: options.path ?? process.env.PATH ?? "/usr/bin:/bin",
    HOME: options.home,
    USERPROFILE: options.home,
    TMPDIR: tmpdir(),
    ANTHROPIC_BASE_URL: options.apiUrl,
    ANTHROPIC_API_KEY: "sk-ant-e2e-dummy-key",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    TRIFORGE_LLM: "none",
  };
}
