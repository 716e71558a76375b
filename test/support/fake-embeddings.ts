/**
 * A fake of an OpenAI-compatible embeddings API on 127.0.0.1 that speaks its wire format (`POST
 * /v1/embeddings` {model, input[]} → {object: "list", data: [{object: "embedding", index, embedding}],
 * model, usage}), answering out of order; `state.failures` are statuses to send before a good answer.
 */

export interface Seen {
  model: string;
  inputs: number;
  authorization: string | null;
}

/** The fake: vectors of hashed words, `dims[model]` long; `failures` answers to send before a good one. */
export function fakeEmbeddings() {
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
