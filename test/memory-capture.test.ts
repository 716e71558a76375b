import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { parseTranscript } from "../src/memory/transcript.ts";
import {
  assistantLine,
  expectClean,
  FIXTURES,
  hookInput,
  setup,
  toolLine,
  userLine,
} from "./support/capture-helpers.ts";

describe("triforge capture", () => {
  test("an inactive project exits 0 at once and writes nothing", async () => {
    const { home, project, transcripts, capture } = setup({ active: false });
    const transcript = join(transcripts, "s1.jsonl");
    writeFileSync(transcript, userLine("u1", "hello"));
    expectClean(await capture(hookInput("s1", transcript, project)));
    // Not even garbage on stdin makes an inactive project write an errors.log.
    expectClean(await capture("not json"));
    expect(existsSync(join(home, ".claude", "triforge"))).toBe(false);
  });

  test("captures a real transcript's prose once, however often it runs", async () => {
    const { project, transcripts, chats, errors, capture } = setup();
    const transcript = join(transcripts, "de3b8b19.jsonl");
    copyFileSync(join(FIXTURES, "drmaciver-python-to-rust-port.jsonl"), transcript);
    const expected = parseTranscript(readFileSync(transcript, "utf8")).turns;
    expect(expected.length).toBe(17);

    expectClean(await capture(hookInput("de3b8b19", transcript, project)));
    expectClean(await capture(hookInput("de3b8b19", transcript, project)));
    const records = chats();
    expect(records.map((r) => [r.uuid, r.role])).toEqual(expected.map((t) => [t.uuid, t.role]));
    expect(records.every((r) => r.session_id === "de3b8b19")).toBe(true);
    expect(records[0].ts).toBe(expected[0].timestamp!);
    expect(records[0].text.startsWith("Port this Python project to Rust.")).toBe(true);
    expect(records.at(-1)!.text).toBe(expected.at(-1)!.text);
    expect(errors()).toBe("");
  });

  test("appended turns are captured incrementally; a half-written line waits for the next capture", async () => {
    const { project, transcripts, chats, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    writeFileSync(
      transcript,
      userLine("u1", "add a login page") + toolLine("a0", "m1") + assistantLine("a1", "m1", "Added it."),
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.text)).toEqual(["add a login page", "Added it."]);

    const next = userLine("u2", "now style it");
    appendFileSync(
      transcript,
      next + assistantLine("a2", "m2", "Styled.") + userLine("u3", "and test it").slice(0, 40),
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.text)).toEqual(["add a login page", "Added it.", "now style it", "Styled."]);

    appendFileSync(
      transcript,
      userLine("u3", "and test it").slice(40) + assistantLine("a3", "m3", "Tested."),
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1", "u2", "a2", "u3", "a3"]);
  });

  test("a truncated or replaced transcript is re-read without duplicating what was captured", async () => {
    const { project, transcripts, dataDir, chats, errors, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    const first = userLine("u1", "first question") + assistantLine("a1", "m1", "First answer.");
    writeFileSync(
      transcript,
      first + userLine("u2", "second question") + assistantLine("a2", "m2", "Second answer."),
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats()).toHaveLength(4);

    // Truncated to a shorter file with one new turn: the size shrank below the saved offset.
    writeFileSync(transcript, first + userLine("u5", "after a rewrite"));
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1", "u2", "a2", "u5"]);

    // Replaced by a longer file whose old bytes differ: only the fingerprint can tell.
    const replaced =
      userLine("x1", "a different conversation, same session id") + first + userLine("u5", "after a rewrite");
    writeFileSync(transcript, replaced + assistantLine("a6", "m6", "Answer in the replacement."));
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1", "u2", "a2", "u5", "x1", "a6"]);

    // The same session moved to another transcript path: read from its start, nothing repeated.
    const moved = join(transcripts, "moved.jsonl");
    writeFileSync(moved, `${readFileSync(transcript, "utf8")}${userLine("u7", "after the move")}`);
    expectClean(await capture(hookInput("s1", moved, project)));
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1", "u2", "a2", "u5", "x1", "a6", "u7"]);

    // The saved offset lost: everything is re-read, the keys file still prevents duplicates.
    const stateDir = join(dataDir, "capture");
    for (const file of readdirSync(stateDir))
      if (file.endsWith(".json")) writeFileSync(join(stateDir, file), "{broken");
    expectClean(await capture(hookInput("s1", moved, project)));
    expect(chats()).toHaveLength(8);
    expect(errors()).toBe("");
  });

  test("a resumed session, whose transcript starts with the old session's records, adds only its new turns", async () => {
    const { project, transcripts, chats, capture } = setup();
    const old = join(transcripts, "old.jsonl");
    const history =
      userLine("u1", "plan the migration", "old") + assistantLine("a1", "m1", "Here is the plan.", "old");
    writeFileSync(old, history);
    expectClean(await capture(hookInput("old", old, project)));
    // `claude --resume` writes a new session's file that begins with the old records, uuids unchanged.
    const resumed = join(transcripts, "new.jsonl");
    writeFileSync(resumed, history + userLine("u2", "continue with step two", "new"));
    expectClean(await capture(hookInput("new", resumed, project)));
    expect(chats().map((r) => [r.session_id, r.uuid])).toEqual([
      ["old", "u1"],
      ["old", "a1"],
      ["new", "u2"],
    ]);
  });

  test("malformed transcript lines are skipped and the rest captured", async () => {
    const { project, transcripts, chats, errors, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    writeFileSync(
      transcript,
      `${userLine("u1", "before")}{"type":"user",\n\u0000\u0001garbage\n[]\n${assistantLine("a1", "m1", "after")}`,
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.text)).toEqual(["before", "after"]);
    expect(errors()).toBe("");
  });

  test("secrets never reach chats.jsonl", async () => {
    const { project, transcripts, chats, dataDir, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    const awsKey = "AKIAZ4Q7RT2MX9BVLW3K";
    const githubToken = "ghp_R8mK2vX9qL4wZ7nB3tY6pJ1sD5fH0cG8aE2u";
    const pem =
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----";
    writeFileSync(
      transcript,
      userLine("u1", `deploy with AWS_ACCESS_KEY_ID=${awsKey} and push with ${githubToken}`) +
        assistantLine("a1", "m1", `I will not store this key:\n${pem}`),
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    const records = chats();
    expect(records).toHaveLength(2);
    const onDisk = readFileSync(join(dataDir, "chats.jsonl"), "utf8");
    for (const secret of [
      awsKey,
      githubToken,
      "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    ]) {
      expect(onDisk).not.toContain(secret);
    }
    expect(records[0].text).toContain("[REDACTED:");
    expect(records[0].text).toContain("deploy with");
    expect(records[1].text).toContain("[REDACTED:");
  });

  test("without --project the hook's cwd (a subfolder) finds the project", async () => {
    const { project, transcripts, chats, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    writeFileSync(transcript, userLine("u1", "from a subfolder"));
    expectClean(await capture(hookInput("s1", transcript, join(project, "src")), []));
    expect(chats().map((r) => r.text)).toEqual(["from a subfolder"]);
  });

  test("--project may name a folder inside the project", async () => {
    const { project, transcripts, chats, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    writeFileSync(transcript, userLine("u1", "walks up"));
    expectClean(await capture(hookInput("s1", transcript, "/"), [`--project=${join(project, "src")}`]));
    expect(chats().map((r) => r.text)).toEqual(["walks up"]);
  });

  test("a transcript not written yet is no error; garbage on stdin: exit 0, nothing on stdout, one errors.log line", async () => {
    const { project, transcripts, errors, chats, capture } = setup();
    // Claude Code 2.1.197 runs Stop before it writes the transcript: the next capture reads it.
    const missing = await capture(hookInput("s1", join(transcripts, "nope.jsonl"), project));
    expectClean(missing);
    expect(errors()).toBe("");

    // Garbage input may carry a secret: errors.log (on disk) gets its size, never its text.
    expectClean(
      await capture("{this is not json ghp_0123456789abcdefghijABCDEFGHIJ012345 password=hunter2xyz"),
    );
    expect(errors()).toMatch(/\[capture\] hook input is not JSON \(\d+ characters\)/);
    expect(errors()).not.toContain("hunter2xyz");
    expect(errors()).not.toContain("ghp_0123456789");
    expectClean(await capture({ transcript_path: "/x.jsonl" }));
    expect(errors()).toMatch(/\[capture\] hook input has no session_id/);
    expectClean(await capture(""));
    expect(
      errors()
        .split("\n")
        .filter((l) => l.includes("[capture]")),
    ).toHaveLength(3);
    expect(chats()).toEqual([]);
  });

  test("a lock left by a dead process is taken over; a live holder makes capture give up, losing nothing", async () => {
    const { project, transcripts, dataDir, chats, errors, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    writeFileSync(transcript, userLine("u1", "one"));
    mkdirSync(dataDir, { recursive: true });
    const lock = join(dataDir, "chats.lock");
    const holder = (pid: number) =>
      JSON.stringify({
        pid,
        host: hostname(),
        nonce: `n${pid}`,
        purpose: "forget",
        since: new Date().toISOString(),
      });

    // Above any pid a process can have (Linux's PID_MAX_LIMIT is 2^22; macOS stops below 100,000): a
    // pid taken from a process that just exited can be given again on a busy machine.
    const dead = 2 ** 22 + 1;
    writeFileSync(lock, holder(dead));
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.text)).toEqual(["one"]);
    expect(existsSync(lock)).toBe(false);

    // Held by a live process (this test) with a fresh heartbeat: capture waits, gives up, logs, exits 0.
    writeFileSync(lock, holder(process.pid));
    appendFileSync(transcript, userLine("u2", "two"));
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(errors()).toContain(`chats.lock is held by forget (pid ${process.pid}`);
    expect(chats()).toHaveLength(1);

    // The same holder, silent for longer than any holder may be: taken over, and "two" is not lost.
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.text)).toEqual(["one", "two"]);
    expect(existsSync(lock)).toBe(false);
    // Three captures, one of them waiting out its 3 s for the lock: past bun's 5 s default on a busy box.
  }, 30_000);

  test("8 processes × 200 captures in parallel: no interleaved, lost or duplicated line", async () => {
    const { project, transcripts, dataDir, chats, errors, capture } = setup();
    const WORKERS = 8;
    const ROUNDS = 200;
    // Workers w and w+4 share a session (and its transcript): the same session stopping twice at once.
    const sessions = Array.from({ length: WORKERS / 2 }, (_, s) => ({
      id: `session-${s}`,
      path: join(transcripts, `session-${s}.jsonl`),
    }));
    for (const s of sessions) writeFileSync(s.path, "");
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        const session = sessions[w % sessions.length];
        for (let round = 0; round < ROUNDS; round++) {
          appendFileSync(
            session.path,
            userLine(`w${w}-r${round}`, `worker ${w} round ${round} ${"x".repeat(round)}`.trim(), session.id),
          );
          const result = await capture(hookInput(session.id, session.path, project));
          if (result.code !== 0 || result.stdout !== "")
            throw new Error(`worker ${w} round ${round}: ${JSON.stringify(result)}`);
        }
      }),
    );
    const records = chats();
    expect(errors()).toBe("");
    expect(records).toHaveLength(WORKERS * ROUNDS);
    const uuids = new Set(records.map((r) => r.uuid));
    expect(uuids.size).toBe(WORKERS * ROUNDS);
    for (let w = 0; w < WORKERS; w++)
      for (let r = 0; r < ROUNDS; r++) expect(uuids.has(`w${w}-r${r}`)).toBe(true);
    for (const record of records) {
      const [, w, r] = /^w(\d+)-r(\d+)$/.exec(record.uuid)!;
      expect(record.text).toBe(`worker ${w} round ${r} ${"x".repeat(Number(r))}`.trim());
      expect(record.session_id).toBe(`session-${Number(w) % sessions.length}`);
    }
    expect(existsSync(join(dataDir, "chats.lock"))).toBe(false);
  }, 180_000);
});
