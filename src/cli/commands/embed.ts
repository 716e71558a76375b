import { defineCommand, UsageError, UserError } from "../command.ts";
import { loadModel } from "../../embed/source.ts";
import { createInterface } from "node:readline";

const BATCH = 256;

export default defineCommand({
  usage: 'triforge embed "text" | triforge embed --stdin',
  description:
    "Prints the embedding of a text as a JSON array, or with --stdin reads JSONL {\"text\": ...} and writes one vector a line.",
  positionals: true,
  options: {
    stdin: { type: "boolean", description: "Read JSONL {\"text\": ...} from standard input" },
    verbose: { type: "boolean", description: "Print the model id and dimension to stderr" },
  },
  async run({ values, positionals }) {
    if (!values.stdin && positionals.length !== 1) throw new UsageError("give one text, or --stdin");
    if (values.stdin && positionals.length) throw new UsageError("--stdin takes no text argument");
    const model = await loadModel();
    if (values.verbose) process.stderr.write(`model ${model.id}, dimension ${model.dim}\n`);
    const write = (vectors: Float32Array, count: number) => {
      const lines: string[] = [];
      for (let i = 0; i < count; i++) lines.push(JSON.stringify(Array.from(vectors.subarray(i * model.dim, (i + 1) * model.dim))));
      process.stdout.write(`${lines.join("\n")}\n`);
    };
    if (!values.stdin) {
      write(await model.embed(positionals[0]), 1);
      return 0;
    }
    let batch: string[] = [];
    let lineNumber = 0;
    const flush = async () => {
      if (batch.length) write(await model.embedBatch(batch), batch.length);
      batch = [];
    };
    for await (const line of createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })) {
      lineNumber++;
      if (!line.trim()) continue;
      let record: { text?: unknown };
      try {
        record = JSON.parse(line);
      } catch {
        throw new UserError(`line ${lineNumber}: not valid JSON`);
      }
      if (typeof record?.text !== "string") throw new UserError(`line ${lineNumber}: expected {"text": "..."}`);
      batch.push(record.text);
      if (batch.length >= BATCH) await flush();
    }
    await flush();
    return 0;
  },
});
