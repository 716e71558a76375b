/** `index`, `recall` and `forget` through the compiled binary, with an isolated data directory. */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBinary, tempDir } from "./support/helpers.ts";

const home = tempDir("triforge-memory-cli-");
const dataHome = join(home, ".claude", "triforge");

/** An active project and its data folder under the isolated TRIFORGE_HOME the binary will use. */
async function projectWithLog(name: string): Promise<{ root: string; dataDir: string }> {
  const root = join(home, name);
  mkdirSync(join(root, ".triforge"), { recursive: true });
  writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify({ llm: "none" }));
  process.env.TRIFORGE_HOME = dataHome;
  const { projectDataDir } = await import("../src/home/paths.ts");
  const dataDir = projectDataDir(root);
  mkdirSync(dataDir, { recursive: true });
  const lines = [
    {
      ts: "2025-04-01T09:00:00Z",
      session_id: "cli-1",
      role: "user",
      text: "Why is buildIndex slow on big repos?",
      uuid: "c1",
    },
    {
      ts: "2025-04-01T09:01:00Z",
      session_id: "cli-1",
      role: "assistant",
      text: "buildIndex re-reads every file; I added a stat cache in src/search/walk.ts.",
      uuid: "c2",
    },
    {
      ts: "2025-04-02T09:00:00Z",
      session_id: "cli-2",
      role: "user",
      text: "Let's pick a colour for the dashboard header.",
      uuid: "c3",
    },
    {
      ts: "2025-04-02T09:01:00Z",
      session_id: "cli-2",
      role: "assistant",
      text: "Teal it is, set in src/ui/theme.css.",
      uuid: "c4",
    },
  ];
  writeFileSync(join(dataDir, "chats.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  return { root, dataDir };
}

function chunks(dataDir: string): number {
  if (!existsSync(join(dataDir, "memory.db"))) return 0;
  const db = new Database(join(dataDir, "memory.db"), { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM chunks").get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

describe("triforge index / recall / forget", () => {
  test("index --background returns at once, quietly, and a detached indexer does the work", async () => {
    const { root, dataDir } = await projectWithLog("bg");
    const { code, stdout, stderr } = await runBinary(["index", `--project=${root}`, "--background"], {
      home,
    });
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toBe("");
    // The hook has returned; the detached child finishes on its own.
    const deadline = Date.now() + 30_000;
    while (chunks(dataDir) < 2 && Date.now() < deadline) await Bun.sleep(50);
    expect(chunks(dataDir)).toBe(2);
    while (existsSync(join(dataDir, "index.lock")) && Date.now() < deadline) await Bun.sleep(50);
    expect(readFileSync(join(dataDir, "summary.md"), "utf8")).toContain("## 2025-04-01 · session cli-1");
  }, 40_000);

  test("index while another indexer holds the lock says so on stdout and exits 0", async () => {
    const { root, dataDir } = await projectWithLog("busy");
    const { tryLock } = await import("../src/memory/lock.ts");
    const lock = tryLock(join(dataDir, "index.lock"), "test indexer");
    expect(lock).toBeDefined();
    try {
      const busy = await runBinary(["index", `--project=${root}`], { home });
      expect(busy.code).toBe(0);
      expect(busy.stdout).toContain(`another indexer is running for ${root}`);
      expect(busy.stderr).toBe("");
    } finally {
      lock?.release();
    }
  });

  test("index in the foreground reports what it did; recall prints wrapped excerpts and JSON", async () => {
    const { root } = await projectWithLog("fg");
    const indexed = await runBinary(["index", `--project=${root}`], { home });
    expect(indexed.code).toBe(0);
    // The report is the command's output: on stdout, with nothing on stderr when all went well.
    expect(indexed.stdout).toBe(
      `Indexed ~/fg: 4 new turns from 2 sessions, stored as 2 excerpts; knowledge graph by the local extractor (no LLM).\n`,
    );
    expect(indexed.stderr).toBe("");
    const text = await runBinary(["recall", "why is buildIndex slow", "--project", root, "--top-k", "1"], {
      home,
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toStartWith("<triforge-recalled-memory");
    expect(text.stdout).toContain("stat cache in src/search/walk.ts");
    expect(text.stdout).not.toContain("Teal");
    const json = await runBinary(
      ["recall", "dashboard colour", "--project", root, "--mode", "bm25", "--json"],
      { home },
    );
    const parsed = JSON.parse(json.stdout);
    expect(parsed.hits[0]).toMatchObject({ session_id: "cli-2", role: "user+assistant", source: "bm25" });
    // --speaker keeps one side's own words.
    const asked = await runBinary(
      ["recall", "buildIndex slow", "--project", root, "--speaker", "user", "--json"],
      { home },
    );
    const userHits = JSON.parse(asked.stdout).hits as { role: string; text: string }[];
    expect(userHits.length).toBeGreaterThan(0);
    expect(userHits.every((hit) => hit.role === "user")).toBe(true);
    expect(userHits[0].text).toContain("Why is buildIndex slow");
    const bad = await runBinary(["recall", "x", "--project", root, "--speaker", "bob"], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--speaker must be user or assistant");
  }, 60_000);

  test("forget removes a session; recall no longer finds it", async () => {
    const { root, dataDir } = await projectWithLog("forget");
    await runBinary(["index", `--project=${root}`], { home });
    const forgot = await runBinary(["forget", "--session", "cli-1", `--project=${root}`], { home });
    expect(forgot.code).toBe(0);
    expect(forgot.stdout).toContain("Forgot session cli-1: 1 excerpt and 2 lines of the chat log removed.");
    expect(readFileSync(join(dataDir, "chats.jsonl"), "utf8")).not.toContain("buildIndex");
    const after = await runBinary(["recall", "buildIndex", "--project", root, "--json"], { home });
    expect(JSON.parse(after.stdout).hits.every((h: { session_id: string }) => h.session_id !== "cli-1")).toBe(
      true,
    );
  }, 60_000);

  test("forget leaves no copy of the session's text in the store's files (free pages, WAL)", async () => {
    const { root, dataDir } = await projectWithLog("forget-bytes");
    await runBinary(["index", `--project=${root}`], { home });
    const storeBytes = () =>
      ["memory.db", "memory.db-wal"]
        .map((name) => join(dataDir, name))
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file).toString("latin1"))
        .join("");
    expect(storeBytes().includes("stat cache in src/search/walk.ts")).toBe(true);
    expect((await runBinary(["forget", "--session", "cli-1", `--project=${root}`], { home })).code).toBe(0);
    // SQLite keeps deleted rows in free pages until they are reused: a forgotten secret would stay readable.
    expect(storeBytes().includes("stat cache in src/search/walk.ts")).toBe(false);
    expect(storeBytes().includes("Teal it is")).toBe(true);
  }, 60_000);

  test("clear errors: inactive project, bad mode, missing session", async () => {
    const inactive = join(home, "inactive");
    mkdirSync(inactive, { recursive: true });
    const index = await runBinary(["index", `--project=${inactive}`], { home });
    expect(index.code).toBe(1);
    expect(index.stderr).toContain("memory is not active");
    expect((await runBinary(["index", `--project=${inactive}`, "--background"], { home })).code).toBe(0);
    const recall = await runBinary(["recall", "x", "--project", inactive], { home });
    expect(recall.code).toBe(0);
    expect(recall.stdout).toContain("No memory found: memory is not active");
    const mode = await runBinary(["recall", "x", "--mode", "fuzzy"], { home });
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain("--mode must be one of");
    expect((await runBinary(["forget"], { home })).code).toBe(2);
  }, 60_000);

  test("forget refuses a session id the project has never seen unless --force", async () => {
    const { root, dataDir } = await projectWithLog("forget-typo");
    await runBinary(["index", `--project=${root}`], { home });
    const typo = await runBinary(["forget", "--session", "cli-l", `--project=${root}`], { home });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("no session cli-l");
    expect(typo.stderr).toContain("triforge dump --project");
    expect(typo.stderr).toContain("--force");
    const before = readFileSync(join(dataDir, "chats.jsonl"), "utf8");
    const forced = await runBinary(["forget", "--session", "cli-l", `--project=${root}`, "--force"], {
      home,
    });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("nothing stored for it");
    expect(readFileSync(join(dataDir, "chats.jsonl"), "utf8")).toBe(before);
  }, 60_000);
});
