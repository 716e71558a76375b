import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The baseline the start-up and hook benchmarks divide by: an empty Bun program compiled with the flags
 * build/build.ts compiles triforge with (--compile --splitting --bytecode --minify --format=esm), so a
 * ratio measures what triforge adds, not what Bun's runtime costs. Written into `dir`; returns its path.
 */
export async function buildEmptyBinary(dir: string): Promise<string> {
  const entry = join(dir, "empty.ts");
  writeFileSync(entry, "export {};\n");
  const outfile = join(dir, "empty-binary");
  const result = await Bun.build({
    entrypoints: [entry],
    compile: { outfile },
    splitting: true,
    bytecode: true,
    minify: true,
    format: "esm",
  });
  if (!result.success) throw new Error(result.logs.map(String).join("\n"));
  return outfile;
}
