/**
 * Runs the indexer in a process of its own, so a test can `kill -9` it part-way (memory-index.test.ts).
 * Usage: bun test/memory-index-child.ts <project root>   (TRIFORGE_HOME from the environment)
 */
import { indexProject } from "../../src/memory/indexer.ts";

const result = await indexProject(process.argv[2], { llm: null });
process.stdout.write(`${JSON.stringify(result)}\n`);
