import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectKey } from "../src/home/paths.ts";
import { compiledBinary, runBinary, tempDir } from "./support/helpers.ts";

const scratch = tempDir("triforge-manage-");

/** The argv a printed command line (between backticks) gives `triforge` when pasted into sh. */
function pastedArgv(message: string): string[] {
  const line = /`(triforge [^`]*)`/.exec(message)?.[1];
  expect(line).toBeDefined();
  const result = Bun.spawnSync(["sh", "-c", `triforge() { printf '%s\\0' "$@"; }; ${line}`]);
  return result.stdout.toString().split("\0").slice(0, -1);
}

/** A home, a project in it, and the project's data folder (where capture and the indexer write). */
function setup() {
  const root = mkdtempSync(join(scratch, "case-"));
  const home = join(root, "home");
  const project = join(root, "the project");
  mkdirSync(home);
  mkdirSync(project);
  const data = join(home, ".claude", "triforge", projectKey(project));
  return { home, project, data };
}

describe("triforge status", () => {
  test("an inactive project says how to turn memory on", async () => {
    const { home, project } = setup();
    const result = await runBinary(["status", "--project", project], { home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("memory not active (run 'triforge activate' or /rag)");
    expect(result.stdout).toContain("nothing stored yet");
  });

  test("a deactivated project's kept memory is not reported as zero chunks, never indexed", async () => {
    const { home, project, data } = setup();
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, "chats.jsonl"), "{}\n");
    const result = await runBinary(["status", "--project", project], { home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("memory not active");
    expect(result.stdout).toContain("kept from when memory was active");
    expect(result.stdout).toContain("'triforge purge' deletes it");
    expect(result.stdout).not.toContain("0 chunks");
    expect(result.stdout).not.toContain("Indexed    never");
    expect(result.stdout).toMatch(/On disk +\d+ B in /);
  });

  test("an active project shows its files on disk, the index state and the newest errors", async () => {
    const { home, project, data } = setup();
    expect((await runBinary(["activate", "--project", project], { home })).code).toBe(0);
    mkdirSync(data, { recursive: true });
    writeFileSync(
      join(data, "chats.jsonl"),
      `${JSON.stringify({ ts: "2026-01-01T00:00:00Z", session_id: "s", role: "user", text: "hello", uuid: "u" })}\n`,
    );
    const errors = ["one", "two", "three", "four"].map(
      (word, i) => `2026-01-0${i + 1}T00:00:00.000Z [capture] failure ${word}\n  at stack line`,
    );
    writeFileSync(join(data, "errors.log"), `${errors.join("\n")}\n`);

    const result = await runBinary(["status"], { home, cwd: project });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("memory active (storage local, llm auto)");
    expect(result.stdout).toMatch(/On disk +\d+ B in .*\(.*chats\.jsonl \d+ B/);
    expect(result.stdout).toContain("Indexed    never — ");
    expect(result.stdout).toContain("Errors     3 recent:");
    expect(result.stdout).toContain("[capture] failure four");
    expect(result.stdout).not.toContain("failure one");

    const asJson = JSON.parse((await runBinary(["status", "--json", "--project", project], { home })).stdout);
    expect(asJson).toMatchObject({ project, active: true, storage: "local", chunks: 0, lastIndexed: null });
    expect(asJson.disk.files.map((f: { name: string }) => f.name).sort()).toEqual([
      "chats.jsonl",
      "errors.log",
    ]);
    expect(asJson.recentErrors).toHaveLength(3);
  });
});

describe("triforge status with storage insforge and no InsForge settings", () => {
  test("activate says what to set; status names the backend", async () => {
    const { home, project } = setup();
    const env = { INSFORGE_BASE_URL: "", INSFORGE_API_KEY: "" };
    const activated = await runBinary(["activate", "--project", project, "--storage", "insforge"], {
      home,
      env,
    });
    expect(activated.code).toBe(0);
    expect(activated.stderr).toContain(
      "warning: storage insforge needs INSFORGE_BASE_URL and INSFORGE_API_KEY (the project's admin key), or insforge.baseUrl in .triforge/config.json; until then memory is indexed on this machine only",
    );
    const result = await runBinary(["status", "--project", project], { home, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("memory active (storage insforge, llm auto)");
    const asJson = JSON.parse(
      (await runBinary(["status", "--json", "--project", project], { home, env })).stdout,
    );
    expect(asJson).toMatchObject({ storage: "insforge", storedIn: "insforge" });
  });
});

describe("triforge status after indexing", () => {
  test("counts what the indexer stored and says no LLM was paid for", async () => {
    const { home, project, data } = setup();
    const env = { TRIFORGE_LLM: "none" };
    expect((await runBinary(["activate", "--project", project], { home, env })).code).toBe(0);
    mkdirSync(data, { recursive: true });
    const turn = (role: string, text: string, i: number) =>
      JSON.stringify({ ts: `2026-01-01T00:00:0${i}Z`, session_id: "s1", role, text, uuid: `u${i}` });
    const lines = [
      turn("user", "We chose SQLite in WAL mode for the local store.", 1),
      turn("assistant", "Agreed: SQLite with WAL, one writer at a time.", 2),
    ];
    writeFileSync(join(data, "chats.jsonl"), `${lines.join("\n")}\n`);
    const indexed = await runBinary(["index", "--project", project], { home, env });
    expect(indexed.code).toBe(0);

    const status = JSON.parse(
      (await runBinary(["status", "--json", "--project", project], { home, env })).stdout,
    );
    expect(status.chunks).toBeGreaterThan(0);
    expect(status.nodes).toBeGreaterThan(status.chunks);
    expect(status.lastIndexed).not.toBeNull();
    expect(status.disk.files.map((f: { name: string }) => f.name)).toContain("memory.db");
    const text = (await runBinary(["status", "--project", project], { home, env })).stdout;
    expect(text).toMatch(/Memory +\d+ chunks from 1 sessions; graph \d+ nodes, \d+ edges/);
    expect(text).toContain("LLM spend  none (no LLM calls recorded)");
  });
});

describe("triforge dump", () => {
  test("prints summary.md as it is", async () => {
    const { home, project, data } = setup();
    mkdirSync(data, { recursive: true });
    const summary = "## 2026-01-02 · session abc\nDecided: Postgres for the event store.\n";
    writeFileSync(join(data, "summary.md"), summary);
    const result = await runBinary(["dump", "--project", project], { home });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(summary);
  });

  test("active without a summary: exit 1 and what to do", async () => {
    const { home, project } = setup();
    mkdirSync(join(project, ".triforge"));
    writeFileSync(join(project, ".triforge", "config.json"), "{}");
    const result = await runBinary(["dump", "--project", project], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("no summary yet for");
    // The project path holds a space: the printed command still names it as one argument.
    expect(pastedArgv(result.stderr)).toEqual(["index", "--project", project]);
  });

  test("an inactive project without a summary is told to activate, not to index (index refuses it)", async () => {
    const { home, project } = setup();
    const result = await runBinary(["dump", "--project", project], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("memory is not active for");
    expect(pastedArgv(result.stderr)).toEqual(["activate", "--project", project]);
  });
});

describe("triforge purge", () => {
  test("without a terminal it asks for --yes and deletes nothing; with --yes the store goes", async () => {
    const { home, project, data } = setup();
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, "chats.jsonl"), "{}\n");
    const refused = await runBinary(["purge", "--project", project], { home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("without confirmation: pass --yes");
    expect(existsSync(join(data, "chats.jsonl"))).toBe(true);

    const purged = await runBinary(["purge", "--project", project, "--yes"], { home });
    expect(purged.code).toBe(0);
    expect(purged.stdout).toContain("Purged the memory of");
    expect(existsSync(data)).toBe(false);
    const again = await runBinary(["purge", "--project", project, "--yes"], { home });
    expect(again.stdout).toContain("nothing to purge");
  });

  test("it waits for a running indexer instead of deleting under it", async () => {
    const { home, project, data } = setup();
    mkdirSync(data, { recursive: true });
    // A lock held by this (living) test process on this host.
    const { hostname } = await import("node:os");
    writeFileSync(
      join(data, "index.lock"),
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        nonce: "n",
        purpose: "index",
        since: new Date().toISOString(),
      }),
    );
    const result = await runBinary(["purge", "--project", project, "--yes"], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("indexer is running");
    expect(existsSync(join(data, "index.lock"))).toBe(true);
  });
});

describe("triforge doctor", () => {
  test("after install and activate every check passes; a moved binary and a damaged store each get their fix", async () => {
    const { home, project, data } = setup();
    // The configs point at a copy of the binary, which we then remove: "the binary moved".
    const copy = join(home, "old place", "triforge");
    mkdirSync(join(copy, ".."), { recursive: true });
    writeFileSync(copy, await Bun.file(await compiledBinary()).bytes());
    chmodSync(copy, 0o755);
    const env = {
      TRIFORGE_BINARY: copy,
      XDG_CONFIG_HOME: undefined,
      CODEX_HOME: undefined,
      CLAUDE_CONFIG_DIR: undefined,
    };
    expect((await runBinary(["install"], { home, env })).code).toBe(0);
    expect((await runBinary(["activate", "--project", project], { home, env })).code).toBe(0);
    mkdirSync(data, { recursive: true });
    const db = new Database(join(data, "memory.db"));
    db.run("PRAGMA journal_mode = WAL"); // as the store keeps it
    db.run("CREATE TABLE t (x)");
    db.close();

    const healthy = await runBinary(["doctor", "--project", project], { home, env });
    // Checking the store leaves no SQLite side files behind (a read-only handle cannot remove them).
    expect(readdirSync(data).filter((name) => name.startsWith("memory.db"))).toEqual(["memory.db"]);
    expect(healthy.stdout).toContain("ok    Claude Code MCP server: ~/.claude.json → ");
    expect(healthy.stdout).toContain("ok    SessionStart hook: ");
    expect(healthy.stdout).toContain("ok    SessionEnd hook: ");
    expect(healthy.stdout).toContain("passes quick_check");
    expect(healthy.code).toBe(0);

    rmSync(copy);
    writeFileSync(join(data, "memory.db"), "this is not a database, just bytes where one should be");
    const broken = await runBinary(["doctor", "--project", project], { home, env });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(
      /FAIL {2}Claude Code MCP server: .* starts .*old place\/triforge, which is missing or not executable\n {6}fix: run 'triforge install' \(again, if the binary moved\)/,
    );
    expect(broken.stdout).toMatch(
      /FAIL {2}Stop hook: .*old place\/triforge is missing or not executable\n {6}fix: run `triforge activate --project /,
    );
    expect(broken.stdout).toMatch(
      /FAIL {2}memory store: .*memory\.db.*\n {6}fix: move .*memory\.db away and run `triforge index --project /,
    );
    const fixes = broken.stdout.split("\n").filter((line) => line.includes("fix: "));
    const hookFix = fixes.find((line) => line.includes("triforge activate")) ?? "";
    expect(pastedArgv(hookFix)).toEqual(["activate", "--project", project]);
    const storeFix = fixes.find((line) => line.includes("triforge index")) ?? "";
    expect(pastedArgv(storeFix)).toEqual(["index", "--project", project]);
    // `move <file> away`: the file as one shell word too.
    const moved = /move (.*) away/.exec(storeFix)?.[1] ?? "";
    const word = Bun.spawnSync(["sh", "-c", `printf '%s' ${moved}`]).stdout.toString();
    expect(word).toBe(join(data, "memory.db"));
  });

  test("a project config that does not parse, or names no LLM setting, fails its check with the fix", async () => {
    const { home, project } = setup();
    const env = { XDG_CONFIG_HOME: undefined, CODEX_HOME: undefined, CLAUDE_CONFIG_DIR: undefined };
    expect((await runBinary(["activate", "--project", project], { home, env })).code).toBe(0);
    const config = join(project, ".triforge", "config.json");
    const configCheck = async () => {
      const result = await runBinary(["doctor", "--json", "--project", project], { home, env });
      const checks = JSON.parse(result.stdout) as {
        name: string;
        ok: boolean;
        detail: string;
        fix?: string;
      }[];
      return { code: result.code, check: checks.find((c) => c.name === "project config") };
    };
    expect((await configCheck()).check).toMatchObject({ ok: true });

    writeFileSync(config, '{"storage": "local",');
    const unparsed = await configCheck();
    expect(unparsed.code).toBe(1);
    expect(unparsed.check?.ok).toBe(false);
    expect(unparsed.check?.detail).toContain("config.json");
    expect(unparsed.check?.fix).toContain('"llm": "auto"');

    writeFileSync(config, '{"llm": "antropic"}');
    const typo = await configCheck();
    expect(typo.code).toBe(1);
    expect(typo.check?.detail).toContain('llm is "antropic", expected one of auto, none, anthropic');

    // Every bad value is named, not only the LLM setting (the same check as `status`).
    writeFileSync(config, '{"storage": "s3", "exclude": "secret"}');
    const values = await configCheck();
    expect(values.code).toBe(1);
    expect(values.check?.detail).toContain('storage is "s3", expected one of local, postgres, insforge');
    expect(values.check?.detail).toContain('exclude is "secret", expected a list of strings');
  });

  test("a data directory that is not a writable folder fails its check, with the fix", async () => {
    const { home, project } = setup();
    const notAFolder = join(home, "a file");
    writeFileSync(notAFolder, "");
    const result = await runBinary(["doctor", "--json", "--project", project], {
      home,
      env: { TRIFORGE_HOME: notAFolder },
    });
    const checks = JSON.parse(result.stdout) as { name: string; ok: boolean; detail: string; fix?: string }[];
    const check = checks.find((c) => c.name === "data directory");
    expect(check?.ok).toBe(false);
    expect(check?.detail).toContain("is not a writable folder");
    expect(check?.fix).toContain("TRIFORGE_HOME");
    expect(result.code).toBe(1);
  });

  test("not installed: the fix says to run install", async () => {
    const { home, project } = setup();
    const result = await runBinary(["doctor", "--json", "--project", project], {
      home,
      env: { CLAUDE_CONFIG_DIR: undefined },
    });
    const checks = JSON.parse(result.stdout) as { name: string; ok: boolean; fix?: string }[];
    expect(checks.find((c) => c.name === "Claude Code MCP server")).toMatchObject({
      ok: false,
      fix: "run 'triforge install' (again, if the binary moved)",
    });
    expect(result.code).toBe(1);
  });
});
