import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { refreshIndex } from "../src/code/refresh.ts";
import { INDEX_FORMAT, indexFile, indexLayout } from "../src/code/store.ts";
import { loadModel } from "../src/embed/source.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

describe("code index format", () => {
  const saved = process.env.TRIFORGE_HOME;
  beforeAll(() => {
    process.env.TRIFORGE_HOME = tempDir("triforge-code-format-home-");
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.TRIFORGE_HOME;
    else process.env.TRIFORGE_HOME = saved;
  });

  test("an index of the format before defined names were embedded is rebuilt, with them", async () => {
    const source = "class SessionStore:\n    def verify_token(self, token):\n        return token\n";
    const root = realpathSync(
      codeRepository({ "src/session.py": source, "src/other.py": "def retries():\n    return 3\n" }),
    );
    expect((await refreshIndex(root)).report.changed).toBe(2);
    expect((await refreshIndex(root)).report.changed).toBe(0);

    // Label the saved file with the previous format (its header checksum fixed, so it is an old
    // file, not a damaged one): the files on disk are unchanged, so only the format can rebuild it.
    const file = indexFile(root);
    const bytes = readFileSync(file);
    const { header, headerBytes } = indexLayout(bytes);
    expect(header.format).toBe(INDEX_FORMAT);
    const at = bytes.indexOf(`"format":${INDEX_FORMAT},`);
    expect(at).toBeGreaterThan(0);
    bytes.write(`"format":${INDEX_FORMAT - 1},`, at);
    bytes.writeUInt32LE(Bun.hash.crc32(bytes.subarray(headerBytes.start, headerBytes.end)), 12);
    writeFileSync(file, bytes);

    const rebuilt = await refreshIndex(root);
    expect(rebuilt.report.changed).toBe(2);
    const chunk = rebuilt.files.findIndex((f) => f.path === "src/session.py");
    const model = await loadModel();
    const expected = await model.embed(`src/session.py\nSessionStore verify_token\n${source}`);
    const row = rebuilt.files[chunk].firstChunk * model.dim;
    const actual = rebuilt.vectors.subarray(row, row + model.dim);
    for (let d = 0; d < model.dim; d++) expect(Math.abs(actual[d] - expected[d])).toBeLessThan(1e-5);
  });
});
