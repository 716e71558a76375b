import { createInterface } from "node:readline";
import { loadModel } from "../../embed/source.ts";
import { defineCommand, UsageError } from "../command.ts";

const BATCH = 256;

export default defineCommand({
  usage: 'triforge embed "text" | triforge embed --stdin',
  description:
    'Prints the embedding of a text as a JSON array, or with --stdin reads JSONL {"text": ...} and writes one vector a line; a bad line gets {"line": n, "error": ...} in its place (and a note on stderr), the rest is still embedded, and the exit code is 1.',
  positionals: true,
  options: {
    stdin: { type: "boolean", description: 'Read JSONL {"text": ...} from standard input' },
    verbose: { type: "boolean", description: "Print the model id and dimension to stderr" },
  },
  async run({ values, positionals }) {
    if (!values.stdin && positionals.length !== 1) throw new UsageError("give one text, or --stdin");
    if (values.stdin && positionals.length) throw new UsageError("--stdin takes no text argument");
    const model = await loadModel();
    if (values.verbose) process.stderr.write(`model ${model.id}, dimension ${model.dim}\n`);
    if (!values.stdin) {
      process.stdout.write(`${JSON.stringify(Array.from(await model.embed(positionals[0])))}\n`);
      return 0;
    }
    // Each non-blank input line gets exactly one output line, in order: a vector, or for a bad line
    // `{"line": n, "error": "..."}` as `search --stdin` writes, so outputs still pair with inputs. A bad
    // line is also named on stderr; the rest of the input is still embedded and the exit code is 1.
    let batch: (string | { line: number; error: string })[] = [];
    let lineNumber = 0;
    let failures = 0;
    const flush = async () => {
      const texts = batch.filter((item): item is string => typeof item === "string");
      const vectors = texts.length ? await model.embedBatch(texts) : new Float32Array(0);
      const lines: string[] = [];
      let row = 0;
      for (const item of batch) {
        if (typeof item === "string") {
          lines.push(JSON.stringify(Array.from(vectors.subarray(row * model.dim, (row + 1) * model.dim))));
          row++;
        } else lines.push(JSON.stringify(item));
      }
      if (lines.length) process.stdout.write(`${lines.join("\n")}\n`);
      batch = [];
    };
    const fail = (error: string) => {
      failures++;
      process.stderr.write(`triforge embed: line ${lineNumber}: ${error}\n`);
      batch.push({ line: lineNumber, error });
    };
    for await (const line of createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })) {
      lineNumber++;
      if (!line.trim()) continue;
      let record: { text?: unknown };
      try {
        record = JSON.parse(line);
      } catch {
        fail("not valid JSON");
        continue;
      }
      if (typeof record?.text !== "string") fail('expected {"text": "..."}');
      else batch.push(record.text);
      if (batch.length >= BATCH) await flush();
    }
    await flush();
    return failures ? 1 : 0;
  },
});
