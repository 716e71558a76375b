#!/usr/bin/env bun
/**
 * File localisation from real change descriptions: SWE-bench Lite's task (an issue's words → the
 * files its patch touched), built from git history because SWE-bench itself cannot be fetched here.
 *
 *   bun benchmark/code-localise.ts [--mirrors /work/.mirror] [--work /tmp/localise] [--per-repo 15]
 *     [--repos a,b] [--variants feedback-off,…] [--json out.json] [--verbose]
 *
 * Repositories: the 19 development repositories' mirrors (their annotated queries tuned the ranking,
 * these commit messages did not) and UNSEEN ones, mirrors of other public repositories in the
 * languages where peers lead (fetched outside this checkout; none of their text shaped a rule).
 *
 * An instance, by one rule for every repository (no hand-picking):
 * - a commit on HEAD's first-parent line, not a merge, newest first, `--per-repo` per repository;
 * - its subject does not say it is a merge, bump, release, revert, formatting, lint, typo, CI,
 *   docs or dependency change, and no bot wrote it;
 * - its message, without trailers (Signed-off-by:, Closes #…, …) and bare URLs, has 8–250 words,
 *   and its subject is no other scanned commit's (a series of one mechanical change, "Reorder the
 *   includes" ×12, does not say which files each commit touched);
 * - it changes 1–4 non-test source files (code by languages.ts, not a test, example, vendored or
 *   generated path by the ranking's path penalties) and at most 12 files in all;
 * - the targets are the source files it modified (added ones do not exist at the base), at least one.
 * The query is the message as written (subject + body, trailers and URLs removed): nothing is added
 * from the diff and nothing is stripped, so a file or identifier is in the query exactly when the
 * author wrote it. The rows "names no target" count only instances whose message does not contain
 * any target's file name (without extension), the harder and more issue-like half.
 * The base is the commit's parent, checked out in a shared clone under --work and re-indexed
 * incrementally from one base to the next (oldest first); nothing is written into this checkout.
 *
 * Scored on a top-10 search (what an agent asking k = 10 gets), files in order of first appearance:
 * recall@5 = share of targets among the first 5 files, recall@10 = among all its files (at most 10),
 * MRR = 1 / rank of the first target file (0 when none). Means per repository, then over
 * repositories. BM25 alone (same chunks and tokens) and each variant run on the same index; a
 * variant `embed:<name>` re-embeds that index's chunks and the query as embed-variants.ts's <name>.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readBenchRepos } from "./checkout-repos.ts";

type Weight = import("../src/code/rank/tuning.ts").TunableWeight;
type Config = Partial<Record<Weight, number>>;

/** Other public repositories in the languages where peers lead: never used to write or tune a rule. */
const UNSEEN: { mirror: string; language: string }[] = [
  { mirror: "com-lihaoyi+os-lib", language: "scala" },
  { mirror: "scalameta+scalafmt", language: "scala" },
  { mirror: "circe+circe", language: "scala" },
  { mirror: "honojs+hono", language: "typescript" },
  { mirror: "colinhacks+zod", language: "typescript" },
  { mirror: "fastify+fastify", language: "javascript" },
  { mirror: "eslint+eslint", language: "javascript" },
  { mirror: "jqlang+jq", language: "c" },
  { mirror: "tmux+tmux", language: "c" },
  { mirror: "libuv+libuv", language: "c" },
  { mirror: "rust-lang+mdBook", language: "rust" },
  { mirror: "BurntSushi+ripgrep", language: "rust" },
  { mirror: "junegunn+fzf", language: "go" },
  { mirror: "caddyserver+caddy", language: "go" },
  { mirror: "spf13+cobra", language: "go" },
  { mirror: "urfave+cli", language: "go" },
];

/** Ranking variants scored beside the shipped one (`--variants`): each turns one mechanism off or on. */
const VARIANTS: Record<string, Config> = {
  "feedback-off": { feedbackWeight: 0 },
  "lexical-margin-off": { lexicalMarginBoost: 0 },
  /** The ranking before issue 20's second round (definition boost 3, same-file decay 0.5, no build-output or named test folder rule). */
  "round-start": {
    definitionBoost: 3,
    fileSaturationDecay: 0.5,
    buildOutputPenalty: 1,
    namedTestDirPenalty: 1,
  },
  "build-output-off": { buildOutputPenalty: 1 },
  "named-test-dirs-off": { namedTestDirPenalty: 1 },
  "decay-0": { fileSaturationDecay: 0 },
  "decay-0.1": { fileSaturationDecay: 0.1 },
  "decay-0.5": { fileSaturationDecay: 0.5 },
  "decay-0.35": { fileSaturationDecay: 0.35 },
  "path-0.5": { pathMatchBoost: 0.5 },
  "path-0.75": { pathMatchBoost: 0.75 },
  "path-1.5": { pathMatchBoost: 1.5 },
  "path-2": { pathMatchBoost: 2 },
  "definition-1": { definitionBoost: 1 },
  "definition-3": { definitionBoost: 3 },
  "definition-4": { definitionBoost: 4 },
  "alpha-0.3": { alphaNatural: 0.3 },
  "alpha-0.5": { alphaNatural: 0.5 },
  "coherence-0.1": { fileCoherenceShare: 0.1 },
  "coherence-0.4": { fileCoherenceShare: 0.4 },
  /** Questions' file coherence as every other query's (before issue 20's third round). */
  "question-coherence-0.2": { fileCoherenceQuestion: 0.2 },
};

const { values: args } = parseArgs({
  options: {
    mirrors: { type: "string", default: "/work/.mirror" },
    work: { type: "string", default: "/tmp/localise" },
    "per-repo": { type: "string", default: "15" },
    repos: { type: "string" },
    variants: { type: "string" },
    json: { type: "string" },
    verbose: { type: "boolean" },
  },
});
process.env.TRIFORGE_HOME ??= join(resolve(args.work), "home");
const perRepo = Number(args["per-repo"]);
const variantNames = args.variants ? args.variants.split(",") : [];
const { EMBED_VARIANTS, VariantEmbedder } = await import("./embed-variants.ts");
const embedVariant = (name: string) =>
  name.startsWith("embed:") ? EMBED_VARIANTS[name.slice(6)] : undefined;
for (const name of variantNames)
  if (!VARIANTS[name] && !embedVariant(name))
    throw new Error(
      `unknown variant ${name}: ${Object.keys(VARIANTS).join(", ")}, embed:<embed-variants.ts name>`,
    );

const { openIndex } = await import("../src/code/code-search.ts");
const { searchIndex } = await import("../src/code/search.ts");
const { setTuning } = await import("../src/code/rank/tuning.ts");
const { pathPenalty, STRONG_PATH_PENALTY } = await import("../src/code/rank/penalties.ts");
const { languageOf } = await import("../src/code/languages.ts");
const { loadModel } = await import("../src/embed/source.ts");

interface Source {
  name: string;
  language: string;
  split: "dev" | "unseen";
  gitDir: string;
}

function gitDirOf(mirror: string): string | undefined {
  for (const candidate of [join(args.mirrors, mirror, "repo", ".git"), join(args.mirrors, mirror, "repo")])
    if (existsSync(join(candidate, "HEAD"))) return candidate;
  return undefined;
}

function sources(): Source[] {
  const found: Source[] = [];
  for (const repo of readBenchRepos()) {
    const [owner, name] = new URL(repo.url).pathname.replace(/^\/|\.git$/g, "").split("/");
    const gitDir = gitDirOf(`${owner}+${name}`);
    if (gitDir) found.push({ name: repo.name, language: repo.language, split: "dev", gitDir });
  }
  for (const { mirror, language } of UNSEEN) {
    const gitDir = gitDirOf(mirror);
    if (gitDir) found.push({ name: mirror.split("+")[1], language, split: "unseen", gitDir });
    else console.error(`${mirror}: no mirror under ${args.mirrors}, skipped`);
  }
  return args.repos ? found.filter((s) => args.repos!.split(",").includes(s.name)) : found;
}

function git(cwd: string | undefined, gitArgs: string[]): string {
  const proc = Bun.spawnSync(["git", ...gitArgs], { cwd, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`git ${gitArgs.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

/**
 * Checks `commit` out in `tree`. Mirrors may lack some large blobs (fixtures, binaries): each path
 * git cannot read is left out of the checkout by a sparse-checkout exclusion, and git tries again.
 */
function checkout(tree: string, commit: string): boolean {
  const sparse = join(tree, ".git", "info", "sparse-checkout");
  if (!existsSync(sparse)) {
    git(tree, ["config", "core.sparseCheckout", "true"]);
    mkdirSync(join(tree, ".git", "info"), { recursive: true });
    writeFileSync(sparse, "/*\n");
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    const proc = Bun.spawnSync(["git", "checkout", "--quiet", "--force", "--detach", commit], {
      cwd: tree,
      stdout: "pipe",
      stderr: "pipe",
    });
    if (proc.exitCode === 0) return true;
    const missing = [...proc.stderr.toString().matchAll(/unable to read sha1 file of (.+) \([0-9a-f]+\)/g)];
    if (!missing.length) return false;
    appendFileSync(sparse, missing.map((m) => `!/${m[1]}\n`).join(""));
  }
  return false;
}

const EXCLUDED_SUBJECT =
  /\b(merge|bump(s|ed)?|release[sd]?|releasing|version|revert|format(ting)?|fmt|rustfmt|gofmt|prettier|clang-format|lint(ing)?|typos?|whitespace|ci|docs?|readme|changelog|deps|dependenc(y|ies)|dependabot|renovate|copyright|license|wip)\b/i;
const TRAILER =
  /^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by|assisted-by|cc|change-id|pr-url|closes|fixes|fixed|refs?|see|bug|issue)\b[:\s#]/i;
const BOT_AUTHOR = /\[bot\]|dependabot|renovate|github-actions/i;

interface Instance {
  repo: string;
  commit: string;
  parent: string;
  query: string;
  targets: string[];
  namesTarget: boolean;
}

/** The message as the query: trailers, bare URLs and `[skip ci]` markers removed. */
function cleanMessage(message: string): string {
  return message
    .split("\n")
    .filter((line) => !TRAILER.test(line) && !/^\s*(https?:\/\/\S+|\[skip ci\])\s*$/i.test(line))
    .join("\n")
    .trim();
}

const isSource = (path: string) =>
  languageOf(basename(path))?.kind === "code" && pathPenalty(path) > STRONG_PATH_PENALTY;

/** The newest `limit` instances of a repository by the rule above, oldest first. */
function instancesOf(source: Source, limit: number): Instance[] {
  const log = git(undefined, [
    `--git-dir=${source.gitDir}`,
    "log",
    "--no-merges",
    "--first-parent",
    "-n",
    "3000",
    "--format=%x1e%H %P%x1f%an%x1f%B%x1f",
    "--name-status",
    "--no-renames",
    "HEAD",
  ]);
  const found: Instance[] = [];
  const records = log.split("\x1e").slice(1);
  const subjectOf = (record: string) => record.split("\x1f")[2].trim().split("\n")[0].toLowerCase();
  const subjectCount = new Map<string, number>();
  for (const record of records)
    subjectCount.set(subjectOf(record), (subjectCount.get(subjectOf(record)) ?? 0) + 1);
  for (const record of records) {
    if (found.length >= limit) break;
    // A subject shared by several commits is a series of one mechanical change: it names none of them.
    if ((subjectCount.get(subjectOf(record)) ?? 0) > 1) continue;
    const [ids, author, message, status] = record.split("\x1f");
    const [commit, parent, ...more] = ids.trim().split(" ");
    if (!parent || more.length || BOT_AUTHOR.test(author)) continue;
    const query = cleanMessage(message);
    const subject = query.split("\n")[0];
    const words = query.match(/[A-Za-z]{2,}/g)?.length ?? 0;
    if (EXCLUDED_SUBJECT.test(subject) || words < 8 || words > 250) continue;
    const changes = status
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split("\t"));
    if (changes.length > 12) continue;
    const sourceChanges = changes.filter(([, path]) => isSource(path));
    if (sourceChanges.length < 1 || sourceChanges.length > 4) continue;
    const targets = sourceChanges.filter(([kind]) => kind === "M").map(([, path]) => path);
    if (!targets.length) continue;
    const lower = query.toLowerCase();
    const namesTarget = targets.some((t) => {
      const name = basename(t);
      return lower.includes(
        name.slice(0, name.indexOf(".") > 0 ? name.indexOf(".") : undefined).toLowerCase(),
      );
    });
    found.push({ repo: source.name, commit, parent, query, targets, namesTarget });
  }
  return found.reverse();
}

interface Scores {
  r5: number;
  r10: number;
  mrr: number;
}

function score(files: string[], targets: string[]): Scores {
  const rankOf = targets.map((t) => files.indexOf(t));
  const within = (k: number) => rankOf.filter((r) => r >= 0 && r < k).length / targets.length;
  const first = Math.min(...rankOf.filter((r) => r >= 0));
  return { r5: within(5), r10: within(10), mrr: Number.isFinite(first) ? 1 / (first + 1) : 0 };
}

const model = await loadModel();
const columns = ["hybrid", "bm25", ...variantNames];
const embedder = new VariantEmbedder(model);
type Row = { instance: Instance; split: string; language: string; scores: Record<string, Scores> };
const rows: Row[] = [];
const started = performance.now();
mkdirSync(args.work, { recursive: true });
for (const source of sources()) {
  const repoStart = performance.now();
  const instances = instancesOf(source, perRepo);
  const tree = join(resolve(args.work), "trees", source.name);
  if (!existsSync(join(tree, ".git")))
    git(undefined, ["clone", "--quiet", "--shared", "--no-checkout", source.gitDir, tree]);
  let indexMs = 0;
  embedder.clear();
  for (const instance of instances) {
    if (!checkout(tree, instance.parent)) {
      console.error(`${source.name} ${instance.parent.slice(0, 12)}: checkout failed, skipped`);
      continue;
    }
    const indexStart = performance.now();
    const index = await openIndex(tree, { refresh: "now" });
    indexMs += performance.now() - indexStart;
    const known = new Set(index.files.map((f) => f.path));
    instance.targets = instance.targets.filter((t) => known.has(t));
    if (!instance.targets.length) continue;
    const vector = await model.embed(instance.query.trim());
    const scores: Record<string, Scores> = {};
    for (const column of columns) {
      const embedding = embedVariant(column);
      const own = index.vectors;
      let queryVector = vector;
      if (embedding) {
        const { vectors, weights } = await embedder.embedIndex(index, embedding);
        index.vectors = vectors;
        queryVector = await embedder.embedQuery(instance.query.trim(), embedding, weights);
      }
      setTuning(VARIANTS[column] ?? {});
      const ranked = searchIndex(index, instance.query, queryVector, {
        topK: 10,
        content: "code",
        mode: column === "bm25" ? "bm25" : "hybrid",
      });
      setTuning({});
      index.vectors = own;
      const files = [...new Set(ranked.map(({ chunk }) => index.files[index.chunkFile[chunk]].path))];
      scores[column] = score(files, instance.targets);
      if (args.verbose && column === "hybrid" && scores.hybrid.r5 < 1)
        console.log(
          `  r@5 ${scores.hybrid.r5.toFixed(2)} ${instance.query.split("\n")[0]}\n    want ${instance.targets.join(", ")}\n    got  ${files.join(", ")}`,
        );
    }
    rows.push({ instance, split: source.split, language: source.language, scores });
  }
  const mine = rows.filter((r) => r.instance.repo === source.name);
  console.log(
    `${source.name.padEnd(14)} ${source.language.padEnd(11)} ${source.split.padEnd(7)} ${String(mine.length).padStart(3)} instances  recall@5 ${mean(mine.map((r) => r.scores.hybrid.r5)).toFixed(3)} (bm25 ${mean(mine.map((r) => r.scores.bm25.r5)).toFixed(3)})  ${((performance.now() - repoStart) / 1000).toFixed(1)} s (re-index ${(indexMs / 1000).toFixed(1)} s)`,
  );
}

function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** Mean over repositories of each repository's mean of `metric` in `column`, over `subset`. */
function aggregate(subset: Row[], column: string, metric: keyof Scores): number {
  const byRepo = new Map<string, number[]>();
  for (const row of subset) {
    const list = byRepo.get(row.instance.repo) ?? [];
    list.push(row.scores[column][metric]);
    byRepo.set(row.instance.repo, list);
  }
  return mean([...byRepo.values()].map(mean));
}

const metrics: (keyof Scores)[] = ["r5", "r10", "mrr"];
const header = `${"".padEnd(34)}${columns.map((c) => `${c} r@5/r@10/MRR`.padStart(24)).join("")}`;
const line = (label: string, subset: Row[]) =>
  `${`${label} (${subset.length})`.padEnd(34)}${columns
    .map((c) =>
      metrics
        .map((m) => aggregate(subset, c, m).toFixed(3))
        .join(" / ")
        .padStart(24),
    )
    .join("")}`;
console.log(
  `\nfile localisation, ${rows.length} instances, ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
console.log(header);
for (const split of ["unseen", "dev"]) {
  const subset = rows.filter((r) => r.split === split);
  if (!subset.length) continue;
  console.log(line(`${split}`, subset));
  console.log(
    line(
      `${split}, names no target`,
      subset.filter((r) => !r.instance.namesTarget),
    ),
  );
}
console.log("\nper language (unseen repositories)");
for (const language of [...new Set(rows.filter((r) => r.split === "unseen").map((r) => r.language))].sort())
  console.log(
    line(
      language,
      rows.filter((r) => r.split === "unseen" && r.language === language),
    ),
  );
console.log("\nper repository");
for (const repo of [...new Set(rows.map((r) => r.instance.repo))])
  console.log(
    line(
      repo,
      rows.filter((r) => r.instance.repo === repo),
    ),
  );

if (args.json)
  writeFileSync(
    args.json,
    `${JSON.stringify(
      rows.map((r) => ({
        repo: r.instance.repo,
        split: r.split,
        language: r.language,
        commit: r.instance.commit,
        targets: r.instance.targets,
        namesTarget: r.instance.namesTarget,
        scores: r.scores,
      })),
      null,
      2,
    )}\n`,
  );
