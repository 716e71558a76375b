#!/usr/bin/env bun
/**
 * Code-search quality out of sample: NDCG@10 per repository, category and language, in-sample and
 * leave-one-repository-out, next to BM25 alone from the same run.
 *
 *   TRIFORGE_BENCH_REPOS=/tmp/bench-repos bun benchmark/code-cv.ts [--repos a,b] [--json out.json]
 *
 * Each ranking weight of src/code/rank/tuning.ts gets a small grid. Every grid point is scored on
 * every repository over the same loaded indexes and query embeddings (only the ranking runs again).
 * In-sample: each weight takes the value best on all repositories. Leave-one-out: for each
 * repository, each weight takes the value best on the others (ties keep the shipped constant), and
 * the held-out repository is scored with those values together. "alone" rows tune one weight and
 * keep the others at their constants: a mechanism is worth keeping when its LOO row beats the
 * shipped figure. The shipped constants were themselves chosen on these repositories, so the
 * shipped figure is an in-sample one too. The metric is benchmark/code-quality.ts's.
 */
import { existsSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { benchReposDir } from "./bench-repos.ts";
import { readBenchRepos } from "./checkout-repos.ts";
import { benchRoot, type Hit, ndcgAt10, type Query, readAnnotations } from "./code-quality.ts";

const K = 10;

type Weight = import("../src/code/rank/tuning.ts").TunableWeight;
type Config = Partial<Record<Weight, number>>;

/** The grid of each weight; the first value listed is not special, the constant is (ties keep it). */
const GRID: Record<Weight, { shipped: number; values: number[] }> = {
  alphaNatural: { shipped: 0.4, values: [0.2, 0.3, 0.4, 0.5, 0.6] },
  alphaSymbol: { shipped: 0.3, values: [0.1, 0.2, 0.3, 0.4, 0.5] },
  definitionBoost: { shipped: 3, values: [1, 2, 3, 4, 6] },
  pathMatchBoost: { shipped: 1, values: [0.5, 0.75, 1, 1.5, 2] },
  fileCoherenceShare: { shipped: 0.2, values: [0, 0.1, 0.2, 0.3, 0.4] },
  strongPathPenalty: { shipped: 0.3, values: [0.15, 0.2, 0.3, 0.45, 0.6] },
  feedbackWeight: { shipped: 0, values: [0, 0.15, 0.3, 0.5] },
  centralityWeight: { shipped: 0, values: [0, 0.1, 0.2, 0.4] },
};

const { values: args } = parseArgs({
  options: { repos: { type: "string" }, json: { type: "string" }, weights: { type: "string" } },
});
const reposDir = benchReposDir();
const { openIndex } = await import("../src/code/code-search.ts");
const { searchIndex } = await import("../src/code/search.ts");
const { setTuning } = await import("../src/code/rank/tuning.ts");
const { loadModel } = await import("../src/embed/source.ts");
type CodeIndex = import("../src/code/store.ts").CodeIndex;

interface Repo {
  name: string;
  language: string;
  prefix: string;
  index: CodeIndex;
  queries: Query[];
  vectors: Float32Array[];
}

const model = await loadModel();
const repos: Repo[] = [];
const loadStart = performance.now();
for (const repo of readBenchRepos()) {
  if (args.repos && !args.repos.split(",").includes(repo.name)) continue;
  const { root, prefix } = benchRoot(reposDir, repo);
  if (!existsSync(root)) {
    console.error(`${repo.name}: not checked out, skipped`);
    continue;
  }
  const index = await openIndex(root, { refresh: "now" });
  const queries = readAnnotations(repo.name);
  const vectors = await Promise.all(queries.map((q) => model.embed(q.query.trim())));
  repos.push({ name: repo.name, language: repo.language, prefix, index, queries, vectors });
}
console.log(
  `${repos.length} repositories loaded in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`,
);

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Per-query NDCG@10 of one repository under `config` (or BM25 alone). */
function scoreRepo(repo: Repo, config: Config, mode: "hybrid" | "bm25" = "hybrid"): number[] {
  setTuning(config);
  try {
    return repo.queries.map((query, q) => {
      const ranked = searchIndex(repo.index, query.query, repo.vectors[q], {
        topK: K,
        content: "code",
        mode,
      });
      const hits: Hit[] = ranked.map(({ chunk }) => ({
        file_path: repo.index.files[repo.index.chunkFile[chunk]].path,
        start_line: repo.index.chunkStart[chunk],
        end_line: repo.index.chunkEnd[chunk],
      }));
      return ndcgAt10(hits, query, repo.prefix);
    });
  } finally {
    setTuning({});
  }
}

const weights = (args.weights ? args.weights.split(",") : Object.keys(GRID)) as Weight[];
const shipped: Config = {};
const gridStart = performance.now();
const shippedScores = repos.map((r) => scoreRepo(r, shipped));
const bm25Scores = repos.map((r) => scoreRepo(r, shipped, "bm25"));
/** table[weight][value index][repo] = mean NDCG@10 of that repository with that one value changed. */
const table: Record<string, number[][]> = {};
for (const weight of weights) {
  const { shipped: constant, values } = GRID[weight];
  table[weight] = values.map((value) =>
    value === constant ? shippedScores.map(mean) : repos.map((r) => mean(scoreRepo(r, { [weight]: value }))),
  );
}
const gridSeconds = (performance.now() - gridStart) / 1000;

/** The value of `weight` with the best mean over the repositories `among`; ties keep the constant. */
function choose(weight: Weight, among: number[]): number {
  const { shipped: constant, values } = GRID[weight];
  let best = constant;
  let bestScore = mean(among.map((r) => table[weight][values.indexOf(constant)][r]));
  values.forEach((value, v) => {
    const score = mean(among.map((r) => table[weight][v][r]));
    if (score > bestScore + 1e-9) {
      best = value;
      bestScore = score;
    }
  });
  return best;
}

const all = repos.map((_, r) => r);
const inSampleConfig = Object.fromEntries(weights.map((w) => [w, choose(w, all)])) as Config;
const inSampleScores = repos.map((r) => scoreRepo(r, inSampleConfig));
const looConfigs: Config[] = [];
const looScores = repos.map((repo, held) => {
  const others = all.filter((r) => r !== held);
  const config = Object.fromEntries(weights.map((w) => [w, choose(w, others)])) as Config;
  looConfigs.push(config);
  return scoreRepo(repo, config);
});
/** Each weight tuned alone, the others at their constants: in-sample and leave-one-out, per repository. */
const alone = Object.fromEntries(
  weights.map((w) => {
    const values = GRID[w].values;
    const inSample = table[w][values.indexOf(choose(w, all))];
    const loo = all.map((held) => {
      const chosen = choose(
        w,
        all.filter((r) => r !== held),
      );
      return table[w][values.indexOf(chosen)][held];
    });
    return [w, { inSample: mean(inSample), loo: mean(loo), chosen: choose(w, all) }];
  }),
);

// Aggregates: overall and per category are means of per-repository means (code-quality.ts's rule).
const columns = { shipped: shippedScores, "in-sample": inSampleScores, LOO: looScores, bm25: bm25Scores };
/** Mean per repository in `among` of its queries that pass `filter` (repositories without any left out). */
const repoMeans = (scores: number[][], filter: (q: Query) => boolean, among: number[]) =>
  among
    .map((r) => scores[r].filter((_, q) => filter(repos[r].queries[q])))
    .filter((xs) => xs.length)
    .map(mean);
const row = (label: string, filter: (q: Query) => boolean, among = all) => {
  const cells = Object.values(columns).map((scores) =>
    mean(repoMeans(scores, filter, among))
      .toFixed(3)
      .padStart(9),
  );
  return `${label.padEnd(30)}${cells.join("")}`;
};
const header = `${"".padEnd(30)}${Object.keys(columns)
  .map((c) => c.padStart(9))
  .join("")}`;

console.log(
  `\nNDCG@10, ${repos.length} repositories, ${repos.reduce((n, r) => n + r.queries.length, 0)} queries`,
);
console.log(header);
console.log(row("overall", () => true));
const categories = [...new Set(repos.flatMap((r) => r.queries.map((q) => q.category)))].sort();
for (const category of categories) console.log(row(category, (q) => q.category === category));
console.log("\nper language (its repositories)");
const languages = [...new Set(repos.map((r) => r.language))].sort();
for (const language of languages) {
  const among = all.filter((r) => repos[r].language === language);
  console.log(row(`${language} (${among.map((r) => repos[r].name).join(", ")})`, () => true, among));
}
console.log("\neach weight tuned alone (the others at their constants)");
console.log(
  `${"".padEnd(30)}${"constant".padStart(9)}${"chosen".padStart(9)}${"in-sample".padStart(10)}${"LOO".padStart(9)}`,
);
const shippedOverall = mean(shippedScores.map(mean));
console.log(
  `${"(shipped)".padEnd(30)}${"".padStart(18)}${shippedOverall.toFixed(3).padStart(10)}${shippedOverall.toFixed(3).padStart(9)}`,
);
for (const w of weights) {
  const a = alone[w];
  console.log(
    `${w.padEnd(30)}${String(GRID[w].shipped).padStart(9)}${String(a.chosen).padStart(9)}${a.inSample.toFixed(3).padStart(10)}${a.loo.toFixed(3).padStart(9)}`,
  );
}
const choices = weights.map((w) => `${w} ${[...new Set(looConfigs.map((c) => c[w]))].join("/")}`);
console.log(`\nvalues chosen across the ${repos.length} leave-one-out folds: ${choices.join(", ")}`);
console.log(
  `grid: ${gridSeconds.toFixed(1)} s for ${weights.reduce((n, w) => n + GRID[w].values.length - 1, 1)} configurations`,
);

if (args.json)
  writeFileSync(
    args.json,
    `${JSON.stringify(
      {
        repos: repos.map((r, i) => ({
          name: r.name,
          language: r.language,
          shipped: mean(shippedScores[i]),
          inSample: mean(inSampleScores[i]),
          loo: mean(looScores[i]),
          bm25: mean(bm25Scores[i]),
          looConfig: looConfigs[i],
        })),
        inSampleConfig,
        alone,
        table,
      },
      null,
      2,
    )}\n`,
  );
