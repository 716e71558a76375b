/**
 * The release gate: the real Claude Code CLI on a small real project (sandbox-todo-app/), each task of
 * tasks.md run in two scenarios (scenarios/baseline-no-triforge, scenarios/with-triforge), with every
 * follow-up question in a new chat. Prints a table and writes results/<date>-comparison.md; exits 1
 * when triforge shows no measurable gain in either memory or input tokens.
 *
 *   bun benchmark/run_benchmark.ts [--versions 2.1.197,2.1.332] [--out benchmark/results]
 *
 * With ANTHROPIC_API_KEY the real model plays; without it a scripted model on 127.0.0.1 plays both
 * scenarios the same deterministic way (tasks.md says how), so what differs is what the CLI sends.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { projectKey } from "../src/home/paths.ts";
import { answers, installClaudeCode, isConversation, startsTurn } from "../test/support/claude-cli.ts";
import {
  type AnthropicReply,
  startFakeAnthropic,
  textReply,
  toolUseReply,
} from "../test/support/fakes/anthropic.ts";
import type { ReceivedRequest } from "../test/support/fakes/common.ts";
import { compiledBinary, ROOT, spawnCollect } from "../test/support/helpers.ts";

type Scenario = "baseline-no-triforge" | "with-triforge";
const SCENARIOS: Scenario[] = ["baseline-no-triforge", "with-triforge"];

interface Task {
  id: number;
  title: string;
  kind: "memory" | "code";
  /** Session 1's prompt. */
  prompt: string;
  /** The words the scripted agent searches for (Grep pattern / code_search query). */
  grep: string;
  query: string;
  /** Names whose definitions the answer should cite (code tasks). */
  references?: string[];
  /** The new chat's question and the phrases of the decision its answer must hold (memory tasks). */
  followUp?: { prompt: string; grep: string; query: string; phrases: string[] };
}

const TASKS: Task[] = [
  {
    id: 1,
    title: "/done endpoint → task statuses",
    kind: "memory",
    prompt:
      "Add a /done endpoint to mark a task done. We decided: a task's status is only ever open or done, and done is final — a done task is never reopened.",
    grep: "status",
    query: "task status update endpoint",
    followUp: {
      prompt: "What did we decide about task statuses?",
      grep: "status",
      query: "task status rules",
      phrases: ["never reopened"],
    },
  },
  {
    id: 2,
    title: "find the error-handling function",
    kind: "code",
    prompt: "Find the error-handling function.",
    grep: "error",
    query: "error handling function",
    references: ["register_error_handlers"],
  },
  {
    id: 3,
    title: "PATCH /tasks/{id} like POST",
    kind: "code",
    prompt: "Implement PATCH /tasks/{id} with validation, following the same approach as POST.",
    grep: "post|validate",
    query: "create task POST validation",
    references: ["create_task", "validate_title", "validate_status", "ValidationError"],
  },
  {
    id: 4,
    title: "architecture → data layer",
    kind: "memory",
    prompt:
      "Explain the project's architecture. We decided: the data layer stays raw sqlite3 in db.py with no ORM, and only models.py calls it.",
    grep: "def |import",
    query: "project architecture modules database layer",
    followUp: {
      prompt: "What did we decide about the data layer?",
      grep: "sqlite3|db\\.",
      query: "data layer database decision",
      phrases: ["no ORM", "only models.py"],
    },
  },
];

interface SessionMetrics {
  inputTokens: number;
  outputTokens: number;
  requests: number;
  ttftMs: number;
  totalMs: number;
  answer: string;
  ok: boolean;
}

interface TaskResult {
  version: string;
  scenario: Scenario;
  task: Task;
  sessions: SessionMetrics[];
  /** Memory tasks: the new chat's answer holds the decision. Code tasks: share of references cited. */
  recall?: boolean;
  referencesCited?: number;
  /** The LLM judge's 1–5 score of the last answer (real model only). */
  quality?: number;
  diskBytes: number;
}

// ---- the scripted model --------------------------------------------------------------------------

/** What the conversation holds so far, for the scripted model to answer from. */
const context = (r: ReceivedRequest) => JSON.stringify(r.body?.messages ?? []).toLowerCase();
const holds = (r: ReceivedRequest, phrase: string) => context(r).includes(phrase.toLowerCase());

/**
 * A reply written when it is served, from the request it answers: the answer may only state what the
 * conversation holds. (The fake takes the first queued reply whose `when` accepts the request; this one
 * fills its text at that moment.)
 */
function answerFromContext(when: (r: ReceivedRequest) => boolean, compose: (r: ReceivedRequest) => string) {
  const reply = textReply("");
  reply.when = (r) => {
    if (!when(r)) return false;
    (reply as { content: { text: string }[] }).content[0].text = compose(r);
    return true;
  };
  return reply;
}

/** Files of the project that match `pattern` (as the CLI's Grep finds them), in a stable order. */
function matchingFiles(project: string, pattern: string): string[] {
  const re = new RegExp(pattern, "i");
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      if (e.name.startsWith(".")) return [];
      const path = join(dir, e.name);
      if (e.isDirectory()) return walk(path);
      return /\.(py|html)$/.test(e.name) && re.test(readFileSync(path, "utf8")) ? [path] : [];
    });
  return walk(project).sort();
}

function composeAnswer(task: Task, followUp: boolean) {
  return (r: ReceivedRequest) => {
    if (followUp) {
      const phrases = task.followUp!.phrases;
      return phrases.every((p) => holds(r, p))
        ? `From earlier sessions: ${phrases.join("; ")}.`
        : "I found no earlier decision about this; the code alone does not say.";
    }
    const cited = (task.references ?? []).filter(
      (name) => holds(r, `def ${name.toLowerCase()}`) || holds(r, `class ${name.toLowerCase()}`),
    );
    return cited.length
      ? `The code to use: ${cited.join(", ")}.`
      : "Done: the approach is in the files above.";
  };
}

/** The replies one session gets, queued before it starts. */
function script(scenario: Scenario, task: Task, project: string, followUp: boolean): AnthropicReply[] {
  const grep = followUp ? task.followUp!.grep : task.grep;
  const query = followUp ? task.followUp!.query : task.query;
  const compose = composeAnswer(task, followUp);
  if (scenario === "baseline-no-triforge") {
    // Grep for the task's words, then read every file that matched, whole.
    const files = matchingFiles(project, grep);
    const replies: AnthropicReply[] = [
      toolUseReply(
        "Grep",
        { pattern: grep, path: project, output_mode: "files_with_matches", "-i": true },
        { id: "toolu_bench_grep", when: startsTurn },
      ),
    ];
    let previous = "toolu_bench_grep";
    files.forEach((file, i) => {
      const id = `toolu_bench_read_${i}`;
      replies.push(toolUseReply("Read", { file_path: file }, { id, when: answers(previous) }));
      previous = id;
    });
    replies.push(answerFromContext(answers(previous), compose));
    return replies;
  }
  if (followUp) {
    // The prelude may already hold the decision; otherwise ask memory, then answer.
    const phrases = task.followUp!.phrases;
    return [
      answerFromContext((r) => startsTurn(r) && phrases.every((p) => holds(r, p)), compose),
      toolUseReply("mcp__triforge__rag_search", { query }, { id: "toolu_bench_rag", when: startsTurn }),
      answerFromContext(answers("toolu_bench_rag"), compose),
    ];
  }
  return [
    toolUseReply(
      "mcp__triforge__code_search",
      { query, top_k: 5 },
      { id: "toolu_bench_code", when: startsTurn },
    ),
    answerFromContext(answers("toolu_bench_code"), compose),
  ];
}

// ---- running the CLI -----------------------------------------------------------------------------

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const VERSIONS = option("--versions", process.env.TRIFORGE_BENCH_CLAUDE_VERSIONS ?? "2.1.197,2.1.332").split(
  ",",
);
const OUT = option("--out", join(ROOT, "benchmark", "results"));
const REAL_MODEL = Boolean(process.env.ANTHROPIC_API_KEY);

function duBytes(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + duBytes(join(path, name)), 0);
}

async function runTask(
  claude: string,
  version: string,
  scenario: Scenario,
  task: Task,
  triforge: string,
): Promise<TaskResult> {
  const root = join(tmpdir(), `triforge-bench-${version}-${scenario}-${task.id}-${process.pid}`);
  const home = join(root, "home");
  const project = join(root, "todo-app");
  const bin = join(root, "bin");
  mkdirSync(join(home, ".claude"), { recursive: true });
  mkdirSync(bin, { recursive: true });
  cpSync(join(ROOT, "benchmark", "sandbox-todo-app"), project, { recursive: true });
  cpSync(
    join(ROOT, "benchmark", "scenarios", scenario, "settings.json"),
    join(home, ".claude", "settings.json"),
  );
  symlinkSync(triforge, join(bin, "triforge"));
  const env = (apiUrl?: string) => ({
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    USERPROFILE: home,
    TMPDIR: tmpdir(),
    ...(apiUrl
      ? { ANTHROPIC_BASE_URL: apiUrl, ANTHROPIC_API_KEY: "sk-ant-bench-dummy-key" }
      : { ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY }),
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    TRIFORGE_LLM: "none",
  });
  if (scenario === "with-triforge") {
    const install = await spawnCollect([triforge, "install", "--without", "insforge"], {
      env: env(),
      cwd: project,
    });
    const activate = await spawnCollect([triforge, "activate", "--no-import"], { env: env(), cwd: project });
    if (install.code !== 0 || activate.code !== 0)
      throw new Error(`setup failed: ${install.stderr}${activate.stderr}`);
  }

  async function session(prompt: string, followUp: boolean): Promise<SessionMetrics> {
    const fake = REAL_MODEL ? undefined : startFakeAnthropic();
    let firstAt = 0;
    if (fake) {
      // First in the queue and never taken: it sees every request, and notes when the first one of the
      // conversation arrives.
      const noteFirst = (r: ReceivedRequest) => {
        if (!firstAt && isConversation(r)) firstAt = Date.now();
        return false;
      };
      fake.enqueue({ ...textReply(""), when: noteFirst }, ...script(scenario, task, project, followUp));
    }
    const started = Date.now();
    const tools =
      scenario === "with-triforge"
        ? "Grep,Glob,Read,mcp__triforge__code_search,mcp__triforge__rag_search"
        : "Grep,Glob,Read";
    const run = await spawnCollect(
      [claude, "-p", prompt, "--output-format", "json", "--allowedTools", tools],
      { cwd: project, env: env(fake?.url) },
    );
    const totalMs = Date.now() - started;
    let report: { result?: string; is_error?: boolean; usage?: Record<string, number> } = {};
    try {
      report = JSON.parse(run.stdout);
    } catch {
      report = { is_error: true, result: run.stderr.slice(0, 300) };
    }
    const usage = report.usage ?? {};
    const requests = fake?.messageRequests() ?? [];
    const sent = requests.reduce((sum, r) => sum + Math.ceil(r.rawBody.length / 4), 0);
    await fake?.stop();
    // When a session ends, SessionEnd starts the detached indexer: let it finish before the next chat.
    if (scenario === "with-triforge") await waitForIndex(triforge, env(), project);
    return {
      inputTokens: REAL_MODEL
        ? (usage.input_tokens ?? 0) +
          (usage.cache_creation_input_tokens ?? 0) +
          (usage.cache_read_input_tokens ?? 0)
        : sent,
      outputTokens: usage.output_tokens ?? 0,
      requests: REAL_MODEL ? 0 : requests.length,
      ttftMs: firstAt ? firstAt - started : 0,
      totalMs,
      answer: report.result ?? "",
      ok: run.code === 0 && !report.is_error,
    };
  }

  const sessions = [await session(task.prompt, false)];
  if (task.followUp) sessions.push(await session(task.followUp.prompt, true));
  const last = sessions.at(-1)!;
  const lower = last.answer.toLowerCase();
  const diskBytes =
    duBytes(join(project, ".triforge")) + duBytes(join(home, ".claude", "triforge", projectKey(project)));
  rmSync(root, { recursive: true, force: true });
  return {
    version,
    scenario,
    task,
    sessions,
    recall: task.followUp ? task.followUp.phrases.every((p) => lower.includes(p.toLowerCase())) : undefined,
    referencesCited: task.references
      ? task.references.filter((n) => last.answer.includes(n)).length
      : undefined,
    diskBytes,
  };
}

async function waitForIndex(triforge: string, env: Record<string, string | undefined>, project: string) {
  for (const started = Date.now(); Date.now() - started < 30_000; await Bun.sleep(200)) {
    const status = await spawnCollect([triforge, "status", "--json"], { env, cwd: project });
    try {
      const parsed = JSON.parse(status.stdout);
      if (!parsed.indexing && !parsed.pendingRecords) return;
    } catch {
      // Not answering yet: ask again.
    }
  }
}

// ---- the report ----------------------------------------------------------------------------------

const sum = (sessions: SessionMetrics[], key: keyof SessionMetrics) =>
  sessions.reduce((s, m) => s + (m[key] as number), 0);

function table(results: TaskResult[]): string {
  const rows = [
    "| CLI | task | scenario | input tokens | output tokens | requests | first token | total | memory recall / references | quality (1–5) | disk |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const outcome =
      r.recall !== undefined
        ? r.recall
          ? "remembered ✓"
          : "forgot ✗"
        : `${r.referencesCited}/${r.task.references!.length} cited`;
    const failed = r.sessions.some((s) => !s.ok) ? " (a session failed)" : "";
    rows.push(
      `| ${r.version} | ${r.task.id}. ${r.task.title} | ${r.scenario} | ${sum(r.sessions, "inputTokens").toLocaleString("en")} | ${sum(r.sessions, "outputTokens")} | ${sum(r.sessions, "requests")} | ${r.sessions[0].ttftMs} ms | ${(sum(r.sessions, "totalMs") / 1000).toFixed(1)} s | ${outcome}${failed} | ${r.quality ?? "—"} | ${(r.diskBytes / 1024).toFixed(0)} KB |`,
    );
  }
  return rows.join("\n");
}

interface Verdict {
  memoryGain: boolean;
  tokenGain: boolean;
  lines: string[];
}

function verdict(results: TaskResult[]): Verdict {
  const lines: string[] = [];
  let memoryGain = false;
  let tokenGain = false;
  for (const version of VERSIONS) {
    const of = (scenario: Scenario, id: number) =>
      results.find((r) => r.version === version && r.scenario === scenario && r.task.id === id)!;
    for (const task of TASKS) {
      const base = of("baseline-no-triforge", task.id);
      const tri = of("with-triforge", task.id);
      if (task.kind === "memory") {
        if (tri.recall && !base.recall) memoryGain = true;
        lines.push(
          `- ${version}, task ${task.id}: memory ${base.recall ? "kept" : "lost"} without triforge, ${tri.recall ? "kept" : "lost"} with it.`,
        );
      } else {
        const b = sum(base.sessions, "inputTokens");
        const t = sum(tri.sessions, "inputTokens");
        if (t < b * 0.95 && (tri.referencesCited ?? 0) >= (base.referencesCited ?? 0)) tokenGain = true;
        lines.push(
          `- ${version}, task ${task.id}: ${t.toLocaleString("en")} input tokens with triforge vs ${b.toLocaleString("en")} without (${((t / b) * 100).toFixed(0)} %), references ${tri.referencesCited} vs ${base.referencesCited}.`,
        );
      }
    }
  }
  return { memoryGain, tokenGain, lines };
}

/** What a good last answer of the task holds, for the judge. */
const expectedOf = (task: Task) =>
  task.followUp
    ? `the earlier decision: ${task.followUp.phrases.join("; ")}`
    : `names ${task.references?.join(", ")}`;
// The quality rubric needs a judgement: only with the real model (benchmark/judge.ts).
const judge = REAL_MODEL ? new (await import("@anthropic-ai/sdk")).default() : undefined;

const triforge = await compiledBinary();
const results: TaskResult[] = [];
for (const version of VERSIONS) {
  const claude = await installClaudeCode(version);
  if (!claude.binary) throw new Error(`Claude Code ${version} could not be installed: ${claude.skip}`);
  for (const task of TASKS)
    for (const scenario of SCENARIOS) {
      const result = await runTask(claude.binary, version, scenario, task, triforge);
      if (judge) {
        const { judgeAnswer } = await import("./judge.ts");
        const question = task.followUp?.prompt ?? task.prompt;
        result.quality = await judgeAnswer(judge, question, expectedOf(task), result.sessions.at(-1)!.answer);
      }
      results.push(result);
      console.error(
        `${version} task ${task.id} ${scenario}: ${sum(result.sessions, "inputTokens")} input tokens`,
      );
    }
}

const { memoryGain, tokenGain, lines } = verdict(results);
const date = new Date().toISOString().slice(0, 10);
const mode = REAL_MODEL
  ? "the real model (ANTHROPIC_API_KEY): tokens from the API's reported usage"
  : "a scripted model on 127.0.0.1 (no ANTHROPIC_API_KEY): both scenarios played the same way, input tokens = request size / 4; no quality rubric (it needs the real model and an LLM judge)";
const report = [
  `# Comparative benchmark, ${date}`,
  "",
  `Claude Code ${VERSIONS.join(" and ")}, headless (\`claude -p --output-format json\`), on benchmark/sandbox-todo-app/; tasks in benchmark/tasks.md.`,
  `Mode: ${mode}.`,
  "",
  table(results),
  "",
  "## Verdict",
  "",
  ...lines,
  "",
  memoryGain || tokenGain
    ? `**triforge gains:** ${[memoryGain && "it remembers what a plain session forgets", tokenGain && "code search costs fewer input tokens at the same or better references"].filter(Boolean).join("; ")}.`
    : "**No measurable gain** in memory or input tokens.",
  "",
].join("\n");
mkdirSync(OUT, { recursive: true });
const file = join(OUT, `${date}-comparison.md`);
writeFileSync(file, report);
console.log(report);
console.error(`written: ${relative(process.cwd(), file)}`);
if (!memoryGain && !tokenGain) process.exit(1);
