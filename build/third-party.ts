#!/usr/bin/env bun
/**
 * Lists the npm packages the binary embeds, with version and licence, from the bundler's own record
 * of its inputs (the same entry point as build.ts): `bun run build/third-party.ts`. NOTICE credits
 * each of them; test/build-notice.test.ts fails when a newly bundled package is missing there.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

export interface Package {
  name: string;
  version: string;
  license: string;
}

/** The platform builds of one addon count as the addon itself. */
const ADDON_PLATFORM = /^(@anush008\/tokenizers)-[\w-]+$/;

export async function bundledPackages(entry = join(ROOT, "src/index.ts")): Promise<Package[]> {
  const result = await Bun.build({
    entrypoints: [entry],
    target: "bun",
    format: "esm",
    splitting: true,
    metafile: true,
    // The model is not an npm package; build.ts provides it as a virtual module.
    external: ["triforge:embedded-model"],
  });
  if (!result.success || !result.metafile) {
    throw new Error(`bundling ${entry} failed:\n${result.logs.map(String).join("\n")}`);
  }
  const names = new Set<string>();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
    if (match) names.add(match[1].replace(ADDON_PLATFORM, "$1"));
  }
  return [...names].sort().map((name) => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8"));
    const license =
      typeof pkg.license === "string"
        ? pkg.license
        : (pkg.licenses?.map((l: { type: string }) => l.type).join(" OR ") ?? "UNKNOWN");
    return { name, version: pkg.version, license };
  });
}

if (import.meta.main) {
  for (const p of await bundledPackages())
    console.log(`${p.name.padEnd(32)}${p.version.padEnd(10)}${p.license}`);
}
