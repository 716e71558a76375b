import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bundledPackages } from "../build/third-party.ts";
import { ROOT } from "./support/helpers.ts";

// Bundles the program; bunfig has no test timeout setting.
setDefaultTimeout(30_000);

test("NOTICE credits every npm package the binary bundles, with its licence", async () => {
  const notice = readFileSync(join(ROOT, "NOTICE"), "utf8");
  const packages = await bundledPackages();
  // The tokenizers addon is bundled by every build; an empty list would mean the scan is broken.
  expect(packages.map((p) => p.name)).toContain("@anush008/tokenizers");
  const missing = packages
    .filter((p) => !notice.includes(`- ${p.name} (${p.license})`))
    .map((p) => `${p.name} (${p.license})`);
  expect(missing).toEqual([]);
});

test("LICENSE is the full Apache License 2.0 text", () => {
  const license = readFileSync(join(ROOT, "LICENSE"), "utf8");
  expect(license).toContain("Apache License\n                           Version 2.0, January 2004");
  expect(license).toContain("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION");
  expect(license).toContain("9. Accepting Warranty or Additional Liability.");
  expect(license).toContain("END OF TERMS AND CONDITIONS");
});
