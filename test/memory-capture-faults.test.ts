/**
 * The capture faults an attack run found (issue 18 items 1, 5, 6), each as it was reproduced, against
 * the compiled binary: a torn append, lost or damaged capture state, a transcript shrunk and restored,
 * a FIFO where a file should be, and a 4 GB sparse transcript.
 */
import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { assistantLine, expectClean, hookInput, setup, userLine } from "./support/capture-helpers.ts";
import { compiledBinary, runBinary } from "./support/helpers.ts";

/** A conversation of `n` exchanges of one session, as transcript lines. */
function conversation(session: string, n: number, from = 0): string {
  let text = "";
  for (let i = from; i < from + n; i++)
    text +=
      userLine(`${session}-u${i}`, `question ${i} of ${session}`, session) +
      assistantLine(`${session}-a${i}`, `${session}-m${i}`, `answer ${i} of ${session}`, session);
  return text;
}

/** Runs the binary with a guard: a capture that blocks is killed, and the test fails on it. */
async function runGuarded(args: string[], home: string, stdin: string, guardMs = 15_000) {
  const proc = Bun.spawn([await compiledBinary(), ...args], {
    env: { ...process.env, HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") },
    stdin: new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  let killed = false;
  const guard = setTimeout(() => {
    killed = true;
    proc.kill(9);
  }, guardMs);
  // The child's own peak, sampled from /proc while it runs: resourceUsage().maxRSS also counts the
  // forked copy of this test process before exec, so it grows with whatever the suite ran before.
  let maxRSS = 0;
  const sampler = setInterval(() => {
    maxRSS = Math.max(maxRSS, peakResidentBytes(proc.pid));
  }, 5);
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearInterval(sampler);
  clearTimeout(guard);
  return { code, stdout, killed, maxRSS };
}

/** VmHWM of a running process (its peak resident set since exec), 0 once it has gone. */
function peakResidentBytes(pid: number): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

describe("capture faults (issue 18)", () => {
  test("a torn last line of chats.jsonl is fenced, never glued to; the killed capture's turn comes back", async () => {
    const { home, project, transcripts, dataDir, capture } = setup();
    const killed = join(transcripts, "K.jsonl");
    const next = join(transcripts, "L.jsonl");
    writeFileSync(killed, userLine("k1", "the turn whose append was cut", "K"));
    writeFileSync(next, userLine("l1", "the next session's turn", "L"));
    // What a capture killed mid-append leaves: a line without its newline.
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "chats.jsonl"), '{"ts":"x","session_id":"K","role":"user","text":"half');

    expectClean(await capture(hookInput("L", next, project)));
    const lines = readFileSync(join(dataDir, "chats.jsonl"), "utf8").split("\n");
    expect(lines[0]).toBe('{"ts":"x","session_id":"K","role":"user","text":"half');
    expect(JSON.parse(lines[1]).uuid).toBe("l1");
    // The log does not hold K's turn (its line is torn), so K's next capture writes it.
    expectClean(await capture(hookInput("K", killed, project)));
    expect(
      readFileSync(join(dataDir, "chats.jsonl"), "utf8")
        .split("\n")
        .slice(1)
        .filter((l) => l)
        .map((l) => JSON.parse(l).uuid),
    ).toEqual(["l1", "k1"]);

    const index = await runBinary(["index", `--project=${project}`], { home, env: { TRIFORGE_LLM: "none" } });
    expect(index.code).toBe(0);
    // Both turns reach the store; the torn line is the one line skipped.
    expect(index.stdout).toMatch(/\b2 new turns from 2 sessions\b/);
    expect(index.stdout).toMatch(/\b1 unreadable line\b/);
    // An append to a log that already ends with a newline adds no empty line.
    appendFileSync(next, userLine("l2", "one more", "L"));
    expectClean(await capture(hookInput("L", next, project)));
    const log = readFileSync(join(dataDir, "chats.jsonl"), "utf8");
    expect(log).not.toContain("\n\n");
    expect(log.split("\n").filter((l) => l).length).toBe(4);
  }, 60_000);

  test("a whole record left without its newline (a writer killed between the two) is not written again", async () => {
    const { project, transcripts, dataDir, chats, errors, capture } = setup();
    const killed = join(transcripts, "K.jsonl");
    writeFileSync(
      killed,
      userLine("k1", "written, all but its newline", "K") + userLine("k2", "never written", "K"),
    );
    mkdirSync(dataDir, { recursive: true });
    const record = {
      ts: "2026-02-01T10:00:00.000Z",
      session_id: "K",
      role: "user",
      text: "written, all but its newline",
      uuid: "k1",
    };
    writeFileSync(join(dataDir, "chats.jsonl"), JSON.stringify(record));
    expectClean(await capture(hookInput("K", killed, project)));
    expect(chats().map((r) => r.uuid)).toEqual(["k1", "k2"]);
    expect(errors()).toBe("");
  }, 60_000);

  test("a transcript shrunk and restored is not captured twice", async () => {
    const { project, transcripts, chats, errors, capture } = setup();
    const transcript = join(transcripts, "s.jsonl");
    const full = conversation("s", 40);
    writeFileSync(transcript, full);
    expectClean(await capture(hookInput("s", transcript, project)));
    expect(chats()).toHaveLength(80);

    // Cut to its first 10 lines, captured, then restored with one more exchange.
    writeFileSync(transcript, full.split("\n").slice(0, 10).join("\n") + "\n");
    expectClean(await capture(hookInput("s", transcript, project)));
    writeFileSync(transcript, full + conversation("s", 1, 40));
    expectClean(await capture(hookInput("s", transcript, project)));
    const uuids = chats().map((r) => r.uuid);
    expect(uuids).toHaveLength(82);
    expect(new Set(uuids).size).toBe(82);
    expect(uuids.slice(-2)).toEqual(["s-u40", "s-a40"]);
    expect(errors()).toBe("");
  }, 60_000);

  test("losing or damaging capture's state re-reads without duplicating or losing a turn", async () => {
    const { project, transcripts, dataDir, chats, errors, capture } = setup();
    const a = join(transcripts, "a.jsonl");
    const b = join(transcripts, "b.jsonl");
    writeFileSync(a, conversation("a", 10));
    writeFileSync(b, conversation("b", 10));
    expectClean(await capture(hookInput("a", a, project)));
    expectClean(await capture(hookInput("b", b, project)));
    const state = join(dataDir, "capture");

    // The whole capture/ folder gone.
    rmSync(state, { recursive: true });
    appendFileSync(a, conversation("a", 1, 10));
    expectClean(await capture(hookInput("a", a, project)));
    expect(chats()).toHaveLength(42);

    // Half of the log's key cache, and the session's state damaged.
    const keys = join(state, "log-keys");
    truncateSync(keys, Math.floor(statSync(keys).size / 2));
    writeFileSync(join(state, "b.json"), '{"transcript":');
    appendFileSync(b, conversation("b", 1, 10));
    expectClean(await capture(hookInput("b", b, project)));

    // A state from before a rewrite of the log (its position no longer matches): the whole log's keys.
    writeFileSync(join(dataDir, "chats.jsonl"), readFileSync(join(dataDir, "chats.jsonl"), "utf8"));
    const saved = JSON.parse(readFileSync(join(state, "a.json"), "utf8"));
    writeFileSync(
      join(state, "a.json"),
      JSON.stringify({ ...saved, offset: 0, fingerprint: "0", logEnd: 17 }),
    );
    expectClean(await capture(hookInput("a", a, project)));

    const uuids = chats().map((r) => r.uuid);
    expect(uuids).toHaveLength(44);
    expect(new Set(uuids).size).toBe(44);
    for (const s of ["a", "b"]) for (let i = 0; i <= 10; i++) expect(uuids).toContain(`${s}-a${i}`);
    expect(errors()).toBe("");
  }, 60_000);

  test("a FIFO as transcript_path or summary.md blocks nothing and holds no lock", async () => {
    const { home, project, transcripts, dataDir, chats, errors, capture } = setup();
    const fifo = join(transcripts, "fifo.jsonl");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const other = join(transcripts, "other.jsonl");
    writeFileSync(other, userLine("o1", "captured while the FIFO capture runs", "other"));

    const [blocked, meanwhile] = await Promise.all([
      runGuarded(["capture", `--project=${project}`], home, JSON.stringify(hookInput("f", fifo, project))),
      capture(hookInput("other", other, project)),
    ]);
    expect(blocked.killed).toBe(false);
    expect(blocked.code).toBe(0);
    expect(blocked.stdout).toBe("");
    expectClean(meanwhile);
    expect(chats().map((r) => r.uuid)).toEqual(["o1"]);
    expect(errors()).toContain("fifo.jsonl is not a regular file");

    const summary = join(dataDir, "summary.md");
    expect(Bun.spawnSync(["mkfifo", summary]).exitCode).toBe(0);
    const prelude = await runGuarded(["prelude", `--project=${project}`], home, "");
    expect(prelude.killed).toBe(false);
    expect(prelude.code).toBe(0);
    expect(prelude.stdout).toBe("");
    expect(errors()).toContain("summary.md is not a regular file");
  }, 60_000);

  test("a 4 GB sparse transcript is read in bounded chunks: little memory, each capture within its budget", async () => {
    const { home, project, transcripts, chats, dataDir } = setup();
    const transcript = join(transcripts, "sparse.jsonl");
    writeFileSync(transcript, userLine("u1", "before the hole"));
    // 4 GB of holes: one line with no newline in it, then a real turn after it.
    const fd = openSync(transcript, "r+");
    ftruncateSync(fd, 4 * 1024 ** 3);
    closeSync(fd);
    appendFileSync(transcript, `\n${userLine("u2", "after the hole")}`);

    // How many captures it takes depends on how fast this machine reads (zero-filled pages cost
    // kernel time): each must go further than the one before, until u2 is read.
    const savedOffset = () =>
      JSON.parse(readFileSync(join(dataDir, "capture", "sp.json"), "utf8")).offset as number;
    const runs: { killed: boolean; code: number; maxRSS: number; offset: number }[] = [];
    while (!chats().some((r) => r.uuid === "u2")) {
      const run = await runGuarded(
        ["capture", `--project=${project}`],
        home,
        JSON.stringify(hookInput("sp", transcript, project)),
      );
      const offset = savedOffset();
      expect(run.killed).toBe(false);
      expect(run.code).toBe(0);
      if (runs.length) expect(offset).toBeGreaterThan(runs[runs.length - 1].offset);
      runs.push({ ...run, offset });
    }
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "u2"]);
    for (const r of runs) {
      // The chunk and the longest line read whole (64 MB) bound it, not the 4 GB.
      expect(r.maxRSS).toBeGreaterThan(0);
      expect(r.maxRSS).toBeLessThan(400 * 1024 ** 2);
    }
  }, 300_000);
});
