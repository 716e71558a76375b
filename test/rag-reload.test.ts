import { expect, test } from "bun:test";
import { readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openIndex } from "../src/code/code-search.ts";
import { indexFile } from "../src/code/store.ts";
import { errorLogPath } from "../src/home/paths.ts";
import { RagService } from "../src/rag/service.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

// Made here, not in a hook: the folders must last until the test has read what they hold.
const home = tempDir("triforge-home-");

test("a reload that fails keeps the served index answering and is logged, not a crash of the server", async () => {
  process.env.TRIFORGE_HOME = home;
  const root = codeRepository({
    "src/invoice.ts": "export function parseInvoice(text: string) {\n  return text.split('\\n');\n}\n",
  });
  await openIndex(root, { refresh: "now" });
  const rag = new RagService([root], { catalogPath: join(home, "catalog.db") });
  const first = await rag.query("parseInvoice");
  expect(first.hits[0]?.path).toContain("invoice.ts");

  // Another process re-ingested (index.bin is newer), and the workspace can no longer be walked.
  rmSync(root, { recursive: true, force: true });
  writeFileSync(root, "not a folder any more");
  const later = new Date(Date.now() + 5_000);
  utimesSync(indexFile(root), later, later);
  await Bun.sleep(1_100); // past the service's reload check interval

  const during = await rag.query("parseInvoice");
  expect(during.hits[0]?.path).toContain("invoice.ts");
  await Bun.sleep(300); // the reload runs in the background; let it fail
  const after = await rag.query("parseInvoice");
  expect(after.hits[0]?.path).toContain("invoice.ts");
  expect(readFileSync(errorLogPath(), "utf8")).toContain("reloading the index of");
});
