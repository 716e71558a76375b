/** Output for people: did-you-mean, one spelling of -k, plain recall on a terminal, colour rules, counts. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SNIPPET_OPTIONS } from "../src/cli/code-options.ts";
import { defineCommand, parseCommandArgs, UsageError } from "../src/cli/command.ts";
import recallCommand, { plainRecalled } from "../src/cli/commands/recall.ts";
import { terminalStatus } from "../src/cli/progress.ts";
import { colourWanted, styleFor } from "../src/cli/style.ts";
import { closest, editDistance } from "../src/cli/suggest.ts";
import { count } from "../src/cli/words.ts";
import { compiledBinary, runBinary, spawnCollect, tempDir } from "./support/helpers.ts";

// The dispatcher tests may build the binary first.
setDefaultTimeout(60_000);

const COMMANDS = ["install", "search", "recall", "status", "index", "forget", "doctor", "code-index"];

describe("did you mean", () => {
  test("a swap, a missing or an extra letter is one edit; a word like nothing known gets no guess", () => {
    expect(editDistance("serach", "search")).toBe(1);
    expect(closest("serach", COMMANDS)).toBe("search");
    expect(closest("recal", COMMANDS)).toBe("recall");
    expect(closest("stauts", COMMANDS)).toBe("status");
    expect(closest("codeindex", COMMANDS)).toBe("code-index");
    expect(closest("frobnicate", COMMANDS)).toBeUndefined();
    expect(closest("x", COMMANDS)).toBeUndefined();
  });

  test("a mistyped option is a usage error naming the option meant", () => {
    const command = defineCommand({
      usage: "t",
      description: "t",
      options: { project: { type: "string", description: "p" }, json: { type: "boolean", description: "j" } },
      run: () => 0,
    });
    expect(() => parseCommandArgs(command, ["--projcet", "p"])).toThrow(
      new UsageError("unknown option '--projcet'; did you mean '--project'?"),
    );
    expect(() => parseCommandArgs(command, ["--zzzzzz"])).toThrow(
      new UsageError("unknown option '--zzzzzz'"),
    );
  });

  test("the binary answers a mistyped command with the one meant, and an unknown one with the usage", async () => {
    const home = tempDir();
    const typo = await runBinary(["serach", "x"], { home });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      "triforge: unknown command 'serach'; did you mean 'search'? ('triforge --help' lists every command)\n",
    );
    const unknown = await runBinary(["frobnicate"], { home });
    expect(unknown.stderr).toContain("Usage: triforge <command>");
  });
});

describe("one spelling for each option", () => {
  test("-k and --top-k are the same option in search, find-related and recall", () => {
    for (const options of [SNIPPET_OPTIONS, recallCommand.options!]) {
      const command = defineCommand({
        usage: "t",
        description: "t",
        positionals: true,
        options,
        run: () => 0,
      });
      expect(parseCommandArgs(command, ["-k", "3", "q"]).values["top-k"]).toBe("3");
      expect(parseCommandArgs(command, ["--top-k=4", "q"]).values["top-k"]).toBe("4");
      expect(parseCommandArgs(command, ["--top-k", "5", "q"]).values["top-k"]).toBe("5");
    }
  });

  test("every command's usage spells a value as '--option <arg>', the form help prints", async () => {
    const { commands } = await import("../src/cli/commands.ts");
    // Hooks and servers keep '--project=<path>', the form their configured command lines use.
    for (const [name, entry] of Object.entries(commands)) {
      if (entry.group === "Hooks and servers") continue;
      const usage = (await entry.load()).default.usage;
      expect({ name, usage }).toEqual({ name, usage: usage.replace(/--([a-z-]+)=</g, "--$1 <") });
    }
  });
});

describe("colour and plain text", () => {
  test("colour only on a terminal, never with NO_COLOR or TERM=dumb, always with FORCE_COLOR", () => {
    expect(colourWanted({ isTTY: true }, {})).toBe(true);
    expect(colourWanted({ isTTY: false }, {})).toBe(false);
    expect(colourWanted({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colourWanted({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(colourWanted({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(true);
    expect(styleFor({ isTTY: true }, {}).path("a")).toBe("\x1b[36ma\x1b[0m");
    expect(styleFor({ isTTY: true }, { NO_COLOR: "1" }).path("a")).toBe("a");
  });

  test("recalled excerpts for a person: numbered headings with time, session, side and score, text indented", () => {
    const hits = [
      {
        text: "user: why slow?\nassistant: a stat cache",
        role: "user+assistant",
        ts: "2025-04-01T09:00:00Z",
        session_id: "s-1",
        score: 0.8123,
      },
      { text: "Teal.", role: "assistant", ts: "2025-04-02T10:30:00Z", session_id: "s-2", score: 0.5 },
    ];
    expect(plainRecalled(hits, styleFor({ isTTY: false }, {}))).toBe(
      "1. 2025-04-01 09:00 · session s-1 · user+assistant · score 0.81\n   user: why slow?\n   assistant: a stat cache\n\n" +
        "2. 2025-04-02 10:30 · session s-2 · assistant · score 0.50\n   Teal.",
    );
    expect(plainRecalled(hits, styleFor({ isTTY: true }, {}))).toContain("score \x1b[33m0.81\x1b[0m");
  });

  test("counts read as words, with thousands separated", () => {
    expect(count(1, "session")).toBe("1 session");
    expect(count(49077, "fact")).toBe("49,077 facts");
    expect(count(2, "name or topic", "names and topics")).toBe("2 names and topics");
  });

  test("a status line on a terminal is drawn in place and erased; elsewhere there is none", () => {
    const writes: string[] = [];
    expect(terminalStatus({ isTTY: false, write: () => true })).toBeUndefined();
    const line = terminalStatus({ isTTY: true, write: (t: string) => writes.push(t) > 0 })!;
    line.set("Forgetting…");
    line.clear();
    line.clear();
    expect(writes).toEqual(["\r\x1b[2KForgetting…", "\r\x1b[2K"]);
  });
});

describe("first doctor on a fresh install", () => {
  test("the model cache it extracts reads as the first run, not as damage; the next doctor finds it intact", async () => {
    const home = tempDir("triforge-first-doctor-");
    const cacheCheck = async () => {
      const r = await runBinary(["doctor", "--json"], { home });
      return (JSON.parse(r.stdout) as { name: string; ok: boolean; detail: string }[]).find(
        (c) => c.name === "model cache",
      );
    };
    const first = await cacheCheck();
    expect(first?.ok).toBe(true);
    expect(first?.detail).toMatch(/^extracted to .+ \(the first run of this binary\)$/);
    expect(first?.detail).not.toMatch(/damaged|missing/);
    expect((await cacheCheck())?.detail).toMatch(/ intact$/);
  });
});

const script = Bun.which("script");
if (!script)
  console.warn("cli-output.test: util-linux 'script' is missing: the terminal recall test is skipped");

describe.skipIf(!script || process.platform === "win32")("recall on a real terminal", () => {
  test("prints plain text, not the data wrapper an agent gets, and no colour with NO_COLOR", async () => {
    const home = tempDir("triforge-recall-tty-");
    const root = join(home, "project");
    mkdirSync(join(root, ".triforge"), { recursive: true });
    writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify({ llm: "none" }));
    const env = { HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") };
    process.env.TRIFORGE_HOME = env.TRIFORGE_HOME;
    const { projectDataDir } = await import("../src/home/paths.ts");
    const dataDir = projectDataDir(root);
    mkdirSync(dataDir, { recursive: true });
    const turn = (uuid: string, role: string, text: string) =>
      JSON.stringify({ ts: "2025-04-01T09:00:00Z", session_id: "tty-1", role, text, uuid });
    writeFileSync(
      join(dataDir, "chats.jsonl"),
      `${turn("t1", "user", "Why is buildIndex slow?")}\n${turn("t2", "assistant", "It re-reads every file; a stat cache fixes it.")}\n`,
    );
    expect((await runBinary(["index", "--project", root], { home })).code).toBe(0);
    const binary = await compiledBinary();
    const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
    const line = `${q(binary)} recall 'why is buildIndex slow' --project ${q(root)} -k 1`;
    const { stdout, code } = await spawnCollect([script!, "-qec", line, "/dev/null"], {
      env: { ...process.env, ...env, NO_COLOR: "1", TERM: "xterm" },
    });
    expect(code).toBe(0);
    const text = stdout.replaceAll("\r\n", "\n");
    expect(text).toContain("1. 2025-04-01 09:00 · session tty-1 · ");
    expect(text).toContain("stat cache");
    expect(text).not.toContain("<triforge-recalled-memory");
    expect(text).not.toContain("\x1b[");
  });
});
