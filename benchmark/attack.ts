#!/usr/bin/env bun
/**
 * The attack run: bounded hostile inputs against the compiled binary, class by class, each trial in a
 * temporary HOME of its own, so the next round starts from these figures.
 *
 *   bun benchmark/attack.ts [--only <class>,<class>] [--seed 18] [--keep]
 *
 * Classes: bad hook input, mutated transcripts, kill -9 of capture and the indexer, parallel hooks,
 * damaged stores, ReDoS strings, MCP protocol abuse, path traversal, huge trees. A trial *holds* when
 * the binary does what docs promise (hooks exit 0 with nothing on stdout within their budget, nothing
 * captured is lost or doubled, a damaged store or index is rebuilt and answers, redaction stays
 * linear, the MCP server answers and leaves with its client, nothing outside the project is read,
 * a huge folder is refused or bounded); otherwise the reason is printed. Prints per class: tried,
 * held, failed. The binary is TRIFORGE_TEST_BINARY, else dist/triforge (`bun run build:host`).
 * A default run takes about 2–3 minutes on 2 cores. This is a benchmark, not a test: some classes
 * fail until the fixes for them land, and the counts say so.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { indexLayout } from "../src/code/store.ts";
import { seededRandom } from "../test/support/random.ts";

const { values } = parseArgs({
  options: { only: { type: "string" }, seed: { type: "string", default: "18" }, keep: { type: "boolean" } },
});
const random = seededRandom(Number(values.seed));
const binary = process.env.TRIFORGE_TEST_BINARY ?? resolve(import.meta.dir, "../dist/triforge");
if (!existsSync(binary)) {
  console.error(`no binary at ${binary}: run 'bun run build:host' first (or set TRIFORGE_TEST_BINARY)`);
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "triforge-attack-"));
/** What a hook may take before Claude Code gives up on it (the Stop hook's budget). */
const HOOK_BUDGET_MS = 10_000;
const GNU_TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

// ---------------------------------------------------------------------------------------------
// Running the binary

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
  peakRssMb?: number;
}

async function run(
  args: string[],
  options: {
    home: string;
    cwd?: string;
    stdin?: string | Uint8Array;
    timeoutMs?: number;
    env?: Record<string, string>;
    measureRss?: boolean;
  },
): Promise<Ran> {
  const rssFile = join(options.home, `.rss-${process.hrtime.bigint()}`);
  const command =
    options.measureRss && GNU_TIME
      ? [GNU_TIME, "-f", "%M", "-o", rssFile, binary, ...args]
      : [binary, ...args];
  const started = performance.now();
  const proc = Bun.spawn(command, {
    cwd: options.cwd ?? options.home,
    env: {
      HOME: options.home,
      TRIFORGE_HOME: join(options.home, ".claude", "triforge"),
      TRIFORGE_LLM: "none",
      PATH: process.env.PATH ?? "",
      ...options.env,
    },
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill(9);
  }, options.timeoutMs ?? 60_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  const ran: Ran = { code, stdout, stderr, ms: performance.now() - started, timedOut };
  if (options.measureRss && existsSync(rssFile))
    ran.peakRssMb = Number(readFileSync(rssFile, "utf8").trim().split("\n").pop()) / 1024;
  return ran;
}

/** A fresh HOME with an active project and a folder for its transcripts. */
function sandbox(name: string) {
  const home = mkdtempSync(join(scratch, `${name.replace(/\W+/g, "-")}-`));
  const project = join(home, "work", "app");
  mkdirSync(join(project, ".triforge"), { recursive: true });
  writeFileSync(join(project, ".triforge", "config.json"), '{"llm":"none"}\n');
  mkdirSync(join(project, ".git"));
  const transcripts = join(home, ".claude", "projects", "-work-app");
  mkdirSync(transcripts, { recursive: true });
  const dataRoot = join(home, ".claude", "triforge");
  /** The project's chats.jsonl as lines (its data folder is the one folder holding one). */
  const chatLines = (): string[] => {
    for (const file of filesUnder(dataRoot))
      if (file.endsWith("/chats.jsonl")) return readFileSync(file, "utf8").split("\n");
    return [];
  };
  const hook = (command: string, stdin: string | Uint8Array, timeoutMs = HOOK_BUDGET_MS) =>
    run([command, `--project=${project}`], { home, stdin, timeoutMs });
  return { home, project, transcripts, dataRoot, chatLines, hook };
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => {
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    });
}

// ---------------------------------------------------------------------------------------------
// Transcripts

const WORDS =
  "parser token retry queue socket cache index budget shard merge flush commit rollback schema migration".split(
    " ",
  );
const sentence = (n: number) =>
  Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");

function userLine(uuid: string, text: string, session: string): string {
  return `${JSON.stringify({ type: "user", uuid, isSidechain: false, sessionId: session, timestamp: "2026-02-01T10:00:00.000Z", message: { role: "user", content: text } })}\n`;
}
function assistantLine(uuid: string, text: string, session: string): string {
  return `${JSON.stringify({
    type: "assistant",
    uuid,
    isSidechain: false,
    sessionId: session,
    timestamp: "2026-02-01T10:00:01.000Z",
    message: {
      id: `msg-${uuid}`,
      role: "assistant",
      model: "claude-opus-4-6",
      content: [{ type: "text", text }],
    },
  })}\n`;
}

/** A transcript of `turns` user/assistant turns with distinct texts. */
function transcript(session: string, turns: number, wordsPerTurn = 12): string {
  let text = "";
  for (let i = 0; i < turns; i++) {
    const body = `turn ${i} of ${session}: ${sentence(wordsPerTurn)}`;
    text +=
      i % 2 === 0
        ? userLine(`${session}-u${i}`, body, session)
        : assistantLine(`${session}-a${i}`, body, session);
  }
  return text;
}

const hookInput = (session: string, transcriptPath: unknown, cwd: string) =>
  JSON.stringify({
    session_id: session,
    transcript_path: transcriptPath,
    cwd,
    hook_event_name: "Stop",
    stop_hook_active: false,
  });

/** Why chats.jsonl is not sound (a torn or non-JSON line, a record without its fields), or undefined. */
function unsoundChatLog(lines: string[]): string | undefined {
  for (const [i, line] of lines.entries()) {
    if (line === "" && i === lines.length - 1) continue;
    try {
      const record = JSON.parse(line);
      if (typeof record.text !== "string" || typeof record.session_id !== "string")
        return `line ${i + 1} lacks text or session_id`;
    } catch {
      return `line ${i + 1} is not JSON: ${line.slice(0, 60)}`;
    }
  }
  return undefined;
}

const records = (lines: string[]) =>
  lines.filter(Boolean).flatMap((line) => {
    try {
      return [JSON.parse(line) as { session_id: string; uuid?: string; text: string }];
    } catch {
      return [];
    }
  });

/** Why a hook run did not hold (exit 0, nothing on stdout, within its budget), or undefined. */
function hookHeld(ran: Ran, stdoutMayBeJson = false): string | undefined {
  if (ran.timedOut) return `still running after ${HOOK_BUDGET_MS / 1000} s (killed)`;
  if (ran.code !== 0) return `exit ${ran.code}: ${ran.stderr.slice(0, 120)}`;
  if (ran.stdout !== "") {
    if (!stdoutMayBeJson) return `printed on stdout: ${ran.stdout.slice(0, 80)}`;
    try {
      JSON.parse(ran.stdout);
    } catch {
      return `stdout is not hook JSON: ${ran.stdout.slice(0, 80)}`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Classes

interface Trial {
  name: string;
  /** Undefined when the binary held; else what went wrong. */
  run: () => Promise<string | undefined>;
}

function badHookInput(): Trial[] {
  const bytes = new Uint8Array(4096).map(() => Math.floor(random() * 256));
  const inputs: [string, (s: ReturnType<typeof sandbox>) => string | Uint8Array][] = [
    ["empty stdin", () => ""],
    ["not JSON", () => "not json at all"],
    ["JSON null", () => "null"],
    ["an array", () => "[1,2,3]"],
    ["transcript_path a number", (s) => hookInput("s1", 5, s.project)],
    ["transcript_path missing file", (s) => hookInput("s1", join(s.home, "nope.jsonl"), s.project)],
    ["transcript_path a directory", (s) => hookInput("s1", s.transcripts, s.project)],
    ["transcript_path /dev/zero", (s) => hookInput("s1", "/dev/zero", s.project)],
    [
      "transcript_path a FIFO",
      (s) => {
        const fifo = join(s.transcripts, "pipe.jsonl");
        Bun.spawnSync(["mkfifo", fifo]);
        return hookInput("s1", fifo, s.project);
      },
    ],
    ["session_id with ../", (s) => hookInput("../../../escape", join(s.transcripts, "x.jsonl"), s.project)],
    ["random bytes", () => bytes],
    ["5 MB of braces", () => "{".repeat(5_000_000)],
    ["deep nesting", () => `${"[".repeat(200_000)}${"]".repeat(200_000)}`],
  ];
  const trials: Trial[] = [];
  for (const command of ["capture", "prelude"])
    for (const [name, input] of inputs)
      trials.push({
        name: `${command}: ${name}`,
        run: async () => {
          const s = sandbox(`hook-${command}`);
          writeFileSync(join(s.transcripts, "x.jsonl"), transcript("s1", 4));
          const ran = await s.hook(command, input(s));
          const escaped = filesUnder(s.home).filter(
            (f) => !f.startsWith(s.dataRoot) && !f.startsWith(s.transcripts) && !f.startsWith(s.project),
          );
          if (escaped.some((f) => !f.includes(".rss-")))
            return `wrote outside the data folder: ${escaped[0]}`;
          return hookHeld(ran, command === "prelude") ?? unsoundChatLog(s.chatLines());
        },
      });
  return trials;
}

function mutatedTranscripts(): Trial[] {
  const mutations: [string, (text: string) => string | Uint8Array][] = [
    ["cut at a random byte", (t) => t.slice(0, Math.floor(random() * t.length))],
    [
      "random bytes flipped",
      (t) => {
        const b = new TextEncoder().encode(t);
        for (let i = 0; i < 40; i++) b[Math.floor(random() * b.length)] ^= 1 + Math.floor(random() * 255);
        return b;
      },
    ],
    [
      "lines shuffled",
      (t) =>
        t
          .split("\n")
          .sort(() => random() - 0.5)
          .join("\n"),
    ],
    [
      "lines doubled",
      (t) =>
        t
          .split("\n")
          .flatMap((l) => [l, l])
          .join("\n"),
    ],
    ["garbage lines between", (t) => t.split("\n").join("\n}{not json\n")],
    ["a 3 MB line", (t) => `${t}${userLine("big", "x".repeat(3_000_000), "s1")}`],
    ["CRLF line ends", (t) => t.replaceAll("\n", "\r\n")],
    ["invalid UTF-8", (t) => new Uint8Array([...new TextEncoder().encode(t), 0xff, 0xfe, 0x80, 0x0a])],
    ["NUL bytes in text", (t) => t.replaceAll("turn ", "turn\u0000 ")],
    ["no final newline", (t) => t.slice(0, -1)],
    [
      "message content of wrong types",
      (t) =>
        `${t}${JSON.stringify({ type: "user", uuid: "w", sessionId: "s1", message: { role: "user", content: { nested: [1, 2] } } })}\n`,
    ],
    ["a 100k-deep nested line", (t) => `${t}${"[".repeat(100_000)}${"]".repeat(100_000)}\n`],
  ];
  return mutations.map(([name, mutate]) => ({
    name,
    run: async () => {
      const s = sandbox("mutated");
      const file = join(s.transcripts, "s1.jsonl");
      writeFileSync(file, mutate(transcript("s1", 30)));
      const first = await s.hook("capture", hookInput("s1", file, s.project));
      const problem = hookHeld(first) ?? unsoundChatLog(s.chatLines());
      if (problem) return problem;
      const before = s.chatLines().length;
      const again = await s.hook("capture", hookInput("s1", file, s.project));
      if (s.chatLines().length !== before) return "a second capture of the same transcript added lines";
      return hookHeld(again);
    },
  }));
}

function kills(): Trial[] {
  const trials: Trial[] = [];
  trials.push({
    name: "a torn append (half a line at the end of chats.jsonl), then another session captures",
    run: async () => {
      const s = sandbox("torn");
      const first = join(s.transcripts, "K.jsonl");
      writeFileSync(first, transcript("K", 2));
      await s.hook("capture", hookInput("K", first, s.project));
      const log = filesUnder(s.dataRoot).find((f) => f.endsWith("/chats.jsonl"));
      if (!log) return "no chats.jsonl after a capture";
      appendFileSync(log, '{"ts":"x","session_id":"K","role":"user","text":"half');
      const other = join(s.transcripts, "L.jsonl");
      writeFileSync(other, transcript("L", 2));
      await s.hook("capture", hookInput("L", other, s.project));
      const l1 = records(s.chatLines()).filter((r) => r.session_id === "L");
      return l1.length === 2
        ? undefined
        : `session L has ${l1.length} of its 2 records (glued to the torn line)`;
    },
  });
  for (let k = 0; k < 6; k++)
    trials.push({
      name: `capture killed after ${k * 60} ms, then another session captures`,
      run: async () => {
        const s = sandbox("kill-capture");
        const file = join(s.transcripts, "K.jsonl");
        const turns = 20_000;
        writeFileSync(file, transcript("K", turns, 50));
        const proc = Bun.spawn([binary, "capture", `--project=${s.project}`], {
          env: { HOME: s.home, TRIFORGE_HOME: s.dataRoot, PATH: process.env.PATH ?? "" },
          stdin: new Blob([hookInput("K", file, s.project)]),
          stdout: "ignore",
          stderr: "ignore",
        });
        await Bun.sleep(k * 60);
        proc.kill(9);
        await proc.exited;
        const other = join(s.transcripts, "L.jsonl");
        writeFileSync(other, transcript("L", 2));
        await s.hook("capture", hookInput("L", other, s.project));
        await s.hook("capture", hookInput("K", file, s.project));
        const lines = s.chatLines();
        const all = records(lines);
        const k1 = all.filter((r) => r.session_id === "K");
        const l1 = all.filter((r) => r.session_id === "L");
        const unique = new Set(k1.map((r) => r.text)).size;
        if (l1.length !== 2)
          return `session L has ${l1.length} of its 2 records (a torn append swallowed one)`;
        if (unique !== turns) return `session K has ${unique} of its ${turns} turns`;
        if (k1.length !== turns) return `session K has ${k1.length - turns} duplicate records`;
        return unsoundChatLog(lines);
      },
    });
  for (let k = 0; k < 3; k++)
    trials.push({
      name: `indexer killed after ${300 + k * 400} ms, then indexed again`,
      run: async () => {
        const s = sandbox("kill-index");
        const file = join(s.transcripts, "K.jsonl");
        writeFileSync(file, transcript("K", 600, 30));
        await s.hook("capture", hookInput("K", file, s.project));
        const proc = Bun.spawn([binary, "index", `--project=${s.project}`], {
          env: {
            HOME: s.home,
            TRIFORGE_HOME: s.dataRoot,
            TRIFORGE_LLM: "none",
            PATH: process.env.PATH ?? "",
          },
          stdout: "ignore",
          stderr: "ignore",
        });
        await Bun.sleep(300 + k * 400);
        proc.kill(9);
        await proc.exited;
        const again = await run(["index", `--project=${s.project}`], { home: s.home, timeoutMs: 60_000 });
        if (again.code !== 0)
          return `index after the kill: exit ${again.code}: ${again.stderr.slice(0, 120)}`;
        const recalled = await run(["recall", "turn 7 of K", "--json", `--project=${s.project}`], {
          home: s.home,
        });
        if (recalled.code !== 0) return `recall: exit ${recalled.code}: ${recalled.stderr.slice(0, 120)}`;
        const hits = JSON.parse(recalled.stdout).hits?.length ?? 0;
        return hits > 0 ? undefined : "recall found nothing after the resumed index";
      },
    });
  return trials;
}

function parallelHooks(): Trial[] {
  return [4, 8].map((sessions) => ({
    name: `${sessions} sessions captured at once, twice, with an indexer beside them`,
    run: async () => {
      const s = sandbox("parallel");
      const files = Array.from({ length: sessions }, (_, i) => {
        const file = join(s.transcripts, `P${i}.jsonl`);
        writeFileSync(file, transcript(`P${i}`, 40));
        return file;
      });
      const indexer = run(["index", `--project=${s.project}`], { home: s.home, timeoutMs: 60_000 });
      const runs = await Promise.all(
        [...files, ...files].map((file, i) =>
          s.hook("capture", hookInput(`P${i % sessions}`, file, s.project)),
        ),
      );
      await indexer;
      for (const ran of runs) {
        const problem = hookHeld(ran);
        if (problem) return problem;
      }
      const all = records(s.chatLines());
      for (let i = 0; i < sessions; i++) {
        const count = all.filter((r) => r.session_id === `P${i}`).length;
        if (count !== 40) return `session P${i} has ${count} records, not 40`;
      }
      return unsoundChatLog(s.chatLines());
    },
  }));
}

/** A project with captured and indexed memory, and a code index. */
async function indexedProject(name: string) {
  const s = sandbox(name);
  const file = join(s.transcripts, "M.jsonl");
  writeFileSync(file, transcript("M", 120, 20));
  await s.hook("capture", hookInput("M", file, s.project));
  mkdirSync(join(s.project, "src"), { recursive: true });
  writeFileSync(
    join(s.project, "src", "retry.ts"),
    "export function scheduleRetry(delayMs: number) {\n  return delayMs * 2;\n}\n",
  );
  const indexed = await run(["index", `--project=${s.project}`], { home: s.home, timeoutMs: 60_000 });
  if (indexed.code !== 0) throw new Error(`index: ${indexed.stderr.slice(0, 120)}`);
  const searched = await run(["search", "scheduleRetry", s.project, "--json"], { home: s.home });
  if (searched.code !== 0) throw new Error(`search: ${searched.stderr.slice(0, 120)}`);
  return s;
}

function damagedStores(): Trial[] {
  const garbleFile = (file: string, at: number, length: number) => {
    const bytes = readFileSync(file);
    for (let i = 0; i < length && at + i < bytes.length; i++) bytes[at + i] ^= 1 + Math.floor(random() * 255);
    writeFileSync(file, bytes);
  };
  const memoryAnswers = async (s: Awaited<ReturnType<typeof indexedProject>>) => {
    for (const args of [
      ["recall", "turn 9 of M", "--json", `--project=${s.project}`],
      ["status", "--json", `--project=${s.project}`],
      ["index", `--project=${s.project}`],
      ["recall", "turn 9 of M", "--json", `--project=${s.project}`],
    ]) {
      const ran = await run(args, { home: s.home, timeoutMs: 60_000 });
      if (ran.code !== 0)
        return `${args[0]}: exit ${ran.code}: ${ran.stderr.trim().split("\n")[0]?.slice(0, 120)}`;
    }
    return undefined;
  };
  const storeFile = (s: { dataRoot: string }) => filesUnder(s.dataRoot).find((f) => f.endsWith("/memory.db"));
  const codeIndex = (s: { dataRoot: string }) => filesUnder(s.dataRoot).find((f) => f.endsWith("/index.bin"));
  const trials: Trial[] = [];
  for (let k = 0; k < 3; k++)
    trials.push({
      name: `memory.db: one page garbled (trial ${k + 1})`,
      run: async () => {
        const s = await indexedProject("damaged-db");
        const db = storeFile(s);
        if (!db) return "no memory.db after indexing";
        const pages = Math.floor(statSync(db).size / 4096);
        garbleFile(db, 4096 * (1 + Math.floor(random() * Math.max(1, pages - 1))), 4096);
        return memoryAnswers(s);
      },
    });
  trials.push({
    name: "memory.db replaced by a directory",
    run: async () => {
      const s = await indexedProject("damaged-dir");
      const db = storeFile(s);
      if (!db) return "no memory.db after indexing";
      rmSync(db);
      mkdirSync(db);
      return memoryAnswers(s);
    },
  });
  trials.push({
    name: "chats.jsonl: a garbage line appended",
    run: async () => {
      const s = await indexedProject("damaged-log");
      const log = filesUnder(s.dataRoot).find((f) => f.endsWith("/chats.jsonl"));
      if (!log) return "no chats.jsonl";
      appendFileSync(log, "}{ not a record\n");
      return memoryAnswers(s);
    },
  });
  for (const section of ["texts", "vectors", "BM25 postings", "chunk starts"])
    trials.push({
      name: `code index.bin: 64 bytes of its ${section} garbled`,
      run: async () => {
        const s = await indexedProject("damaged-code");
        const file = codeIndex(s);
        if (!file) return "no index.bin after a search";
        const search = () => run(["search", "retry delay", s.project, "--json"], { home: s.home });
        const clean = await search();
        const region = indexLayout(readFileSync(file)).sections.find((r) => r.name === section);
        if (!region) return `no ${section} section`;
        const length = Math.min(64, region.end - region.start);
        garbleFile(
          file,
          region.start + Math.floor(random() * (region.end - region.start - length + 1)),
          length,
        );
        const ran = await search();
        if (ran.code !== 0) return `search: exit ${ran.code}: ${ran.stderr.slice(0, 120)}`;
        return JSON.stringify(JSON.parse(ran.stdout).hits) === JSON.stringify(JSON.parse(clean.stdout).hits)
          ? undefined
          : `a damaged index answered: ${JSON.stringify(JSON.parse(ran.stdout).hits?.[0])?.slice(0, 100)}`;
      },
    });
  trials.push({
    name: "code index.bin replaced by a directory",
    run: async () => {
      const s = await indexedProject("damaged-code-dir");
      const file = codeIndex(s);
      if (!file) return "no index.bin after a search";
      rmSync(file);
      mkdirSync(file);
      const ran = await run(["search", "scheduleRetry", s.project, "--json"], { home: s.home });
      return ran.code === 0 ? undefined : `search: exit ${ran.code}: ${ran.stderr.trim().slice(0, 120)}`;
    },
  });
  return trials;
}

function redos(): Trial[] {
  /** Linear redaction reads more than 1 MB/s even on a loaded box (measured worst: 311 ms per MB). */
  const MIN_MB_PER_S = 0.5;
  const size = 400_000;
  const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  const inputs: [string, string][] = [
    ["one long word", fill("a")],
    ["equals signs", fill("=")],
    ["key= then a long value", `api_key=${fill("A")}`],
    ["repeated key=", fill("key=")],
    ["unterminated PEM headers", fill("-----BEGIN ")],
    ["at signs", fill("a@")],
    ["a URL with a long host", `https://${fill("a.")}`],
    ["base64 runs", fill("QUJD")],
    ["password: then spaces", `password: ${fill(" ")}x`],
    ["quotes", fill('"')],
    ["backslashes", fill("\\")],
    ["digits and dots (IP-like)", fill("1.")],
    ["mixed Unicode", fill("пароль: 密码 ")],
    ["spaced-out letters", fill("s k ")],
  ];
  return inputs.map(([name, text]) => ({
    name: `${name} (${Math.round(text.length / 1000)} KB)`,
    run: async () => {
      const s = sandbox("redos");
      const timeoutMs = (text.length / 1e6 / MIN_MB_PER_S) * 1000 + 2000;
      const ran = await run(["redact"], { home: s.home, stdin: text, timeoutMs });
      if (ran.timedOut) return `redaction still running after ${(timeoutMs / 1000).toFixed(1)} s`;
      if (ran.code !== 0) return `exit ${ran.code}: ${ran.stderr.slice(0, 120)}`;
      return undefined;
    },
  }));
}

/**
 * Serves MCP with raw pipes: writes `chunks`, waits (at most 10 s) until a reply with id "probe" is
 * out when `awaitProbe`, as a client waits for its answer, then closes stdin.
 */
async function serveRaw(home: string, cwd: string, chunks: (string | Uint8Array)[], awaitProbe: boolean) {
  const proc = Bun.spawn([binary, "serve"], {
    cwd,
    env: { HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge"), PATH: process.env.PATH ?? "" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  });
  let stdout = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) stdout += decoder.decode(chunk);
  })();
  let stalled = false;
  for (const chunk of chunks) {
    proc.stdin.write(chunk);
    const flushed = await Promise.race([
      Promise.resolve(proc.stdin.flush()).then(() => true),
      Bun.sleep(5_000).then(() => false),
    ]);
    if (!flushed) {
      stalled = true;
      break;
    }
  }
  const deadline = performance.now() + 10_000;
  while (awaitProbe && !stalled && !stdout.includes('"id":"probe"') && performance.now() < deadline)
    await Bun.sleep(20);
  await Bun.sleep(100);
  proc.stdin.end();
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(3_000).then(() => false)]);
  if (!exited) proc.kill(9);
  await Promise.race([reading, Bun.sleep(1_000)]);
  return { stalled, exited, stdout };
}

function mcpAbuse(): Trial[] {
  const line = (message: unknown) => `${JSON.stringify(message)}\n`;
  const initialize = line({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "attack", version: "0" } },
  });
  const initialized = line({ jsonrpc: "2.0", method: "notifications/initialized" });
  const probe = line({ jsonrpc: "2.0", id: "probe", method: "tools/list" });
  const cases: [string, (string | Uint8Array)[]][] = [
    [
      "a 12 MB message",
      [
        initialize,
        initialized,
        `${JSON.stringify({ jsonrpc: "2.0", method: "tools/call", params: { name: "rag_search", arguments: { query: "x".repeat(12_000_000) } }, id: 2 })}\n`,
        probe,
      ],
    ],
    ["a 12 MB line without a newline, then stdin closes", [initialize, "y".repeat(12_000_000)]],
    ["not JSON", [initialize, "this is not json\n", probe]],
    ["JSON that is not JSON-RPC", [initialize, '{"hello":"world"}\n', "42\n", probe]],
    ["a batch array", [initialize, `[${probe.trim()},${probe.trim()}]\n`, probe]],
    ["200k-deep nesting", [initialize, `${"[".repeat(200_000)}${"]".repeat(200_000)}\n`, probe]],
    [
      "2,000 requests at once",
      [initialize, initialized, line({ jsonrpc: "2.0", id: 0, method: "tools/list" }).repeat(2000), probe],
    ],
    [
      "an unknown method and a tools/call without a name",
      [
        initialize,
        initialized,
        line({ jsonrpc: "2.0", id: 3, method: "no/such" }),
        line({ jsonrpc: "2.0", id: 4, method: "tools/call", params: {} }),
        probe,
      ],
    ],
    [
      "a call before initialize",
      [
        line({
          jsonrpc: "2.0",
          id: 5,
          method: "tools/call",
          params: { name: "code_search", arguments: { query: "x" } },
        }),
        initialize,
        probe,
      ],
    ],
    ["one byte at a time", [...(initialize + probe)].map((c) => c)],
    ["random bytes", [initialize, new Uint8Array(20_000).map(() => Math.floor(random() * 256)), "\n", probe]],
    [
      "a 1 MB id",
      [initialize, line({ jsonrpc: "2.0", id: "i".repeat(1_000_000), method: "tools/list" }), probe],
    ],
  ];
  return cases.map(([name, chunks]) => ({
    name,
    run: async () => {
      const s = sandbox("mcp");
      const awaitProbe = chunks.some((c) => c === probe) || name === "one byte at a time";
      const { stalled, exited, stdout } = await serveRaw(s.home, s.project, chunks, awaitProbe);
      if (stalled) return "the server stopped reading its stdin";
      if (!exited) return "still running 3 s after its stdin closed";
      const messages: { id?: unknown; result?: unknown; error?: unknown }[] = [];
      for (const l of stdout.split("\n").filter(Boolean)) {
        try {
          messages.push(JSON.parse(l));
        } catch {
          return `stdout carried a line that is not JSON: ${l.slice(0, 60)}`;
        }
      }
      if (awaitProbe && !messages.some((m) => m.id === "probe" && m.result))
        return "the last request was not answered within 10 s";
      return undefined;
    },
  }));
}

function pathTraversal(): Trial[] {
  const SECRET = "OUTSIDE_THE_PROJECT_MARKER_7c1f";
  const setup = () => {
    const s = sandbox("traversal");
    const outside = join(s.home, "outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "secret.ts"), `export const marker = "${SECRET}";\n`);
    mkdirSync(join(s.project, "src"), { recursive: true });
    writeFileSync(join(s.project, "src", "app.ts"), "export function startApp() {\n  return 1;\n}\n");
    symlinkSync(join(outside, "secret.ts"), join(s.project, "src", "linked.ts"));
    symlinkSync(outside, join(s.project, "src", "linked-dir"));
    return { ...s, outside };
  };
  /** Whether a returned snippet holds the outside file's text (a search echoes its query, not counted). */
  const leaks = (ran: Ran) => {
    try {
      const { hits = [], source } = JSON.parse(ran.stdout) as {
        hits?: { content: string }[];
        source?: { content: string };
      };
      return [...hits, ...(source ? [source] : [])].some((hit) => hit.content.includes(SECRET));
    } catch {
      return ran.stdout.includes(SECRET);
    }
  };
  const cases: [string, (s: ReturnType<typeof setup>) => Promise<string | undefined>][] = [
    [
      "search through symlinks to outside files",
      async (s) => {
        const ran = await run(["search", SECRET, s.project, "--json", "--content", "all"], { home: s.home });
        return leaks(ran) ? "a symlinked file outside the project was returned" : undefined;
      },
    ],
    [
      "find-related ../../outside/secret.ts",
      async (s) => {
        const ran = await run(["find-related", "../../outside/secret.ts", "1", s.project, "--json"], {
          home: s.home,
        });
        return leaks(ran) ? "find-related returned a file outside the project" : undefined;
      },
    ],
    [
      "find-related with an absolute path outside",
      async (s) => {
        const ran = await run(["find-related", join(s.outside, "secret.ts"), "1", s.project, "--json"], {
          home: s.home,
        });
        return leaks(ran) ? "find-related returned a file outside the project" : undefined;
      },
    ],
    [
      "search with a path of ../..",
      async (s) => {
        const ran = await run(["search", SECRET, join(s.project, "..", ".."), "--json"], { home: s.home });
        return leaks(ran) ? "a folder above the project was indexed without --allow-large" : undefined;
      },
    ],
    [
      "capture of a transcript outside the transcripts folder",
      async (s) => {
        const ran = await s.hook("capture", hookInput("s1", join(s.outside, "secret.ts"), s.project));
        const logged = s.chatLines().join("\n");
        return hookHeld(ran) ?? (logged.includes(SECRET) ? "a non-transcript file was captured" : undefined);
      },
    ],
    [
      "recall --project ../../outside",
      async (s) => {
        const ran = await run(
          ["recall", "marker", "--json", `--project=${join(s.project, "..", "..", "outside")}`],
          { home: s.home },
        );
        return leaks(ran) ? "recall read a file outside any project" : undefined;
      },
    ],
  ];
  return cases.map(([name, check]) => ({ name, run: () => check(setup()) }));
}

function hugeTrees(): Trial[] {
  const RSS_LIMIT_MB = 1024;
  const FILES = 20_000;
  let tree: string | undefined;
  /** A fake HOME holding a 20,000-file project, made once for the class. */
  const home = () => {
    if (tree) return tree;
    tree = mkdtempSync(join(scratch, "huge-"));
    const project = join(tree, "big");
    for (let f = 0; f < FILES; f++) {
      const dir = join(project, `d${Math.floor(f / 100)}`);
      if (f % 100 === 0) mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, `f${f}.ts`),
        `export function handler${f}(x: number) {\n  return x + ${f};\n}\n`,
      );
    }
    writeFileSync(join(project, "package.json"), "{}\n");
    mkdirSync(join(tree, "loose"));
    writeFileSync(join(tree, "loose", "notes.ts"), "export const handlerNotes = 1;\n");
    return tree;
  };
  const bounded = (ran: Ran, seconds: number) => {
    if (ran.timedOut) return `still running after ${seconds} s`;
    if ((ran.peakRssMb ?? 0) > RSS_LIMIT_MB) return `peak RSS ${ran.peakRssMb?.toFixed(0)} MB`;
    return undefined;
  };
  return [
    {
      name: "search of the fake HOME",
      args: (h: string) => ["search", "handler", h],
      seconds: 2,
      refused: "is the home folder",
    },
    {
      name: "search of /",
      args: () => ["search", "handler", "/"],
      seconds: 2,
      refused: "is the file-system root",
    },
    {
      name: "search of a folder with no project marker",
      args: (h: string) => ["search", "handler", join(h, "loose")],
      seconds: 2,
      refused: "is not a project",
    },
    {
      name: "search of the fake HOME --allow-large, capped at 5,000 files",
      args: (h: string) => ["search", "handler", h, "--allow-large", "--json"],
      seconds: 60,
      refused: undefined,
      env: { TRIFORGE_CODE_MAX_FILES: "5000" },
    },
    {
      name: "code-index of the 20,000-file project",
      args: (h: string) => ["code-index", join(h, "big"), "--json"],
      seconds: 120,
      refused: undefined,
    },
  ].map((c) => ({
    name: c.name,
    run: async () => {
      const h = home();
      const ran = await run(c.args(h), {
        home: h,
        timeoutMs: c.seconds * 1000,
        env: c.env,
        measureRss: true,
      });
      const problem = bounded(ran, c.seconds);
      if (problem) return problem;
      if (c.refused)
        return ran.code === 1 && ran.stderr.includes(c.refused) ? undefined : `not refused: exit ${ran.code}`;
      if (ran.code !== 0) return `exit ${ran.code}: ${ran.stderr.trim().slice(0, 140)}`;
      if (c.env && !ran.stdout.includes("TRIFORGE_CODE_MAX_FILES"))
        return "the capped answer does not name the cap";
      return undefined;
    },
  }));
}

// ---------------------------------------------------------------------------------------------

const classes: [string, () => Trial[]][] = [
  ["bad hook input", badHookInput],
  ["mutated transcripts", mutatedTranscripts],
  ["kill -9", kills],
  ["parallel hooks", parallelHooks],
  ["damaged stores", damagedStores],
  ["ReDoS strings", redos],
  ["MCP protocol abuse", mcpAbuse],
  ["path traversal", pathTraversal],
  ["huge trees", hugeTrees],
];
const only = values.only?.split(",");
const started = performance.now();
const rows: [string, number, number, number, number][] = [];
try {
  for (const [name, make] of classes) {
    if (only && !only.some((o) => name.startsWith(o))) continue;
    const classStarted = performance.now();
    const failures: string[] = [];
    const trials = make();
    for (const trial of trials) {
      let problem: string | undefined;
      try {
        problem = await trial.run();
      } catch (error) {
        problem = `the trial itself failed: ${(error as Error).message.slice(0, 120)}`;
      }
      if (problem) failures.push(`${trial.name}: ${problem}`);
    }
    const seconds = (performance.now() - classStarted) / 1000;
    rows.push([name, trials.length, trials.length - failures.length, failures.length, seconds]);
    console.log(
      `${name}: ${trials.length} tried, ${trials.length - failures.length} held, ${failures.length} failed (${seconds.toFixed(1)} s)`,
    );
    for (const failure of failures) console.log(`  failed: ${failure}`);
  }
} finally {
  if (!values.keep) rmSync(scratch, { recursive: true, force: true });
}
console.log(`\n${"class".padEnd(22)} tried  held  failed`);
for (const [name, tried, held, failed] of rows)
  console.log(
    `${name.padEnd(22)} ${String(tried).padStart(5)} ${String(held).padStart(5)} ${String(failed).padStart(7)}`,
  );
const total = rows.reduce((sum, r) => [sum[0] + r[1], sum[1] + r[2], sum[2] + r[3]], [0, 0, 0]);
console.log(
  `${"all".padEnd(22)} ${String(total[0]).padStart(5)} ${String(total[1]).padStart(5)} ${String(total[2]).padStart(7)}   in ${((performance.now() - started) / 1000).toFixed(0)} s (seed ${values.seed})`,
);
