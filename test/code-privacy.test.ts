import { describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { redactKeepingLines } from "../src/code/redact.ts";
import { indexFile, indexLayout, loadIndex, saveIndex } from "../src/code/store.ts";
import { codeRepository, connectServe, runBinary, tempDir } from "./support/helpers.ts";

const AWS_KEY = "AKIAZ3MSJK4QWERTY7XQ";
const PEM_BODY = [
  "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
  "/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghR",
];
const PEM = ["-----BEGIN RSA PRIVATE KEY-----", ...PEM_BODY, "-----END RSA PRIVATE KEY-----"].join("\n");

const repo = (files: Record<string, string>) =>
  realpathSync(codeRepository(files, "triforge-code-privacy-repo-"));

/** A repository with an AWS key in a config file and a private key in the middle of a source file. */
const leakyRepo = () =>
  repo({
    "config.yaml": `service:\n  region: eu-west-1\n  storage_bucket: invoices\n  api_key: "${AWS_KEY}"\n  retries: 3\n`,
    "src/keys.ts": `// fixture used by the signing tests\nexport const testKey = \`${PEM}\`;\n\nexport function signInvoicePayload(body: string): string {\n  return body + testKey.length;\n}\n`,
  });

/** Every file under a folder, as text (index.bin included: a secret would show up in its text blob). */
function everyFile(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

function expectNoSecretUnder(dir: string) {
  const files = everyFile(dir);
  expect(files.some((f) => f.endsWith("index.bin"))).toBe(true);
  for (const file of files) {
    const text = readFileSync(file, "latin1");
    expect(text).not.toContain(AWS_KEY);
    for (const line of PEM_BODY) expect(text).not.toContain(line);
  }
}

describe("redactKeepingLines", () => {
  test("a multi-line private key becomes one marker and keeps every line after it in place", () => {
    const text = `before\nconst key = \`${PEM}\`;\nafter ${AWS_KEY}\nlast`;
    const { text: out, redactions } = redactKeepingLines(text);
    expect(redactions).toBe(2);
    const lines = out.split("\n");
    expect(lines).toHaveLength(text.split("\n").length);
    expect(lines[0]).toBe("before");
    expect(lines[1]).toBe("const key = `[REDACTED:private_key]");
    expect(lines[4]).toBe("`;");
    expect(lines[5]).toBe("after [REDACTED:aws]");
    expect(lines[6]).toBe("last");
    for (const line of PEM_BODY) expect(out).not.toContain(line);
  });

  test("text without secrets comes back unchanged", () => {
    const text = "export function add(a: number, b: number) {\n  return a + b;\n}\n";
    expect(redactKeepingLines(text)).toEqual({ text, redactions: 0 });
  });
});

describe("the code index holds no secrets (compiled binary)", () => {
  test("code-index and search --json: secrets are absent from the data dir and the hits, lines are exact", async () => {
    const home = tempDir("triforge-code-privacy-home-");
    const root = leakyRepo();
    const indexed = await runBinary(["code-index", root], { home });
    expect(indexed.stderr).toBe("");
    expect(indexed.code).toBe(0);
    expect(indexed.stdout).toContain("secrets redacted in 2 files");
    expectNoSecretUnder(home);

    const config = await runBinary(
      ["search", "api_key storage bucket region", root, "--content", "all", "--json"],
      {
        home,
      },
    );
    expect(config.code).toBe(0);
    expect(config.stdout).not.toContain(AWS_KEY);
    const configHit = JSON.parse(config.stdout).hits.find(
      (h: { file_path: string }) => h.file_path === "config.yaml",
    );
    const configLines = configHit.content.split("\n");
    expect(configLines).toHaveLength(configHit.end_line - configHit.start_line + 1);
    expect(configLines[4 - configHit.start_line]).toBe('  api_key: "[REDACTED:aws]"');
    expect(configLines[5 - configHit.start_line]).toBe("  retries: 3");

    // The function sits below the four-line key: its line number is the file's, not the redacted text's.
    const code = await runBinary(["search", "signInvoicePayload", root, "--json"], { home });
    expect(code.code).toBe(0);
    for (const line of PEM_BODY) expect(code.stdout).not.toContain(line);
    const hit = JSON.parse(code.stdout).hits.find(
      (h: { file_path: string }) => h.file_path === "src/keys.ts",
    );
    const lines = hit.content.split("\n");
    expect(lines).toHaveLength(hit.end_line - hit.start_line + 1);
    const at = lines.findIndex((l: string) => l.includes("function signInvoicePayload"));
    expect(hit.start_line + at).toBe(7);
    expectNoSecretUnder(home);
  });

  test("an index saved by the previous format, holding a secret, is rebuilt redacted", async () => {
    const home = tempDir("triforge-code-privacy-home-");
    const root = leakyRepo();
    expect((await runBinary(["code-index", root], { home })).code).toBe(0);

    // Put the secret back into the saved chunk texts and label the file format 2, as an index written
    // before redaction existed would be. The files on disk are unchanged, so only the format can
    // cause the rebuild.
    const previousHome = process.env.TRIFORGE_HOME;
    process.env.TRIFORGE_HOME = join(home, ".claude", "triforge");
    try {
      const file = indexFile(root);
      const raw = readFileSync(file);
      const { header, headerBytes } = indexLayout(raw);
      const index = loadIndex(root, header.modelId);
      if (!index) throw new Error("the index just built did not load");
      index.texts = index.texts.map((t) => t.replace("[REDACTED:aws]", AWS_KEY));
      saveIndex(index);
      const saved = readFileSync(file);
      const formatAt = saved.indexOf(`"format":${header.format},`);
      expect(formatAt).toBeGreaterThan(0);
      saved.write(`"format":2,`, formatAt);
      // A file written by that format, not a damaged one: its header checksum matches.
      saved.writeUInt32LE(Bun.hash.crc32(saved.subarray(headerBytes.start, headerBytes.end)), 12);
      writeFileSync(file, saved);
      expect(readFileSync(file, "latin1")).toContain(AWS_KEY);
    } finally {
      process.env.TRIFORGE_HOME = previousHome;
    }

    const refreshed = await runBinary(["code-index", root, "--json"], { home });
    expect(refreshed.code).toBe(0);
    expect(JSON.parse(refreshed.stdout)).toMatchObject({ changed: 2 });
    expectNoSecretUnder(home);
  });

  test("the project's own exclude rules apply to its code; changing them re-redacts every file", async () => {
    const home = tempDir("triforge-code-privacy-home-");
    const root = repo({
      "src/partner.ts":
        "// integration for Nightingale Logistics\nexport const partnerName = 'Nightingale';\n",
      "src/other.ts": "export const retries = 3;\n",
    });
    expect((await runBinary(["code-index", root], { home })).code).toBe(0);
    const before = await runBinary(["search", "partnerName", root, "--json"], { home });
    expect(before.stdout).toContain("Nightingale");

    mkdirSync(join(root, ".triforge"));
    writeFileSync(join(root, ".triforge", "exclude.txt"), "# client names\nNightingale\n");
    const refreshed = await runBinary(["code-index", root, "--json"], { home });
    expect(refreshed.code).toBe(0);
    expect(JSON.parse(refreshed.stdout)).toMatchObject({ changed: 2, redactedFiles: 1 });
    const after = await runBinary(["search", "partnerName", root, "--json"], { home });
    expect(after.stdout).not.toContain("Nightingale");
    expect(after.stdout).toContain("[REDACTED:custom]");
    for (const file of everyFile(home)) expect(readFileSync(file, "latin1")).not.toContain("Nightingale");
  });

  test("a malformed project config is a clear error and no index is written without its rules", async () => {
    const home = tempDir("triforge-code-privacy-home-");
    const root = repo({
      "src/a.ts": "export const a = 1;\n",
      ".triforge/config.json": '{"exclude": "Nightingale"}',
    });
    const result = await runBinary(["code-index", root], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('config.json: "exclude" must be a list of strings');
    expect(existsSync(join(home, ".claude", "triforge", "code"))).toBe(false);
  });

  test("the redaction worker (compiled binary) gives the same index as the main thread", async () => {
    const root = leakyRepo();
    const results = [];
    for (const worker of ["1", "0"]) {
      const home = tempDir("triforge-code-privacy-home-");
      const env = { TRIFORGE_CODE_REDACT_WORKER: worker };
      const indexed = await runBinary(["code-index", root, "--json"], { home, env });
      expect(indexed.code).toBe(0);
      expect(JSON.parse(indexed.stdout)).toMatchObject({
        redactedFiles: 2,
        redactedInWorker: worker === "1" ? 2 : 0,
      });
      expectNoSecretUnder(home);
      const search = await runBinary(
        ["search", "signInvoicePayload api_key", root, "--content", "all", "--json"],
        {
          home,
          env,
        },
      );
      expect(search.code).toBe(0);
      results.push(JSON.parse(search.stdout).hits);
    }
    expect(results[0].length).toBeGreaterThan(0);
    expect(results[0]).toEqual(results[1]);
  });

  test("code_search over MCP (compiled binary's serve) hands the agent markers, never the secrets", async () => {
    const home = tempDir("triforge-code-privacy-home-");
    const root = leakyRepo();
    const client = await connectServe({ cwd: root, home, name: "code-privacy-test" });
    try {
      for (const query of ["api_key storage bucket", "testKey signing fixture"]) {
        const result = await client.callTool(
          { name: "code_search", arguments: { query, content: "all" } },
          CallToolResultSchema,
        );
        const wire = JSON.stringify(result);
        expect(result.isError).toBeFalsy();
        expect(wire).toContain("[REDACTED:");
        expect(wire).not.toContain(AWS_KEY);
        for (const line of PEM_BODY) expect(wire).not.toContain(line);
      }
    } finally {
      await client.close();
    }
    expectNoSecretUnder(home);
  });
});
