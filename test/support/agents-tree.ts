import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** Every file under `dir` with its bytes: a snapshot to compare whole trees before and after. */
export function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = join(entry.parentPath, entry.name);
    if (entry.isFile()) files[relative(dir, full)] = readFileSync(full, "latin1");
  }
  return files;
}

/** Every folder under `dir`, sorted: what an undo must not leave behind. */
export function folders(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}
