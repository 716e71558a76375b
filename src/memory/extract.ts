/**
 * The local knowledge-graph extractor: what graph retrieval runs on when there is no LLM. It finds the
 * things coding conversations are about — file paths, code identifiers, quoted terms, capitalised
 * names, versions, tools — and relates the ones that share a sentence, with the words between them as
 * the relation (so a fact reads like the sentence: "Caroline / went to / LGBTQ support group").
 */
import type { ChunkGraph, EntityMention, FactMention } from "../store/types.ts";
import { normalizePhrase, phraseLabel } from "./phrases.ts";

interface Span {
  start: number;
  end: number;
  text: string;
  /** Higher wins an overlap: an explicit mention (quotes, a path) beats a guess (a capitalised word). */
  priority: number;
}

/** Extensions that make a bare name a file name (`config.json`); the summary's Files: line uses them too. */
export const FILE_EXTENSIONS =
  "ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|py|rs|go|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|ps1|yml|yaml|toml|ini|cfg|sql|html|css|scss|vue|svelte|lock|txt|env|dockerfile|xml|gradle|ex|exs|hs|scala|zig|lua|dart";

const PATTERNS: { re: RegExp; priority: number; group?: number }[] = [
  // Paths with a folder (src/a/b.ts, ./x, ~/y, C:\z) and bare file names with a known extension.
  // The last character is not a dot: `see lib/a.ts.` ends a sentence, the path is `lib/a.ts`.
  { re: /(?:~|\.{1,2}|[A-Za-z]:)?[\\/]?(?:[\w@.+-]+[\\/])+[\w@.+-]*[\w@+-]/g, priority: 6 },
  { re: new RegExp(`\\b[\\w.-]+\\.(?:${FILE_EXTENSIONS})\\b`, "gi"), priority: 6 },
  // `code`, "quoted", “quoted”, «quoted», 'quoted' (not an apostrophe inside a word).
  { re: /`([^`\n]{1,60})`/g, priority: 5, group: 1 },
  { re: /"([^"\n]{2,60})"/g, priority: 5, group: 1 },
  { re: /[“«]([^”»\n]{2,60})[”»]/g, priority: 5, group: 1 },
  { re: /(?<![\p{L}\p{N}])'([^'\n]{2,60})'(?![\p{L}\p{N}])/gu, priority: 4, group: 1 },
  // Identifiers: dotted (user.id, os.path.join()), snake_case / SCREAMING_CASE, camelCase, PascalCase with humps.
  { re: /\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\))?/g, priority: 4 },
  { re: /\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b/g, priority: 4 },
  { re: /\b[a-z]+(?:[A-Z][a-z0-9]*)+\b(?:\(\))?/g, priority: 4 },
  { re: /\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b/g, priority: 4 },
  // kebab-case names: packages, services, CLI commands and flags (billing-service, --dry-run).
  { re: /(?<![\w-])-{0,2}[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b/g, priority: 4 },
  // Versions, with the name they belong to when there is one (Python 3.12, react v18.2.0).
  { re: /\b(?:[A-Za-z][\w.+-]*\s+)?v?\d+\.\d+(?:\.\d+)*(?:-[\w.]+)?\b/g, priority: 3 },
  // Capitalised names of one or more words, joined by a few lower-case particles (University of Copenhagen).
  {
    re: /(?<![\p{L}\p{N}_])\p{Lu}[\p{L}\p{N}'’-]*(?:\s+(?:(?:of|the|de|du|del|der|da|di|von|van|la|le|for|and|&)\s+)*\p{Lu}[\p{L}\p{N}'’-]*)*(?:\+\+|#)?/gu,
    priority: 2,
  },
];

/** Well-known tools and technologies, matched in any case (users write "postgres", "Postgres", "POSTGRES"). */
const TOOLS = new Set(
  (
    "git github gitlab npm npx pnpm yarn bun deno node nodejs typescript javascript python pip poetry uv rust cargo go golang java kotlin " +
    "swift ruby rails php docker kubernetes kubectl helm terraform ansible aws gcp azure postgres postgresql mysql sqlite redis mongodb " +
    "elasticsearch kafka rabbitmq nginx linux macos windows bash zsh powershell vim neovim emacs vscode cursor webpack vite esbuild rollup " +
    "babel eslint prettier biome jest vitest mocha pytest react vue svelte angular nextjs nuxt express fastapi django flask spring graphql " +
    "grpc openai anthropic claude ollama llama pgvector numpy pandas pytorch tensorflow jupyter make cmake gradle maven curl wget ssh jq " +
    "sed awk grep ripgrep tmux homebrew apt"
  ).split(" "),
);
const TOOL_WORD = /(?<![\p{L}\p{N}_.\-/])[\p{L}][\p{L}\p{N}.+#-]*(?![\p{L}\p{N}_])/gu;

/**
 * Capitalised words that start sentences without naming anything. A capitalised single word at a
 * sentence start is kept only when it is not one of these.
 */
const COMMON_CAPITALISED = new Set(
  (
    "i i'm i've i'll i'd a an the this that these those it it's its we you he she they there here what when where why how who which " +
    "yes no not yeah yep nope ok okay oh hey hi hello thanks thank sure well so and but or if then also just now let let's please " +
    "great good nice cool wow awesome sounds sorry maybe perhaps actually really definitely absolutely right done fixed added " +
    "is are was were do does did can could should would will have has had my your our their his her me us them all any some " +
    "next first then finally after before while since because however although though instead still yet on in at for to from by with " +
    "as of about into over under up down out off again once one two three new old every each both either neither no none nothing " +
    "something everything anything today yesterday tomorrow tonight glad happy haha lol hmm uh um congrats congratulations bye woah whoa ah aw awww totally gonna wanna"
  ).split(" "),
);

/**
 * Words that end a keyphrase (RAKE's delimiters): function words, and the verbs, adverbs and chat
 * fillers that carry no topic. What is left between them ("support group", "login flow", "pottery
 * class") names what a conversation is about even when nothing is capitalised or quoted.
 */
const PHRASE_DELIMITERS = new Set(
  (
    "a about above after again against all almost along already also although always am among an and another any anyone anything " +
    "anyway are around as at away back be became because become becomes been before being below best better between both but by " +
    "came can cannot could did do does doing done down during each either else enough especially even ever every everyone " +
    "everything exactly few for from further get gets getting give given gives go goes going gone good got great had has have " +
    "having he her here hers herself him himself his how however i if in indeed instead into is it its itself just keep kept kind " +
    "know known knows last least less let like likely lot lots made make makes making many may maybe me might mine more most " +
    "much must my myself need needs never new next nice no none nor not nothing now of off often oh ok okay on once one only onto " +
    "or other others otherwise our ours ourselves out over own perhaps please pretty quite rather really right said same say says " +
    "see seem seems seen several shall she should show since so some somehow someone something sometimes soon still such sure " +
    "take taken takes tell than thank thanks that the their theirs them themselves then there these they thing things think " +
    "this those though through thus to together too took toward try trying two under until up upon us use used using very want " +
    "wants was way we well went were what whatever when where whether which while who whole whom whose why will with within " +
    "without would yeah yes yet you your yours yourself yourselves feel feels felt love loved loving glad happy hope hoping " +
    "wow awesome amazing cool totally definitely absolutely actually lately recently today yesterday tomorrow tonight week weeks " +
    "day days year years time times ago also hey hi hello bye sounds sound looks look looking gonna wanna super fun lol haha " +
    "'s 's i'm i've i'll i'd it's that's you're you've we're they're don't can't didn't isn't wasn't won't there's what's"
  ).split(" "),
);
const PHRASE_WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;
const MAX_KEYPHRASE_WORDS = 3;

/** RAKE-style keyphrases: runs of non-delimiter words inside one clause, the last 3 words kept. */
function keyphraseSpans(sentence: string): Span[] {
  const spans: Span[] = [];
  let run: RegExpMatchArray[] = [];
  const flush = () => {
    const words = run.slice(-MAX_KEYPHRASE_WORDS);
    run = [];
    if (!words.length) return;
    const start = words[0].index ?? 0;
    const last = words[words.length - 1];
    const end = (last.index ?? 0) + last[0].length;
    const text = sentence.slice(start, end);
    if (words.length === 1 && (text.length < 4 || /^\p{N}+$/u.test(text))) return;
    spans.push({ start, end, text, priority: 1 });
  };
  let previousEnd = 0;
  for (const m of sentence.matchAll(PHRASE_WORD)) {
    const word = m[0].toLowerCase().replace(/’/g, "'");
    const gap = sentence.slice(previousEnd, m.index);
    previousEnd = (m.index ?? 0) + m[0].length;
    if (run.length && /[^\s]/.test(gap)) flush();
    if (PHRASE_DELIMITERS.has(word) || /^\p{N}+$/u.test(word) || /'(s|re|ve|ll|d|m|t)$/.test(word)) flush();
    else run.push(m);
  }
  flush();
  return spans;
}

/** Relations longer than this many words are not a phrase between two things but two separate statements. */
const MAX_RELATION_WORDS = 6;
/** Entities further apart than this (in mention order) in one sentence are not related. */
const MAX_RELATION_DISTANCE = 3;
const CO_OCCURRENCE = "appears with";

const SENTENCE_END = /(?<=[.!?…])\s+|\n+/u;

function candidateSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const { re, priority, group } of PATTERNS) {
    for (const m of text.matchAll(re)) {
      const value = group ? m[group] : m[0];
      const start = (m.index ?? 0) + (group ? m[0].indexOf(value) : 0);
      spans.push({ start, end: start + value.length, text: value, priority });
    }
  }
  for (const m of text.matchAll(TOOL_WORD)) {
    if (TOOLS.has(m[0].toLowerCase()))
      spans.push({ start: m.index ?? 0, end: (m.index ?? 0) + m[0].length, text: m[0], priority: 3 });
  }
  return spans;
}

/** Keeps the best of overlapping spans: higher priority, then longer. */
function resolveOverlaps(spans: Span[]): Span[] {
  spans.sort((a, b) => b.priority - a.priority || b.end - b.start - (a.end - a.start) || a.start - b.start);
  const taken: Span[] = [];
  for (const s of spans) {
    if (!taken.some((t) => s.start < t.end && t.start < s.end)) taken.push(s);
  }
  return taken.sort((a, b) => a.start - b.start);
}

/** A capitalised guess that is really a sentence-initial common word ("Thanks", "The") is dropped. */
const CONTRACTION = /['’]\p{L}+$/u;

function leadingSpace(sentence: string): number {
  return sentence.length - sentence.trimStart().length;
}

function cleanCapitalised(span: Span, sentence: string): Span | undefined {
  if (span.priority !== 2) return span;
  const words = span.text.split(/\s+/);
  // Sentence-initial common words are not part of the name ("Yesterday Caroline" → "Caroline").
  const common = (w: string) => COMMON_CAPITALISED.has(w.toLowerCase().replace(/[’]/g, "'"));
  while (words.length && common(words[0])) words.shift();
  while (words.length && common(words[words.length - 1])) words.pop();
  if (!words.length) return undefined;
  // A lone sentence-initial contraction or common word form ("That's", "Loving") names nothing.
  if (words.length === 1 && span.start === leadingSpace(sentence) && CONTRACTION.test(words[0]))
    return undefined;
  const textOut = words.join(" ");
  if (textOut.length < 2) return undefined;
  const start = span.start + span.text.indexOf(words[0]);
  return { ...span, start, end: start + textOut.length, text: textOut };
}

/** Phrase nodes and co-occurrence facts of one text. */
export function extractGraph(text: string): ChunkGraph {
  const entities = new Map<string, EntityMention>();
  const facts = new Map<string, FactMention>();
  for (const sentence of text.split(SENTENCE_END)) {
    if (!sentence.trim()) continue;
    const mentions: { phrase: string; start: number; end: number }[] = [];
    for (const raw of resolveOverlaps([...candidateSpans(sentence), ...keyphraseSpans(sentence)])) {
      const span = cleanCapitalised(raw, sentence);
      if (!span) continue;
      const phrase = normalizePhrase(span.text);
      if (!phrase) continue;
      if (!entities.has(phrase)) entities.set(phrase, { phrase, label: phraseLabel(span.text) });
      if (mentions.at(-1)?.phrase !== phrase) mentions.push({ phrase, start: span.start, end: span.end });
    }
    for (let i = 0; i < mentions.length; i++) {
      for (let j = i + 1; j < mentions.length && j <= i + MAX_RELATION_DISTANCE; j++) {
        const [s, o] = [mentions[i], mentions[j]];
        if (s.phrase === o.phrase) continue;
        // Only neighbours read as "subject relation object"; further pairs have other mentions between them.
        const predicate = j === i + 1 ? relationBetween(sentence.slice(s.end, o.start)) : CO_OCCURRENCE;
        const key = `${s.phrase}\u0001${predicate}\u0001${o.phrase}`;
        if (!facts.has(key)) facts.set(key, { subject: s.phrase, predicate, object: o.phrase });
      }
    }
  }
  return { entities: [...entities.values()], facts: [...facts.values()] };
}

/** The words between two mentions as a relation, or a plain co-occurrence when they are not a phrase. */
function relationBetween(between: string): string {
  const words = between
    .replace(/[^\p{L}\p{N}'’\s-]/gu, " ")
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  if (words.length === 0 || words.length > MAX_RELATION_WORDS) return CO_OCCURRENCE;
  return words.join(" ").toLowerCase();
}
