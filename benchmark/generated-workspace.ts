/**
 * A generated TypeScript workspace for the HTTP and query benchmarks: files of ten ~700-character
 * functions (one code-search chunk each) named from 20 verbs and 400 made-up nouns, and queries made
 * of the same words, as identifiers and questions. Deterministic from its seed.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seededRandom } from "../test/support/random.ts";

export const FUNCTIONS_PER_FILE = 10;

const VERBS = [
  "parse",
  "load",
  "save",
  "merge",
  "render",
  "fetch",
  "encode",
  "decode",
  "index",
  "retry",
  "schedule",
  "sign",
  "verify",
  "resize",
  "export",
  "import",
  "compute",
  "resolve",
  "flush",
  "rotate",
];
const SYLLABLES = [
  "ka",
  "lo",
  "mir",
  "tan",
  "vex",
  "dor",
  "pel",
  "qua",
  "rin",
  "sol",
  "tur",
  "zen",
  "bri",
  "cos",
  "fal",
];

const camel = (verb: string, noun: string) => verb + noun[0].toUpperCase() + noun.slice(1);

export interface WorkspaceGenerator {
  /** Writes `files` files under `root` (100 folders); returns queries sampled from the functions written. */
  generate(root: string, files: number): string[];
  /** `count` distinct queries of the workspace's words: `verbNoun other` or `where do we verb noun before other`. */
  queries(count: number): string[];
}

export function workspaceGenerator(seed = 14): WorkspaceGenerator {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const nouns = Array.from(
    { length: 400 },
    (_, i) => `${pick(SYLLABLES)}${pick(SYLLABLES)}${pick(SYLLABLES)}${i}`,
  );

  /** One generated function of about 700 characters: one chunk of code search's ~750-character target. */
  function generatedFunction(verb: string, noun: string, other: string): string {
    const name = camel(verb, noun);
    const lines = [
      `/** ${verb} a ${noun} record, then hand it to the ${other} stage. */`,
      `export function ${name}(${noun}: ${noun[0].toUpperCase()}${noun.slice(1)}Record, limit = ${Math.floor(random() * 90) + 10}): Result {`,
      `  const started = Date.now();`,
      `  const items = ${noun}.items.filter((item) => item.size < limit && item.kind !== "${other}");`,
      `  for (const item of items) {`,
      `    if (item.retries > ${Math.floor(random() * 5) + 1}) throw new Error("${name}: too many retries for " + item.id);`,
      `    item.state = ${camel("next", other)}(item.state, "${verb}");`,
      `  }`,
      `  const total = items.reduce((sum, item) => sum + item.size, 0);`,
      `  log("${name}", { count: items.length, total, took: Date.now() - started });`,
      `  return { ok: total > 0, total, ${other}: items.map((item) => item.id) };`,
      `}`,
    ];
    return lines.join("\n");
  }

  return {
    generate(root, files) {
      const queries: string[] = [];
      for (let f = 0; f < files; f++) {
        const folder = join(root, "src", `module${f % 100}`);
        if (f < 100) mkdirSync(folder, { recursive: true });
        const functions: string[] = [];
        for (let i = 0; i < FUNCTIONS_PER_FILE; i++) {
          const [verb, noun, other] = [pick(VERBS), pick(nouns), pick(nouns)];
          functions.push(generatedFunction(verb, noun, other));
          if (random() < 0.05)
            queries.push(random() < 0.5 ? camel(verb, noun) : `where do we ${verb} ${noun} before ${other}`);
        }
        writeFileSync(join(folder, `file${f}.ts`), `${functions.join("\n\n")}\n`);
      }
      return queries;
    },
    queries(count) {
      // One query a request, none repeated (no answer can come from a cache).
      const seen = new Set<string>();
      while (seen.size < count) {
        const [verb, noun, other] = [pick(VERBS), pick(nouns), pick(nouns)];
        seen.add(
          random() < 0.5 ? `${camel(verb, noun)} ${other}` : `where do we ${verb} ${noun} before ${other}`,
        );
      }
      return [...seen];
    },
  };
}
