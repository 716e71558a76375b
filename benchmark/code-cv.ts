#!/usr/bin/env bun
/**
 * Code-search quality out of sample: NDCG@10 per repository, category and language, in-sample and
 * leave-one-repository-out, next to BM25 alone from the same run.
 *
 *   TRIFORGE_BENCH_REPOS=/tmp/bench-repos bun benchmark/code-cv.ts [--repos a,b] [--groups a,b] [--timing] [--json out.json]
 *     [--embed split,idf-q,…]
 *
 * Each ranking weight of src/code/rank/tuning.ts gets a small grid. Every grid point is scored on
 * every repository over the same loaded indexes and query embeddings (only the ranking runs again).
 * In-sample: each weight takes the value best on all repositories. Leave-one-out: for each
 * repository, each weight takes the value best on the others (ties keep the shipped constant), and
 * the held-out repository is scored with those values together. "LOO 1-SE" is the same, except that
 * a fold keeps a constant unless another value beats it by more than one standard error of its
 * per-repository gain over the other repositories. `--embed` scores what the model embeds per chunk
 * (embed-variants.ts: each variant's vectors in place of the index's, the weights at their
 * constants), each alone and chosen per fold among them. "alone" rows tune one weight and
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

/** A grid of one weight: each value changes it alone. */
const single = (weight: Weight, values: number[]): Config[] => values.map((value) => ({ [weight]: value }));
/** Every combination of the values of several weights, after `off` (the mechanism unused). */
function product(off: Config, grids: Partial<Record<Weight, number[]>>): Config[] {
  let configs: Config[] = [{}];
  for (const [weight, values] of Object.entries(grids))
    configs = configs.flatMap((config) => values.map((value) => ({ ...config, [weight]: value })));
  return [off, ...configs];
}

/**
 * The groups of weights chosen together, each a list of settings besides the shipped constants
 * (which every group also tries first, and which ties keep). Groups touch disjoint weights, so the
 * settings chosen for each combine into one.
 */
const ALTERNATIVES: Record<string, Config[]> = {
  alphaNatural: single("alphaNatural", [0.2, 0.3, 0.5, 0.6]),
  alphaSymbol: single("alphaSymbol", [0.1, 0.2, 0.4, 0.5]),
  fileCoherenceQuestion: single("fileCoherenceQuestion", [0.1, 0.2, 0.3, 0.6]),
  definitionBoost: single("definitionBoost", [1, 3, 4, 6]),
  pathMatchBoost: single("pathMatchBoost", [0.5, 0.75, 1.5, 2]),
  fileCoherenceShare: single("fileCoherenceShare", [0, 0.1, 0.3, 0.4]),
  fileSaturationDecay: single("fileSaturationDecay", [0, 0.1, 0.35, 0.5]),
  buildOutputPenalty: single("buildOutputPenalty", [1]),
  namedTestDirPenalty: single("namedTestDirPenalty", [1]),
  strongPathPenalty: single("strongPathPenalty", [0.15, 0.2, 0.45, 0.6]),
  lexicalMargin: product(
    { lexicalMarginBoost: 0 },
    { lexicalMarginBoost: [0.25, 0.75, 1], lexicalMarginRatio: [1.1, 1.35, 1.5] },
  ),
  feedback: product(
    { feedbackWeight: 0 },
    {
      feedbackWeight: [0.15, 0.3, 0.5],
      feedbackChunks: [5, 10],
      feedbackTerms: [3, 5, 10],
      feedbackSupport: [2, 3],
    },
  ),
};
const GROUPS: Record<string, Config[]> = Object.fromEntries(
  Object.entries(ALTERNATIVES).map(([group, configs]) => [group, [{}, ...configs]]),
);
const describe = (config: Config) =>
  Object.entries(config)
    .map(([weight, value]) => `${weight} ${value}`)
    .join(" ") || "the constants";

const { values: args } = parseArgs({
  options: {
    repos: { type: "string" },
    json: { type: "string" },
    groups: { type: "string" },
    timing: { type: "boolean" },
    embed: { type: "string" },
  },
});
const reposDir = benchReposDir();
const { openIndex, searchLoaded } = await import("../src/code/code-search.ts");
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

const groups = args.groups ? args.groups.split(",") : Object.keys(GROUPS);
const gridStart = performance.now();
const shippedScores = repos.map((r) => scoreRepo(r, {}));
const bm25Scores = repos.map((r) => scoreRepo(r, {}, "bm25"));
/** table[group][setting][repo] = per-query NDCG@10 of that repository with that setting (the rest at constants). */
const table: Record<string, number[][][]> = {};
for (const group of groups)
  table[group] = GROUPS[group].map((config, c) =>
    c === 0 ? shippedScores : repos.map((r) => scoreRepo(r, config)),
  );
const settings = groups.reduce((n, g) => n + GROUPS[g].length - 1, 1);
const gridSeconds = (performance.now() - gridStart) / 1000;

/**
 * The index of the setting of `group` with the best mean over the repositories `among`; ties keep
 * the constants. With `oneStandardError`, the constants are kept unless the best setting beats them
 * by more than one standard error of its per-repository gain (the usual guard against choosing
 * noise: a setting that wins on a few repositories and loses on others does not count).
 */
function choose(group: string, among: number[], oneStandardError = false): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  table[group].forEach((perRepo, c) => {
    const score = mean(among.map((r) => mean(perRepo[r])));
    if (score > bestScore + 1e-9) {
      best = c;
      bestScore = score;
    }
  });
  if (!oneStandardError || best === 0) return best;
  const gains = among.map((r) => mean(table[group][best][r]) - mean(table[group][0][r]));
  const average = mean(gains);
  const variance = gains.reduce((sum, g) => sum + (g - average) ** 2, 0) / Math.max(1, gains.length - 1);
  return average > Math.sqrt(variance / gains.length) ? best : 0;
}
const chosenConfig = (among: number[], oneStandardError = false): Config =>
  Object.assign({}, ...groups.map((g) => GROUPS[g][choose(g, among, oneStandardError)]));

const all = repos.map((_, r) => r);
const others = (held: number) => all.filter((r) => r !== held);
const inSampleConfig = chosenConfig(all);
const inSampleScores = repos.map((r) => scoreRepo(r, inSampleConfig));
const looConfigs = all.map((held) => chosenConfig(others(held)));
const looScores = repos.map((repo, held) => scoreRepo(repo, looConfigs[held]));
const looGuardedConfigs = all.map((held) => chosenConfig(others(held), true));
const looGuardedScores = repos.map((repo, held) => scoreRepo(repo, looGuardedConfigs[held]));
/**
 * Each group tuned alone, the others at their constants: per-query scores with the setting chosen on
 * all repositories (in-sample) and with the setting chosen on the others (leave-one-out).
 */
const alone = Object.fromEntries(
  groups.map((g) => [
    g,
    {
      chosen: GROUPS[g][choose(g, all)],
      inSample: table[g][choose(g, all)],
      loo: all.map((held) => table[g][choose(g, others(held))][held]),
      looChoices: [...new Set(all.map((held) => describe(GROUPS[g][choose(g, others(held))])))],
    },
  ]),
);

// Aggregates: overall and per category are means of per-repository means (code-quality.ts's rule).
const columns = {
  shipped: shippedScores,
  "in-sample": inSampleScores,
  LOO: looScores,
  "LOO 1-SE": looGuardedScores,
  bm25: bm25Scores,
};
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
// Where leave-one-out loses against the constants: each repository whose fold chose otherwise, worst first.
const looLosses = all
  .map((r) => ({ r, change: mean(looScores[r]) - mean(shippedScores[r]) }))
  .filter(({ change }) => Math.abs(change) > 5e-4)
  .sort((a, b) => a.change - b.change);
console.log("\nleave-one-out against the constants, by repository (its fold's choices):");
for (const { r, change } of looLosses)
  console.log(
    `  ${repos[r].name.padEnd(14)}${mean(shippedScores[r]).toFixed(3)} -> ${mean(looScores[r]).toFixed(3)} (${change >= 0 ? "+" : ""}${change.toFixed(3)})  ${describe(looConfigs[r])}`,
  );
console.log("\neach group tuned alone (the others at their constants): in-sample / leave-one-out");
const categoryFilters: [string, (q: Query) => boolean][] = [
  ["overall", () => true],
  ...categories.map((c): [string, (q: Query) => boolean] => [c, (q) => q.category === c]),
];
console.log(`${"".padEnd(20)}${categoryFilters.map(([c]) => c.padStart(16)).join("")}   chosen on all`);
const figures = (inSample: number[][], loo: number[][]) =>
  categoryFilters
    .map(([, f]) =>
      `${mean(repoMeans(inSample, f, all)).toFixed(3)} / ${mean(repoMeans(loo, f, all)).toFixed(3)}`.padStart(
        16,
      ),
    )
    .join("");
console.log(`${"(shipped)".padEnd(20)}${figures(shippedScores, shippedScores)}`);
for (const g of groups)
  console.log(`${g.padEnd(20)}${figures(alone[g].inSample, alone[g].loo)}   ${describe(alone[g].chosen)}`);
console.log("\nsettings chosen across the leave-one-out folds:");
for (const g of groups) console.log(`  ${g}: ${alone[g].looChoices.join(" | ")}`);
console.log(`grid: ${gridSeconds.toFixed(1)} s for ${settings} settings`);
if (args.embed) {
  const { compareEmbeddings } = await import("./embed-variants.ts");
  await compareEmbeddings(model, repos, args.embed.split(","), (r) => scoreRepo(r, {}), shippedScores);
}

/** Mechanisms that cost query time, and what turns each off: `--timing` compares them with the constants. */
const MECHANISMS_OFF: Record<string, Config> = {
  feedback: { feedbackWeight: 0 },
  "issue 20 round 3 (questions' file coherence 0.4)": { fileCoherenceQuestion: 0.2 },
  "issue 20 round 2 (definition boost 2, decay 0.25, build output, named test folders)": {
    definitionBoost: 3,
    fileSaturationDecay: 0.5,
    buildOutputPenalty: 1,
    namedTestDirPenalty: 1,
  },
};
if (args.timing) {
  const ROUNDS = 5;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `\nwarm query p50 (searchLoaded, query embedding included; ${ROUNDS} interleaved rounds), median over repositories`,
  );
  for (const [name, off] of Object.entries(MECHANISMS_OFF)) {
    const p50 = { on: [] as number[], off: [] as number[] };
    for (const repo of repos) {
      const times = { on: [] as number[], off: [] as number[] };
      for (let round = 0; round < ROUNDS; round++)
        for (const query of repo.queries) {
          // The first search of a query fills per-query caches (its embedding, its words' tokens)
          // that the next one finds: an untimed one first, and the sides in turn, so neither pays it.
          setTuning({});
          await searchLoaded(repo.index, query.query, { topK: K });
          const sides = round % 2 ? (["off", "on"] as const) : (["on", "off"] as const);
          for (const side of sides) {
            setTuning(side === "on" ? {} : off);
            const started = performance.now();
            await searchLoaded(repo.index, query.query, { topK: K });
            times[side].push(performance.now() - started);
          }
        }
      setTuning({});
      p50.on.push(median(times.on));
      p50.off.push(median(times.off));
    }
    const on = median(p50.on);
    const without = median(p50.off);
    console.log(
      `  ${name}: ${on.toFixed(3)} ms with it, ${without.toFixed(3)} ms without (${(on / without).toFixed(2)}×); largest repository ${Math.max(...p50.on).toFixed(3)} vs ${Math.max(...p50.off).toFixed(3)} ms`,
    );
  }
}

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
          looGuarded: mean(looGuardedScores[i]),
          bm25: mean(bm25Scores[i]),
          looConfig: looConfigs[i],
          looGuardedConfig: looGuardedConfigs[i],
        })),
        inSampleConfig,
        alone: Object.fromEntries(
          groups.map((g) => [
            g,
            {
              chosen: alone[g].chosen,
              inSample: mean(alone[g].inSample.map(mean)),
              loo: mean(alone[g].loo.map(mean)),
            },
          ]),
        ),
        table: Object.fromEntries(
          groups.map((g) => [g, GROUPS[g].map((config, c) => ({ config, perRepo: table[g][c].map(mean) }))]),
        ),
      },
      null,
      2,
    )}\n`,
  );
