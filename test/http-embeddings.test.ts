/**
 * OpenAI-compatible embeddings for the RAG service, against a fake of the API on 127.0.0.1 that speaks
 * its wire format (`POST /v1/embeddings` {model, input[]} → {object: "list", data: [{object:
 * "embedding", index, embedding}], model, usage}).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { embedTexts, remoteEmbeddingConfig, RemoteEmbeddingError } from "../src/embed/remote.ts";
import { startHttpServer } from "../src/http/server.ts";
import { Catalog } from "../src/rag/catalog.ts";
import { ingestWorkspace, RagRequestError, RagService } from "../src/rag/service.ts";
import { memoryHome } from "./support/memory-helpers.ts";

interface Seen {
  model: string;
  inputs: number;
  authorization: string | null;
}

/** The fake: vectors of hashed words, `dims[model]` long; `failures` answers to send before a good one. */
function fakeEmbeddings() {
  const seen: Seen[] = [];
  const state = {
    failures: [] as number[],
    delayMs: 0,
    dims: { "fake-small": 32, "fake-other": 24 } as Record<string, number>,
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/embeddings")
        return new Response("not found", { status: 404 });
      const body = (await req.json()) as { model: string; input: string[] };
      seen.push({
        model: body.model,
        inputs: body.input.length,
        authorization: req.headers.get("authorization"),
      });
      if (state.delayMs) await Bun.sleep(state.delayMs);
      const failure = state.failures.shift();
      if (failure)
        return Response.json(
          { error: { message: "try later", type: "rate_limit" } },
          { status: failure, headers: { "retry-after": "0" } },
        );
      const dim = state.dims[body.model];
      if (!dim)
        return Response.json({ error: { message: `model ${body.model} not found` } }, { status: 404 });
      const data = body.input.map((text, index) => {
        const embedding = new Array<number>(dim).fill(0);
        for (const word of text.toLowerCase().match(/[a-z]+/g) ?? [])
          embedding[Number(Bun.hash(word) % BigInt(dim))] += 1;
        embedding[0] += 0.01;
        return { object: "embedding", index, embedding };
      });
      // The API does not promise order; `index` says which input each vector is.
      data.reverse();
      return Response.json({
        object: "list",
        data,
        model: body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      });
    },
  });
  return { server, seen, state, base: `http://127.0.0.1:${server.port}/v1` };
}

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
