import { describeModelSource, loadModel } from "../embed/source.ts";

/** `triforge --version --verbose`: version, platform, Bun and the embedding model in use. */
export async function versionReport(version: string): Promise<string> {
  const lines = [`triforge ${version}`, `platform ${process.platform}-${process.arch}`, `bun ${Bun.version}`];
  try {
    const model = await loadModel();
    lines.push(`model ${model.id} (dimension ${model.dim}) from ${describeModelSource()}`);
  } catch (error) {
    lines.push(`model unavailable: ${(error as Error).message}`);
  }
  return lines.join("\n");
}
