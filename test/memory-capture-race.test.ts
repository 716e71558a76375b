/**
 * Capture against a Claude Code that writes its transcript late (test/support/fake-claude-code.ts):
 * after each Stop hook has returned, in pieces, and not at all before the first one. The hooks are
 * the ones `triforge activate` writes, run as the CLI runs them, with the compiled binary.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { setup } from "./support/capture-helpers.ts";
import { compiledBinary, ROOT, runBinary, spawnCollect } from "./support/helpers.ts";

const FAKE_CLAUDE = join(ROOT, "test", "support", "fake-claude-code.ts");

const SESSION_ONE = [
  {
    prompt: "We decided: invoices are numbered per tenant, never globally.",
    reply: ["Noted: per-tenant invoice numbers."],
  },
  {
    prompt: "And the rounding rule?",
    reply: ["Round half to even on the line total.", "Then sum the lines; never round the sum again."],
  },
  { prompt: "Thanks, that is all.", reply: ["Glad to help."] },
];

const SESSION_TWO = [
  { prompt: "Switch the queue to Redis streams.", reply: ["Switched: the queue is Redis streams now."] },
  // Only the last record's text is in the Stop payload: the first is only ever in the transcript.
  {
    prompt: "Keep the dead-letter list?",
    reply: ["Yes: failed jobs go to a dead-letter stream.", "After 5 tries."],
  },
];

describe("capture with a Claude Code that writes its transcript late", () => {
  test("every turn once, whatever the transcript held when each hook ran; a crashed session is caught up at the next start", async () => {
    const { home, project, chats, errors } = setup({ active: false });
    const binary = await compiledBinary();
    const activate = await runBinary(["activate", `--project=${project}`, "--no-import"], {
      home,
      env: { TRIFORGE_BINARY: binary },
    });
    expect(activate.code).toBe(0);
    const env = {
      ...process.env,
      HOME: home,
      TRIFORGE_HOME: join(home, ".claude", "triforge"),
      TRIFORGE_LLM: "none",
    };
    const session = (id: string, turns: unknown, ...flags: string[]) =>
      spawnCollect(["bun", FAKE_CLAUDE, project, id, JSON.stringify(turns), ...flags], { env, cwd: project });

    const one = await session("session-one", SESSION_ONE);
    expect(one.stderr).toBe("");
    expect(one.code).toBe(0);
    const said = (turns: typeof SESSION_ONE) =>
      turns.flatMap((t) => [`user:${t.prompt}`, ...t.reply.map((r) => `assistant:${r}`)]).sort();
    const logged = (id: string) =>
      chats()
        .filter((r) => r.session_id === id)
        .flatMap((r) =>
          (r.role === "assistant" ? r.text.split("\n\n") : [r.text]).map((t) => `${r.role}:${t}`),
        )
        .sort();
    expect(logged("session-one")).toEqual(said(SESSION_ONE));

    // Killed after its last reply: no SessionEnd, and that reply was written after its Stop hook.
    const two = await session("session-two", SESSION_TWO, "--no-session-end");
    expect(two.code).toBe(0);
    expect(logged("session-two")).not.toEqual(said(SESSION_TWO));
    // The next session's start reads it to the end.
    const three = await session("session-three", []);
    expect(three.code).toBe(0);
    expect(logged("session-two")).toEqual(said(SESSION_TWO));
    expect(logged("session-one")).toEqual(said(SESSION_ONE));
    expect(new Set(chats().map((r) => r.uuid)).size).toBe(chats().length);
    expect(errors()).toBe("");
  }, 120_000);
});
