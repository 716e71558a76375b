/**
 * OpenAI-compatible embeddings for the RAG service, against a fake of the API on 127.0.0.1 that speaks
 * its wire format (`POST /v1/embeddings` {model, input[]} → {object: "list", data: [{object:
 * "embedding", index, embedding}], model, usage}).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { remoteOf } from "../src/cli/http-options.ts";
import { embedTexts, RemoteEmbeddingError, remoteEmbeddingConfig } from "../src/embed/remote.ts";
import { startHttpServer } from "../src/http/server.ts";
import { configProblems, type ProjectConfig } from "../src/project/config.ts";
import { Catalog } from "../src/rag/catalog.ts";
import { ingestWorkspace, RagRequestError, RagService } from "../src/rag/service.ts";
import { fakeEmbeddings } from "./support/fake-embeddings.ts";
import { memoryHome } from "./support/memory-helpers.ts";

const fake = fakeEmbeddings();
afterAll(() => fake.server.stop(true));
const { home } = memoryHome();
const workspace = join(home, "ws");
const catalogPath = join(home, "catalog.db");
const config = (model = "fake-small") => ({ baseUrl: fake.base, model, apiKey: "sk-fake" });

beforeAll(() => {
  mkdirSync(join(workspace, "src"), { recursive: true });
  for (const name of ["encryptPayload", "resizeThumbnail", "mergeInvoices"])
    writeFileSync(
      join(workspace, "src", `${name}.ts`),
      `export function ${name}(input: string) {\n  return input;\n}\n`,
    );
});

describe("the embeddings client", () => {
  test("is configured only when a base URL or a model is named", () => {
    expect(remoteEmbeddingConfig({ OPENAI_API_KEY: "sk-llm" })).toBeUndefined();
    expect(
      remoteEmbeddingConfig({ CLAW_RAG_EMBEDDING_BASE_URL: "http://x/v1/", OPENAI_API_KEY: "sk-a" }),
    ).toEqual({
      baseUrl: "http://x/v1",
      model: "text-embedding-3-small",
      apiKey: "sk-a",
    });
    expect(
      remoteEmbeddingConfig({
        CLAW_RAG_EMBEDDING_MODEL: "m",
        CLAW_RAG_OPENAI_API_KEY: "sk-claw",
        OPENAI_API_KEY: "sk-a",
      }),
    ).toEqual({ baseUrl: "https://api.openai.com/v1", model: "m", apiKey: "sk-claw" });
  });

  test("sends batches with the key, and puts each vector back in its input's place", async () => {
    fake.seen.length = 0;
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i} ${i % 2 ? "odd" : "even"}`);
    const vectors = await embedTexts(config(), texts, { batch: 64 });
    expect(fake.seen.map((s) => s.inputs)).toEqual([64, 64, 22]);
    expect(fake.seen[0].authorization).toBe("Bearer sk-fake");
    const again = await embedTexts(config(), [texts[101]]);
    expect([...vectors[101]]).toEqual([...again[0]]);
    expect(Math.hypot(...vectors[0])).toBeCloseTo(1, 5);
  });

  test("retries rate limits and server errors, and says when it gives up", async () => {
    fake.seen.length = 0;
    fake.state.failures = [429, 503];
    expect(await embedTexts(config(), ["retry me"], { backoffMs: 1 })).toHaveLength(1);
    expect(fake.seen).toHaveLength(3);
    fake.state.failures = [500, 500, 500];
    const error = await embedTexts(config(), ["fail"], { attempts: 3, backoffMs: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteEmbeddingError);
    expect(error.message).toContain("failed 3 times (last: HTTP 500)");
    fake.state.failures = [];
  });

  test("a request that takes too long times out with a clear error", async () => {
    fake.state.delayMs = 300;
    const error = await embedTexts(config(), ["slow"], { timeoutMs: 50, attempts: 1 }).catch((e) => e);
    fake.state.delayMs = 0;
    expect(error.message).toContain("no answer in 50 ms");
  });
});

describe("the RAG service with remote vectors", () => {
  test("ingest embeds each chunk once; queries use the remote vectors", async () => {
    fake.seen.length = 0;
    const first = await ingestWorkspace(workspace, { catalogPath, remote: config() });
    expect(first.embedded).toBe(first.chunks);
    const catalog = Catalog.open(catalogPath);
    expect(catalog.vectorSpace()).toEqual({ model: "fake-small", dim: 32 });
    catalog.close();
    writeFileSync(
      join(workspace, "src", "rotateKeys.ts"),
      "export function rotateKeys(keys: string[]) {\n  return keys;\n}\n",
    );
    const second = await ingestWorkspace(workspace, { catalogPath, remote: config() });
    expect(second.embedded).toBe(1);
    const rag = new RagService([workspace], { catalogPath, remote: config() });
    // Starting up loads the index without spending calls to the provider on warm-up searches.
    const calls = fake.seen.length;
    await rag.warm();
    expect(fake.seen.length).toBe(calls);
    const result = await rag.query("rotate keys");
    expect(result.phase).toBe("1-sqlite");
    expect(result.hits[0].path).toBe("src/rotateKeys.ts");
    expect(fake.seen.at(-1)).toMatchObject({ model: "fake-small", inputs: 1 });
  });

  test("a query embedded with another model or dimension is a 400 naming both", async () => {
    const other = new RagService([workspace], { catalogPath, remote: config("fake-other") });
    const error = await other.query("rotate keys").catch((e) => e);
    expect(error).toBeInstanceOf(RagRequestError);
    expect(error.message).toContain("fake-small");
    expect(error.message).toContain("fake-other");

    fake.state.dims["fake-small"] = 48;
    const server = startHttpServer({
      host: "127.0.0.1",
      port: 0,
      token: "t",
      rag: new RagService([workspace], { catalogPath, remote: config() }),
    });
    try {
      const res = await fetch(`${server.url}/v1/query`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "rotate keys" }),
      });
      expect(res.status).toBe(400);
      const { error: message } = (await res.json()) as { error: string };
      expect(message).toContain("dimension 32");
      expect(message).toContain("dimension 48");
    } finally {
      fake.state.dims["fake-small"] = 32;
      await server.stop();
    }
  });
});

describe("embedding settings in .triforge/config.json", () => {
  const settings = { baseUrl: fake.base, model: "fake-small", apiKeyEnv: "TEST_EMBED_KEY" };
  /** A workspace that is its own project, with `config` as its .triforge/config.json. */
  const project = (name: string, config: object) => {
    const root = join(home, name);
    mkdirSync(join(root, ".triforge"), { recursive: true });
    mkdirSync(join(root, "src"), { recursive: true });
    writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify(config));
    writeFileSync(
      join(root, "src", "wrapEnvelope.ts"),
      "export function wrapEnvelope(x: string) {\n  return x;\n}\n",
    );
    return root;
  };

  test("the config names the endpoint and the key's variable; the CLAW_RAG_* variables win field by field", () => {
    expect(remoteEmbeddingConfig({ TEST_EMBED_KEY: "sk-env" }, settings)).toEqual({
      baseUrl: fake.base,
      model: "fake-small",
      apiKey: "sk-env",
    });
    expect(
      remoteEmbeddingConfig({ CLAW_RAG_EMBEDDING_MODEL: "m", CLAW_RAG_OPENAI_API_KEY: "sk-claw" }, settings),
    ).toEqual({ baseUrl: fake.base, model: "m", apiKey: "sk-claw" });
    // The key written into the file is used only when no variable is named for it.
    expect(remoteEmbeddingConfig({}, { model: "m", apiKey: "sk-file" })?.apiKey).toBe("sk-file");
    expect(remoteEmbeddingConfig({ OPENAI_API_KEY: "sk-llm" }, {})).toBeUndefined();
    const unset = (() => {
      try {
        return remoteEmbeddingConfig({}, settings);
      } catch (error) {
        return error as Error;
      }
    })();
    expect(unset).toBeInstanceOf(RemoteEmbeddingError);
    expect((unset as Error).message).toContain("TEST_EMBED_KEY, which is not set");
  });

  test("a wrong setting is a problem status and doctor name, without repeating a key", () => {
    const problems = (embedding: unknown) =>
      configProblems({ storage: "local", llm: "none", exclude: [], embedding } as ProjectConfig, ["none"]);
    expect(problems(settings)).toEqual([]);
    expect(problems({ ...settings, apiKey: "sk-secret-in-file" })).toEqual([]);
    expect(problems("http://x")).toEqual([
      expect.stringContaining('embedding is "http://x", expected an object'),
    ]);
    const wrong = problems({
      baseUrl: "ftp://x",
      model: "",
      apiKeyEnv: "MY-KEY",
      apiKey: 7,
      api_key: "sk-secret",
    });
    expect(wrong).toHaveLength(5);
    expect(wrong.join("\n")).toContain("embedding.api_key is not a setting");
    expect(wrong.join("\n")).toContain('embedding.baseUrl is "ftp://x"');
    expect(wrong.join("\n")).toContain('embedding.apiKeyEnv is "MY-KEY"');
    expect(wrong.join("\n")).not.toContain("sk-secret");
  });

  test("ingest embeds through the configured endpoint with the key from the named variable", async () => {
    const root = project("configured", { llm: "none", embedding: settings });
    const remote = await remoteOf([root], { TEST_EMBED_KEY: "sk-from-env" });
    expect(remote).toEqual({ baseUrl: fake.base, model: "fake-small", apiKey: "sk-from-env" });
    fake.seen.length = 0;
    const report = await ingestWorkspace(root, { catalogPath: join(home, "configured.db"), remote });
    expect(report.embedded).toBe(report.chunks);
    expect(fake.seen.length).toBeGreaterThan(0);
    expect(fake.seen.every((s) => s.authorization === "Bearer sk-from-env" && s.model === "fake-small")).toBe(
      true,
    );
    expect(readFileSync(join(root, ".triforge", "config.json"), "utf8")).not.toContain("sk-from-env");
  });

  test("a wrong setting, an unset key variable or two projects naming different endpoints are clear errors", async () => {
    const bad = project("bad-setting", { llm: "none", embedding: { baseUrl: "localhost:1234" } });
    expect(await remoteOf([bad], {}).catch((e) => e.message)).toContain(
      `${join(bad, ".triforge", "config.json")}: embedding.baseUrl is "localhost:1234"`,
    );
    const good = project("good-setting", { llm: "none", embedding: settings });
    expect(await remoteOf([good], {}).catch((e) => e.message)).toContain("TEST_EMBED_KEY, which is not set");
    const other = project("other-setting", { llm: "none", embedding: { ...settings, model: "fake-other" } });
    expect(await remoteOf([good, other], { TEST_EMBED_KEY: "k" }).catch((e) => e.message)).toContain(
      "name different embedding settings",
    );
    // No setting anywhere: the embedded model.
    expect(await remoteOf([workspace], {})).toBeUndefined();
  });
});
