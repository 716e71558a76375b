/**
 * A full disk, for real: the data directory lives on a small tmpfs filled to its last byte. Mounting
 * needs root (or CAP_SYS_ADMIN); elsewhere these tests are skipped and say why.
 */
import { afterAll, describe, expect, test } from "bun:test";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectKey } from "../src/home/paths.ts";
import { runBinary, tempDir } from "./support/helpers.ts";

const mounts: string[] = [];

/** A fresh 8 MB tmpfs, or undefined when this machine does not let us mount one. */
function smallDisk(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), "triforge-full-disk-"));
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir], { stderr: "pipe" });
  if (mounted.exitCode !== 0) return undefined;
  mounts.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of mounts) {
    Bun.spawnSync(["umount", "-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

const CAN_MOUNT = (() => {
  const probe = smallDisk();
  return probe !== undefined;
})();

/** Fills the file system holding `dir` with one file until a write fails; returns that file. */
function fill(dir: string): string {
  const filler = join(dir, "filler");
  const fd = openSync(filler, "w");
  const block = new Uint8Array(4096);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
  } finally {
    closeSync(fd);
  }
  return filler;
}

function transcriptLine(uuid: string, role: "user" | "assistant", text: string): string {
  const message =
    role === "user"
      ? { role, content: text }
      : { id: `m-${uuid}`, role, model: "claude-opus-4-6", content: [{ type: "text", text }] };
  return `${JSON.stringify({ type: role, uuid, isSidechain: false, sessionId: "s1", timestamp: "2026-02-01T10:00:00.000Z", message })}\n`;
}

describe.skipIf(!CAN_MOUNT)("a full disk (tmpfs; needs permission to mount)", () => {
  test("capture fails open and loses nothing: the turns it could not write arrive once there is room", async () => {
    const disk = smallDisk()!;
    const home = tempDir("triforge-full-home-");
    const data = join(disk, "triforge");
    const project = join(home, "app");
    mkdirSync(join(project, ".triforge"), { recursive: true });
    await Bun.write(join(project, ".triforge", "config.json"), "{}\n");
    const transcript = join(home, "session.jsonl");
    const env = { TRIFORGE_HOME: data };
    const capture = () =>
      runBinary(["capture", `--project=${project}`], {
        home,
        env,
        stdin: JSON.stringify({
          session_id: "s1",
          transcript_path: transcript,
          cwd: project,
          hook_event_name: "Stop",
        }),
      });
    const chats = () => {
      const text = readFileSync(join(data, projectKey(project), "chats.jsonl"), "utf8");
      expect(text.endsWith("\n")).toBe(true); // never a half-written record
      return text
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as { uuid: string; text: string });
    };

    await Bun.write(
      transcript,
      transcriptLine("u1", "user", "Which database for the store?") +
        transcriptLine("a1", "assistant", "We'll use SQLite for the store."),
    );
    expect(await capture()).toMatchObject({ code: 0, stdout: "" });
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1"]);

    const filler = fill(disk);
    await Bun.write(
      transcript,
      readFileSync(transcript, "utf8") +
        transcriptLine("u2", "user", "And the retry policy?") +
        transcriptLine("a2", "assistant", "Three retries with jittered backoff."),
    );
    const full = await capture();
    expect(full).toMatchObject({ code: 0, stdout: "" }); // the session goes on
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1"]);

    rmSync(filler);
    expect(await capture()).toMatchObject({ code: 0, stdout: "" });
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1", "u2", "a2"]);
  });

  test("the memory indexer on a full disk fails with the reason and keeps the chat log; with room it indexes all", async () => {
    const disk = smallDisk()!;
    const home = tempDir("triforge-full-home-");
    const data = join(disk, "triforge");
    const project = join(home, "app");
    mkdirSync(join(project, ".triforge"), { recursive: true });
    await Bun.write(join(project, ".triforge", "config.json"), '{"llm": "none"}\n');
    const chatLog = join(data, projectKey(project), "chats.jsonl");
    const records = Array.from({ length: 40 }, (_, i) => ({
      ts: `2026-02-01T10:${String(i).padStart(2, "0")}:00.000Z`,
      session_id: `s${Math.floor(i / 10)}`,
      role: i % 2 ? "assistant" : "user",
      text: `Turn ${i}: the retry policy for upload number ${i} uses jittered backoff and ${"detail ".repeat(40)}`,
      uuid: `u${i}`,
    }));
    await Bun.write(chatLog, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const before = readFileSync(chatLog, "utf8");
    const env = { TRIFORGE_HOME: data };
    const filler = fill(disk);
    const full = await runBinary(["index", `--project=${project}`], { home, env });
    expect(full.code).toBe(1);
    expect(full.stderr.toLowerCase()).toMatch(/disk|space|full/);
    expect(readFileSync(chatLog, "utf8")).toBe(before); // the source of truth is untouched

    rmSync(filler);
    const indexed = await runBinary(["index", `--project=${project}`], { home, env });
    expect(indexed.code).toBe(0);
    const recalled = await runBinary(
      ["recall", "upload number 37 retry policy", `--project=${project}`, "--json"],
      {
        home,
        env,
      },
    );
    expect(JSON.parse(recalled.stdout).hits.length).toBeGreaterThan(0);
  });

  test("code-index says the disk is full, exit 1, and leaves no partial index behind; with room it indexes", async () => {
    const disk = smallDisk()!;
    const home = tempDir("triforge-full-home-");
    const repo = join(home, "repo");
    // Repositories: code search indexes projects only.
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, "src"), { recursive: true });
    for (let i = 0; i < 40; i++)
      await Bun.write(
        join(repo, "src", `module${i}.ts`),
        Array.from(
          { length: 30 },
          (_, j) => `export function total${i}x${j}(a: number) {\n  return a * ${j};\n}\n`,
        ).join(""),
      );
    const env = { TRIFORGE_HOME: join(disk, "triforge") };
    // A first small index extracts the model's cache; then only the index itself no longer fits.
    const tiny = join(home, "tiny");
    mkdirSync(join(tiny, ".git"), { recursive: true });
    await Bun.write(join(tiny, "a.ts"), "export const a = 1;\n");
    expect((await runBinary(["code-index", tiny], { home, env })).code).toBe(0);
    const filler = fill(disk);
    const full = await runBinary(["code-index", repo], { home, env });
    expect(full.code).toBe(1);
    expect(full.stderr).toContain("no space left on device");
    const leftovers = (dir: string): string[] =>
      existsSync(dir)
        ? readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".tmp"))
        : [];
    expect(leftovers(join(disk, "triforge", "code"))).toEqual([]);

    rmSync(filler);
    const indexed = await runBinary(["code-index", repo, "--json"], { home, env });
    expect(indexed.code).toBe(0);
    expect(JSON.parse(indexed.stdout).files).toBe(40);
  });
});
