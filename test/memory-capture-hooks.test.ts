/**
 * Capture through all three hooks, whatever the CLI has written when each runs: Stop takes the reply
 * from its payload when the transcript does not hold it yet (Claude Code 2.1.197 runs it before the
 * transcript exists), SessionEnd (`index --background`) reads the transcript to its end before the
 * indexer starts, and SessionStart (`prelude`) catches up a session whose SessionEnd never ran.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assistantLine, expectClean, hookInput, setup } from "./support/capture-helpers.ts";
import { runBinary } from "./support/helpers.ts";

/** A Stop payload of CLI 2.1.197 and later: the reply's last text and the prompt it answers. */
function stopInput(session: string, transcript: string, cwd: string, reply: string, promptId: string) {
  return { ...hookInput(session, transcript, cwd), prompt_id: promptId, last_assistant_message: reply };
}

/** A user record of CLI 2.1.1xx and later: it names its prompt. */
function promptLine(uuid: string, text: string, promptId: string, session = "s1"): string {
  return `${JSON.stringify({ type: "user", uuid, promptId, isSidechain: false, sessionId: session, timestamp: "2026-02-01T10:00:00.000Z", message: { role: "user", content: text } })}\n`;
}

describe("capture across Stop, SessionEnd and SessionStart", () => {
  test("Stop before the transcript exists stores the payload's reply; the transcript read later adds only the rest", async () => {
    const { project, transcripts, dataDir, chats, errors, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    const reply = "Noted: blue-green deploys with a 10-minute soak.";
    expectClean(await capture(stopInput("s1", transcript, project, reply, "p1")));
    expect(chats().map((r) => [r.role, r.text])).toEqual([["assistant", reply]]);
    // The same Stop again (a retry) stores nothing more.
    expectClean(await capture(stopInput("s1", transcript, project, reply, "p1")));
    expect(chats()).toHaveLength(1);

    // The CLI writes the transcript after the hook returned: the prompt is new, the reply is not.
    writeFileSync(
      transcript,
      promptLine("u1", "We decided: blue-green deploys.", "p1") + assistantLine("a1", "m1", reply),
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => [r.role, r.text])).toEqual([
      ["assistant", reply],
      ["user", "We decided: blue-green deploys."],
    ]);

    // The next prompt's reply is in two records; the payload has the last one's text only.
    appendFileSync(transcript, promptLine("u2", "and the rollback?", "p2"));
    expectClean(
      await capture(stopInput("s1", transcript, project, "Part two: roll back by switching.", "p2")),
    );
    appendFileSync(
      transcript,
      assistantLine("a2", "m2", "Part one: keep the old colour.") +
        assistantLine("a3", "m2", "Part two: roll back by switching."),
    );
    expectClean(await capture(hookInput("s1", transcript, project)));
    expect(chats().map((r) => r.text)).toEqual([
      reply,
      "We decided: blue-green deploys.",
      "and the rollback?",
      "Part two: roll back by switching.",
      "Part one: keep the old colour.",
    ]);

    // All capture state lost, the last Stop retried: a re-read from the start finds all of it in the log.
    rmSync(join(dataDir, "capture"), { recursive: true });
    expectClean(
      await capture(stopInput("s1", transcript, project, "Part two: roll back by switching.", "p2")),
    );
    expect(chats()).toHaveLength(5);
    expect(errors()).toBe("");
  }, 60_000);

  test("Stop when the transcript already holds the reply stores it once, however often it runs", async () => {
    const { project, transcripts, dataDir, chats, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    const reply = "Done: the cache is warmed at start-up.";
    writeFileSync(transcript, promptLine("u1", "warm the cache", "p1") + assistantLine("a1", "m1", reply));
    for (let run = 0; run < 2; run++)
      expectClean(await capture(stopInput("s1", transcript, project, reply, "p1")));
    // Capture's state gone: the reply is known from the transcript part and the log.
    rmSync(join(dataDir, "capture"), { recursive: true });
    expectClean(await capture(stopInput("s1", transcript, project, reply, "p1")));
    expect(chats().map((r) => r.uuid)).toEqual(["u1", "a1"]);
  }, 60_000);

  test("SessionEnd reads the transcript to its end before the indexer starts, and closes the session", async () => {
    const { home, project, transcripts, dataDir, chats, capture } = setup();
    const transcript = join(transcripts, "s1.jsonl");
    const reply = "Agreed: Postgres for the event store.";
    expectClean(await capture(stopInput("s1", transcript, project, reply, "p1")));
    expect(readdirSync(join(dataDir, "capture", "open"))).toEqual(["s1.json"]);
    writeFileSync(
      transcript,
      promptLine("u1", "Use Postgres for the event store.", "p1") + assistantLine("a1", "m1", reply),
    );

    const end = await runBinary(["index", `--project=${project}`, "--background"], {
      home,
      stdin: JSON.stringify({ ...hookInput("s1", transcript, project), hook_event_name: "SessionEnd" }),
      env: { TRIFORGE_LLM: "none" },
    });
    expectClean(end);
    expect(chats().map((r) => r.text)).toEqual([reply, "Use Postgres for the event store."]);
    expect(readdirSync(join(dataDir, "capture", "open"))).toEqual([]);
    // The detached indexer it started indexes both.
    let status: { chunks?: number; indexing?: boolean } = {};
    for (let i = 0; i < 120 && !(status.chunks && !status.indexing); i++, await Bun.sleep(250))
      status = JSON.parse((await runBinary(["status", "--json", `--project=${project}`], { home })).stdout);
    expect(status.chunks).toBeGreaterThan(0);
  }, 60_000);

  test("SessionStart catches up a session whose SessionEnd never ran", async () => {
    const { home, project, transcripts, dataDir, chats, errors, capture } = setup();
    const crashed = join(transcripts, "crashed.jsonl");
    writeFileSync(crashed, promptLine("c1", "first question", "p1", "crashed"));
    expectClean(await capture(hookInput("crashed", crashed, project)));
    // Written after its last Stop; then the terminal was closed: no SessionEnd.
    appendFileSync(
      crashed,
      assistantLine("c2", "m1", "The answer the Stop hook never saw.", "crashed") +
        promptLine("c3", "a last question", "p2", "crashed"),
    );
    const start = await runBinary(["prelude", `--project=${project}`], {
      home,
      stdin: JSON.stringify({
        ...hookInput("next", join(transcripts, "next.jsonl"), project),
        hook_event_name: "SessionStart",
      }),
      env: { TRIFORGE_LLM: "none" },
    });
    expect(start.code).toBe(0);
    expect(chats().map((r) => r.uuid)).toEqual(["c1", "c2", "c3"]);
    expect(errors()).toBe("");
    // Still open (its transcript changed moments ago), so a later SessionStart looks again; nothing twice.
    expect(existsSync(join(dataDir, "capture", "open", "crashed.json"))).toBe(true);
    await runBinary(["prelude", `--project=${project}`], { home, env: { TRIFORGE_LLM: "none" } });
    expect(chats()).toHaveLength(3);
  }, 60_000);
});
