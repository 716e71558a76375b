import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseTranscript, type TranscriptTurn, userProse } from "../src/memory/transcript.ts";
import { SHARED } from "./support/helpers.ts";

const FIXTURES = join(SHARED, "fixtures/transcripts");

function fixtureFiles(dir = FIXTURES): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? fixtureFiles(join(dir, e.name)) : e.name.endsWith(".jsonl") ? [join(dir, e.name)] : [],
  );
}

function parseFixture(name: string) {
  return parseTranscript(readFileSync(join(FIXTURES, name), "utf8"));
}

/** A long text is pinned by its start, its end and its length; a short one exactly. */
type ExpectedText = string | { start: string; end: string; length: number };
type ExpectedTurn = ["u" | "a", string, ExpectedText];

function expectTurns(turns: TranscriptTurn[], expected: ExpectedTurn[]) {
  expect(turns.map((t) => `${t.role[0]} ${t.uuid.slice(0, 8)}`)).toEqual(
    expected.map(([r, u]) => `${r} ${u}`),
  );
  turns.forEach((turn, i) => {
    const text = expected[i][2];
    if (typeof text === "string") expect(turn.text).toBe(text);
    else {
      expect(turn.text.startsWith(text.start)).toBe(true);
      expect(turn.text.endsWith(text.end)).toBe(true);
      expect(turn.text.length).toBe(text.length);
    }
  });
}

/** Every fixture file, with the turns it must yield, written out. */
const EXPECTED: Record<string, ExpectedTurn[]> = {
  "drmaciver-hello-world-script.jsonl": [
    ["u", "10dcdc4f", 'Write a shell script called hello.sh that prints "Hello world" and run it.'],
    [
      "a",
      "4dc526d5",
      "Done. I created `hello.sh` with a shebang and an echo command, made it executable, and ran it successfully.",
    ],
    [
      "a",
      "e86efd37",
      {
        start: "I have fully completed the task.\n\n**Summary:** Created `/tmp/tmp74wiyi",
        end: "cript outputs `Hello world` as expected.",
        length: 203,
      },
    ],
  ],
  "spotter-short.jsonl": [
    ["u", "7d48cbd2", "mix phx.server doesnt seem to start"],
    // The reply's first record is a bare "\n\n" text block; the turn is keyed by the record with words.
    ["a", "d4ad15f7", "Let me check the project structure and try running the server to see the error."],
  ],
  "extra/spotter-tool_heavy.jsonl": [
    ["u", "5440873c", "start phoenix in background"],
    [
      "a",
      "77c5c1c5",
      "Phoenix server is starting in the background.\n\nLet me check the MCP servers status.",
    ],
    [
      "u",
      "f643538d",
      "scrolling back in xterm.js still does not work (maybe because outer web catches it)? websearch xterm.js tmux interactions",
    ],
  ],
  "drmaciver-python-to-rust-port.jsonl": [
    [
      "u",
      "7303a99b",
      {
        start: "Port this Python project to Rust. Create a standalone Rust library (no",
        end: " me questions if you need clarification.",
        length: 345,
      },
    ],
    [
      "a",
      "e5d50b27",
      "Now I have a complete picture of the project. Let me create a todo list and start porting to Rust.",
    ],
    ["a", "82c42c48", "Now let me create the Rust library structure with all modules."],
    [
      "a",
      "c76d3b76",
      {
        start: 'For the list_utils module, I need to handle the "flatten one level dee',
        end: " either a single value or a nested list.",
        length: 186,
      },
    ],
    ["a", "dddbabbb", "Now let me run the tests to verify everything compiles and passes."],
    [
      "a",
      "d19aa83a",
      "All tests pass. Now let me set up coverage testing with `cargo-llvm-cov` to ensure 100% coverage.",
    ],
    [
      "a",
      "d1a4d6a0",
      {
        start: "We have 100% line coverage. There's one uncovered region in math_utils",
        end: "t to verify the lines are fully covered.",
        length: 181,
      },
    ],
    [
      "a",
      "9268d961",
      {
        start: "We have 100% line coverage (which is what matters for coverage require",
        end: "Now let me update the Justfile for Rust.",
        length: 276,
      },
    ],
    [
      "a",
      "bc436f19",
      "Now let me delete the Python source files (keeping the Justfile which we already updated).",
    ],
    [
      "a",
      "7cb4e1f3",
      "I need to delete the Python source files (not the plugin scripts). Let me delete the Python files in `src/` and `tests/`.",
    ],
    [
      "a",
      "5403b1b6",
      "Let me also clean up the Python config files (pyproject.toml and uv.lock) since this is now a Rust project.",
    ],
    ["a", "13f9602c", "Now let me verify everything is working by running the Justfile check command."],
    [
      "a",
      "67822299",
      "All tests pass with 100% line coverage. Let me also run the other Justfile commands to ensure they work.",
    ],
    ["a", "f739af6c", "Let me verify the final project structure."],
    [
      "a",
      "4fed83d1",
      {
        start: "The port is complete. Here's a summary:\n\n## Summary\n\nI ported the Pyth",
        end: "`\n- Kept the Justfile (updated for Rust)",
        length: 1389,
      },
    ],
    ["a", "a46a7a6c", "I need to commit the changes before finishing."],
    [
      "a",
      "612a68c7",
      "The Python project has been fully ported to Rust. All 5 modules are implemented with 100% line coverage, tests pass, and the changes are committed.",
    ],
  ],
  "dkimuson-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": [
    // A typed slash command keeps its arguments; its isMeta expansion is dropped.
    ["u", "62e0bdc0", "/orchestrator create TODO app by Next.js"],
    [
      "a",
      "6648f69a",
      {
        start: "I'll help you create a TODO app using Next.js by breaking this into pa",
        end: " commands and then decomposing the task.",
        length: 188,
      },
    ],
    [
      "a",
      "27f01a59",
      "Since no custom commands are available, I'll decompose the TODO app creation into independent subtasks and execute them in parallel using the Task tool.",
    ],
    ["a", "9cfc1ad1", "Now I'll execute the subtasks in parallel to create the TODO app efficiently:"],
    ["a", "15bd2aa0", "Now I'll execute the remaining tasks to complete the TODO app:"],
    [
      "a",
      "fa393e1e",
      {
        start: "## ✅ TODO App Creation Complete\n\nI've successfully created a fully fun",
        end: "nctionality, and modern design patterns.",
        length: 1549,
      },
    ],
    ["u", "2e38973c", "Thanks! Please update CLAUDE.md for current changes"],
    [
      "a",
      "dd82b6d0",
      "I'll create a CLAUDE.md file to document the current TODO app project structure and key information for future reference.",
    ],
    [
      "a",
      "5ac34508",
      {
        start: "CLAUDE.md has been created with comprehensive documentation of the TOD",
        end: "ment commands, and architecture details.",
        length: 175,
      },
    ],
  ],
  "spotter-subagent.jsonl": [
    [
      "u",
      "cc2c7130",
      {
        start: "/handgemacht:create-beads websearch to learn how to fastest setup cred",
        end: "lixir)\n\nMaybe there are igniter scripts?",
        length: 214,
      },
    ],
    ["a", "a23ccc80", "I'll research the setup options and then draft beads for you."],
    [
      "a",
      "bee5e9da",
      "Let me check the current project state and whether any of these are already configured.",
    ],
    ["a", "f403b5a6", "Let me check if any of these packages have Igniter installers."],
    [
      "a",
      "5ac64fa3",
      {
        start: "Good - I have enough context now. Key findings:\n\n- **No Igniter instal",
        end: "efore drafting beads, I need to clarify:",
        length: 435,
      },
    ],
    ["a", "34a4dc6a", "Now let me draft the beads."],
    [
      "a",
      "c0f1f108",
      {
        start: "Good. Let me write the plan for your approval.\n\n## Proposed Beads\n\n###",
        end: "ll three tools\n> - All changes committed",
        length: 3407,
      },
    ],
    ["u", "091e0ff4", "create the beads"],
    [
      "a",
      "2d63528d",
      {
        start: "## Beads Created\n\nEpic `spotter-0p7`: Setup Code Quality Tools (Credo,",
        end: "|\n\nRun `bd ready` to see available work.",
        length: 318,
      },
    ],
  ],
  // `/init` has no arguments: nothing the person said beyond the command.
  "extra/dkimuson-1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": [
    [
      "a",
      "b96a37ed",
      "I'll analyze the codebase and create a CLAUDE.md file to help future instances of Claude Code work effectively with this repository.",
    ],
    [
      "a",
      "938cdc9a",
      {
        start: "The directory appears to be empty. This is a completely new/empty repo",
        end: " foundation for future development work.",
        length: 229,
      },
    ],
    [
      "a",
      "549b3502",
      {
        start: "I've created a basic CLAUDE.md file for this empty repository. Since t",
        end: " in once you start building the project.",
        length: 369,
      },
    ],
  ],
  "extra/dkimuson-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": [
    ["u", "5877060c", "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"],
    [
      "a",
      "83d3fe67",
      "I'll help you update the CLAUDE.md file to the latest state. Let me first analyze the current project structure and then update the documentation accordingly.",
    ],
    ["a", "b45d9b9e", "Now I'll update the CLAUDE.md file with the latest project information:"],
    [
      "a",
      "e9bd5ce8",
      {
        start:
          "CLAUDE.mdファイルを最新の状態にアップデートしました。主な更新内容：\n\n**技術スタック更新:**\n- Next.js 15.5.2",
        end: "新:**\n- デフォルトポート3000に修正\n- プロジェクトの実際の場所を反映",
        length: 430,
      },
    ],
  ],
  "extra/drmaciver-coverage-test-fix.jsonl": [
    [
      "u",
      "1b4951f2",
      "Add a function called multiply_numbers(a: int, b: int) -> int that multiplies two numbers together. Add a test for it.",
    ],
    ["a", "244eec3a", "I'll start by exploring the codebase to understand its structure."],
    [
      "a",
      "2107dc18",
      "I can see the structure. I'll add the `multiply_numbers` function to `math_utils.py` and a test for it in `test_math_utils.py`.",
    ],
    [
      "a",
      "b77721fb",
      {
        start: "Done. I've added:\n\n1. **`multiply_numbers` function** in `src/math_uti",
        end: "tive numbers, negative numbers, and zero",
        length: 269,
      },
    ],
    ["a", "66866fb1", "I need to run quality checks and commit the changes before finishing."],
    ["a", "5a51e3c6", "Tests pass. Now I'll stage and commit the changes."],
    [
      "a",
      "a244fd3e",
      "Done. I've added the `multiply_numbers` function and its test, verified the tests pass, and committed the changes.",
    ],
    [
      "a",
      "8e5482ac",
      "I need to add the untracked files to `.gitignore` - these are generated files that shouldn't be tracked.",
    ],
    [
      "a",
      "c80c766f",
      {
        start: "The `.gitignore` was already committed (a hook or linter committed it)",
        end: " properly ignored. The task is complete.",
        length: 166,
      },
    ],
  ],
  "extra/drmaciver-stop-hook-reflection-first-stop.jsonl": [
    [
      "u",
      "80c4feb9",
      'Read test.txt and change the content to "modified content". Commit the change, then stop.',
    ],
    [
      "a",
      "88fbfdf0",
      "Now I'll commit the change. First, let me initialize a git repo and check the status.",
    ],
    [
      "a",
      "f268986e",
      {
        start: 'Done. I read `test.txt`, changed its content from "original content" t',
        end: '"Update test.txt with modified content".',
        length: 174,
      },
    ],
    [
      "a",
      "28ecbbf6",
      {
        start: "I have fully completed the task. Here's a summary:\n\n**What was done:**",
        end: "successfully created (commit `93bff95`).",
        length: 360,
      },
    ],
  ],
  "generated-cc2.1.332/53b0899a-834b-4c80-bc60-816976f158e1.jsonl": [
    ["u", "2ea14073", "Please store a note about the staging deploy"],
    ["a", "16a293ed", "Stored the note. DONE"],
    ["u", "874d70cf", "/compact keep the notes"],
    ["u", "293bc117", "hello again"],
    ["a", "8dfe2db6", "DONE"],
  ],
  "generated-cc2.1.332/a5ef2493-da38-4fd4-b5d2-6edd62a9b144.jsonl": [
    ["u", "93b1fe1d", "Please store a note about the staging deploy"],
    ["a", "48b8f0c1", "Stored the note. DONE"],
    ["u", "4f870cf5", "hello again"],
    ["a", "772276bf", "DONE"],
    // The reply to the Stop hook's feedback is prose; the feedback itself is not.
    ["a", "9cbc4cae", "DONE"],
    ["u", "17209864", "/compact keep the notes"],
  ],
  "generated-cc2.1.332/d6151af9-3745-41e3-87a6-2600305244ae.jsonl": [
    ["u", "197b9d74", "Please store a note about the staging deploy"],
    ["a", "c9473a8a", "Stored the note. DONE"],
  ],
  // Subagent transcripts: every record is a sidechain, so nothing is the conversation's.
  "spotter-258c7280-ae70-4798-800f-63464d01a85d_subagents_agent-a881341.jsonl": [],
  "extra/spotter-258c7280-ae70-4798-800f-63464d01a85d_subagents_agent-acompact-fffbd0.jsonl": [],
};

/** The 2.7 MB session with an auto-compaction: too long to list, pinned by counts, ends and contents. */
const LONG_SESSION = "spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl";

describe("parseTranscript over every fixture", () => {
  test("every fixture file has an expectation", () => {
    const files = fixtureFiles().map((f) => relative(FIXTURES, f));
    expect(files.sort()).toEqual([...Object.keys(EXPECTED), LONG_SESSION].sort());
  });

  for (const [name, expected] of Object.entries(EXPECTED)) {
    test(`${name}: ${expected.length} turns, written out`, () => {
      const { turns, malformed } = parseFixture(name);
      expect(malformed).toBe(0);
      expectTurns(turns, expected);
    });
  }

  test(`${LONG_SESSION}: 2 user and 85 assistant turns, compaction and notifications dropped`, () => {
    const { turns, malformed } = parseFixture(LONG_SESSION);
    expect(malformed).toBe(0);
    expect(turns.filter((t) => t.role === "user").map((t) => t.text)).toEqual([
      "Implement spotter-gqc",
      "did you push?",
    ]);
    expect(turns.filter((t) => t.role === "assistant")).toHaveLength(85);
    expect(turns[0]).toMatchObject({
      role: "user",
      uuid: "1a2252ee-fde8-4a8f-a103-4028c39c47ce",
      timestamp: expect.any(String),
    });
    expect(turns[1].text).toBe(
      'Let me start by understanding what "spotter-gqc" means and what work is planned.',
    );
    const last = turns.at(-1)!;
    expect(last.role).toBe("assistant");
    expect(
      last.text.startsWith("Yes — everything is pushed and clean:\n\n```\nOn branch spotter-gqc\n"),
    ).toBe(true);
    const texts = turns.map((t) => t.text);
    // The first reply after the auto-compaction is kept; the compaction summary is not a user turn.
    expect(texts).toContain(
      "Continuing with gqc.6 — I need to add tests for the `close_review_session` event, then run quality checks, commit and push.",
    );
    // A reply whose only text is "\n\n" (the rest being tool calls) yields no turn at all.
    expect(texts.every((t) => t === t.trim() && t.length > 0)).toBe(true);
    for (const injected of [
      "This session is being continued",
      "<task-notification>",
      "Read the output file to retrieve",
      "[Request interrupted",
    ]) {
      expect(texts.some((t) => t.includes(injected))).toBe(false);
    }
    // Thinking blocks are dropped (this one opens the session's first reply).
    expect(texts.some((t) => t.includes("The user wants me to implement"))).toBe(false);
  });

  for (const file of fixtureFiles()) {
    const name = relative(FIXTURES, file);
    test(`${name}: no turn is plumbing (tool I/O, thinking, meta, sidechain, compaction, hook text)`, () => {
      const raw = readFileSync(file, "utf8");
      const { turns } = parseTranscript(raw);
      const kept = new Map<string, { type: string; isSidechain?: boolean; isMeta?: boolean }>();
      const dropped: string[] = [];
      for (const line of raw.split("\n")) {
        if (!line) continue;
        const record = JSON.parse(line);
        if (typeof record.uuid === "string") kept.set(record.uuid, record);
        const content = record.message?.content;
        const plumbing = record.isSidechain || record.isMeta || record.isCompactSummary;
        if (typeof content === "string" && plumbing) dropped.push(content.trim());
        if (Array.isArray(content)) {
          for (const block of content) {
            if (block.type === "thinking") dropped.push(String(block.thinking).trim());
            if (block.type === "tool_use") dropped.push(JSON.stringify(block.input));
            if (block.type === "tool_result")
              dropped.push(
                typeof block.content === "string" ? block.content.trim() : JSON.stringify(block.content),
              );
            if (block.type === "text" && plumbing) dropped.push(block.text.trim());
          }
        }
      }
      const prefixes = dropped.filter((d) => d.length >= 20).map((d) => d.slice(0, 60));
      for (const turn of turns) {
        const source = kept.get(turn.uuid);
        expect(source?.type).toBe(turn.role);
        expect(source?.isSidechain).toBeFalsy();
        expect(source?.isMeta).toBeFalsy();
        expect(prefixes.some((p) => turn.text.startsWith(p))).toBe(false);
        for (const marker of [
          "<system-reminder>",
          "<command-name>",
          "<local-command-",
          "Stop hook feedback",
          "CCLAB_MARKER",
        ]) {
          expect(turn.text).not.toContain(marker);
        }
      }
      expect(new Set(turns.map((t) => t.uuid)).size).toBe(turns.length);
    });
  }
});

/** One transcript line, shaped like the CLI writes it. */
function line(record: Record<string, unknown>): string {
  return JSON.stringify({
    isSidechain: false,
    sessionId: "s1",
    timestamp: "2026-01-01T00:00:00.000Z",
    ...record,
  });
}
const user = (uuid: string, content: unknown, extra: Record<string, unknown> = {}) =>
  line({ type: "user", uuid, message: { role: "user", content }, ...extra });
const assistant = (uuid: string, id: string, content: unknown[], extra: Record<string, unknown> = {}) =>
  line({
    type: "assistant",
    uuid,
    message: { id, role: "assistant", model: "claude-opus-4-6", content },
    ...extra,
  });
const text = (t: string) => ({ type: "text", text: t });

describe("parseTranscript on hand-made records", () => {
  test("assistant text over several records of one message.id is one turn keyed by the first", () => {
    const { turns } = parseTranscript(
      [
        user("u1", "why does the build fail?"),
        assistant("a1", "msg_1", [{ type: "thinking", thinking: "hmm", signature: "x" }]),
        assistant("a2", "msg_1", [text("Looking at the log first.")]),
        assistant("a3", "msg_1", [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "make" } }]),
        user("u2", [{ type: "tool_result", tool_use_id: "t1", content: "make: *** [all] Error 1" }]),
        assistant("a4", "msg_1", [text("The linker cannot find libssl."), text("Install libssl-dev.")]),
        assistant("a5", "msg_2", [text("Done.")]),
      ].join("\n"),
    );
    expect(turns.map(({ uuid, role, text }) => ({ uuid, role, text }))).toEqual([
      { uuid: "u1", role: "user", text: "why does the build fail?" },
      {
        uuid: "a2",
        role: "assistant",
        text: "Looking at the log first.\n\nThe linker cannot find libssl.\n\nInstall libssl-dev.",
      },
      { uuid: "a5", role: "assistant", text: "Done." },
    ]);
    expect(turns[0]).toMatchObject({ sessionId: "s1", timestamp: "2026-01-01T00:00:00.000Z" });
  });

  test("malformed lines are skipped and counted; blank lines are not malformed", () => {
    const { turns, malformed } = parseTranscript(
      [
        user("u1", "first"),
        "{not json",
        "",
        "   ",
        "[1,2]",
        "null",
        '"a string"',
        user("u2", "second"),
        '{"type":"user","uuid":"u3","mess',
      ].join("\n"),
    );
    expect(turns.map((t) => t.text)).toEqual(["first", "second"]);
    expect(malformed).toBe(5);
  });

  test("metadata records of every kind yield nothing", () => {
    const types = [
      "summary",
      "system",
      "progress",
      "queue-operation",
      "file-history-snapshot",
      "attachment",
      "ai-title",
      "custom-title",
      "last-prompt",
      "mode",
      "permission-mode",
      "cost-state",
      "atis-latch",
      "api-request",
      "api-request-blob",
      "api-request-shape",
      "tools-used",
      "some-future-kind",
    ];
    const records = types.map((type, i) =>
      line({
        type,
        uuid: `m${i}`,
        content: "text that is not prose",
        message: { role: "user", content: "not prose either" },
      }),
    );
    expect(parseTranscript(records.join("\n")).turns).toEqual([]);
  });

  test("sidechain, meta, compact-summary, synthetic and API-error records yield nothing", () => {
    const { turns } = parseTranscript(
      [
        user("u1", "subagent prompt", { isSidechain: true }),
        assistant("a1", "m1", [text("subagent reply")], { isSidechain: true }),
        user("u2", [text("expanded slash command body")], { isMeta: true }),
        user("u3", "Summary of the earlier conversation", {
          isCompactSummary: true,
          isVisibleInTranscriptOnly: true,
        }),
        line({
          type: "assistant",
          uuid: "a2",
          message: {
            id: "m2",
            role: "assistant",
            model: "<synthetic>",
            content: [text("No response requested.")],
          },
        }),
        assistant("a3", "m3", [text("API Error: 529 overloaded")], { isApiErrorMessage: true }),
      ].join("\n"),
    );
    expect(turns).toEqual([]);
  });

  test("injected wrappers are removed and the person's words kept", () => {
    const { turns } = parseTranscript(
      [
        user("u1", "fix the flaky test\n<system-reminder>\nThe user opened file x.ts\n</system-reminder>"),
        user("u2", [
          text("<ide_opened_file>The user opened src/a.ts</ide_opened_file>"),
          text("and rename it"),
          { type: "image", source: {} },
        ]),
        user("u3", "<bash-input>git status</bash-input>"),
        user("u4", "<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>"),
        user("u5", "<local-command-stdout>Set model to opus</local-command-stdout>"),
        user(
          "u6",
          "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
        ),
        user(
          "u7",
          "<command-message>review is running…</command-message>\n<command-name>review</command-name>\n<command-args>the auth module</command-args>",
        ),
        user(
          "u8",
          "<task-notification>\n<task-id>b1</task-id>\n</task-notification>\nRead the output file to retrieve the result: /tmp/x",
        ),
        user("u9", "keep <system-reminder>unclosed reminder"),
        user("u10", "why does my prompt show <command-name>/foo</command-name> literally?"),
      ].join("\n"),
    );
    expect(turns.map((t) => [t.uuid, t.text])).toEqual([
      ["u1", "fix the flaky test"],
      ["u2", "and rename it"],
      ["u7", "/review the auth module"],
      ["u9", "keep <system-reminder>unclosed reminder"],
      // Only a record that *is* a command wrapper is read as one; here the tags sit in a question.
      ["u10", "why does my prompt show <command-name>/foo</command-name> literally?"],
    ]);
  });

  test("hook feedback, interruptions and legacy compaction summaries are known by the CLI's own markers, not by words", () => {
    const { turns } = parseTranscript(
      [
        // 1.0.x wrote a Stop hook's feedback as a plain user record; 2.1.x adds isMeta.
        user("u1", "Stop hook feedback:\n- [~/.claude/hooks/check.sh]: tests failing\n"),
        user("u1b", "Stop hook feedback:\n[~/.claude/hooks/check.sh]: tests failing"),
        // 1.0.x flagged a UserPromptSubmit hook's output this way.
        user("u1c", "<user-prompt-submit-hook>ctx</user-prompt-submit-hook> extra", {
          isVisibleInTranscriptOnly: true,
        }),
        user("u3", [text("[Request interrupted by user]")]),
        user("u4", [text("[Request interrupted by user for tool use]")]),
        user(
          "u5",
          "This session is being continued from a previous conversation that ran out of context. The summary below…",
        ),
        // People write about hooks: none of these is the CLI's feedback.
        user("u6", "the stop hook feedback was wrong, please ignore it"),
        user("u7", "pre-commit hook error again: black fails on line 12"),
        user("u8", "PreToolUse:Bash hook error: blocked, why?"),
        user("u9", "Stop hook feedback: it keeps saying tests fail"),
        user("u10", "[Request interrupted by user] happens whenever I press Esc\ntwice"),
      ].join("\n"),
    );
    expect(turns.map((t) => t.uuid)).toEqual(["u6", "u7", "u8", "u9", "u10"]);
  });

  test("turns carry the prompt they belong to and the text of each record of a reply", () => {
    const { turns } = parseTranscript(
      [
        user("u1", "deploy it", { promptId: "p1" }),
        assistant("a1", "m1", [text("Part one.")]),
        assistant("a2", "m1", [{ type: "tool_use", id: "t", name: "Bash", input: {} }]),
        assistant("a3", "m1", [text("  Part two.\n")]),
        user("u2", "thanks", { promptId: "p2" }),
      ].join("\n"),
    );
    expect(turns.map((t) => [t.uuid, t.promptId, t.parts])).toEqual([
      ["u1", "p1", ["deploy it"]],
      ["a1", "p1", ["Part one.", "Part two."]],
      ["u2", "p2", ["thanks"]],
    ]);
  });

  test("userProse handles a megabyte of nested or unclosed tags in one pass", () => {
    const unclosed = "<system-reminder>".repeat(60_000);
    expect(userProse(unclosed)).toBe(unclosed);
    expect(userProse(`asked ${unclosed}</system-reminder> twice`)).toBe("asked  twice");
  });

  test("records without a uuid or with a non-text content are ignored", () => {
    const { turns } = parseTranscript(
      [
        JSON.stringify({ type: "user", message: { role: "user", content: "no uuid" } }),
        user("u1", 42),
        assistant("a1", "m1", [{ type: "text", text: 7 }, null, "loose string"]),
        line({ type: "assistant", uuid: "a2", message: null }),
      ].join("\n"),
    );
    expect(turns).toEqual([]);
  });
});
