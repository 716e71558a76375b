import { describe, expect, test } from "bun:test";
import { ChunkEncoder } from "../src/code/chunk-encoder.ts";
import { identifierParts, pathTokens, queryTokens, tokenize } from "../src/code/tokens.ts";
import { loadModel } from "../src/embed/source.ts";

describe("identifier-aware tokens", () => {
  test("camelCase and PascalCase split into words, the whole identifier kept lower-cased", () => {
    expect(tokenize("parseHTTPResponse")).toEqual(
      expect.arrayContaining(["parsehttpresponse", "parse", "http", "response"]),
    );
    expect(identifierParts("XMLHttpRequest2")).toEqual(["xml", "http", "request", "2"]);
  });

  test("snake_case and SCREAMING_CASE split at underscores, camel parts inside pieces split too", () => {
    expect(tokenize("flat_hash_map")).toEqual(["flat_hash_map", "flat", "hash", "map"]);
    expect(tokenize("MAX_RETRY_count")).toEqual(
      expect.arrayContaining(["max_retry_count", "max", "retry", "count"]),
    );
    expect(identifierParts("get_HTTPClient")).toEqual(["get", "http", "client"]);
  });

  test("plurals and -ing forms add a stem beside the word; short words are left alone", () => {
    expect(tokenize("handlers")).toEqual(["handlers", "handler"]);
    expect(tokenize("routing")).toEqual(["routing", "rout", "route"]);
    expect(tokenize("parsed")).toEqual(["parsed", "pars", "parse"]);
    expect(tokenize("uses")).toEqual(["uses"]);
  });

  test("single letters, numbers and punctuation make no tokens; term frequency is kept", () => {
    expect(tokenize("a = b + 42; (x) => {}")).toEqual([]);
    expect(tokenize("retry retry")).toEqual(["retry", "retry"]);
  });

  test("queries drop English stopwords unless nothing else is left", () => {
    expect(queryTokens("where is the session stored")).toEqual(["session", "stored", "stor", "store"]);
    expect(queryTokens("what is this")).toEqual(["what", "is", "this"]);
  });

  test("path tokens carry the file stem twice and up to three parent folders", () => {
    expect(pathTokens("src/net/http/client_pool.go")).toEqual([
      "client_pool",
      "client",
      "pool",
      "client_pool",
      "client",
      "pool",
      "src",
      "net",
      "http",
    ]);
  });

  test("the indexer's one-scan encoder gives each chunk exactly tokenize()'s terms plus its path's", async () => {
    const texts = [
      "parseHTTPResponse(flat_hash_map, 0x1FfA, 42abc, __init__, _private) // Ünïcode名前 naïveCase",
      "handlers routing parsed uses\n\tMAX_RETRY_count = getX2() + a1b2c3;",
      "",
      "   ?.->",
      "parseHTTPResponse parseHTTPResponse parsehttpresponse",
    ];
    const paths = ["src/net/http_client.ts", "src/net/http_client.ts", "lib/Ünï/x.py", "a", "b/c/d/e/f.go"];
    const encoder = new ChunkEncoder(await loadModel());
    texts.forEach((text, i) => {
      encoder.add(paths[i], text);
    });
    const { additions, interner } = encoder;
    texts.forEach((text, doc) => {
      const expected = [...tokenize(text), ...pathTokens(paths[doc])];
      const want = new Map<string, number>();
      for (const term of expected) want.set(term, (want.get(term) ?? 0) + 1);
      const got = new Map<string, number>();
      for (let p = 0; p < additions.count; p++)
        if (additions.doc[p] === doc) got.set(interner.terms[additions.term[p]], additions.freq[p]);
      expect(got).toEqual(want);
      expect(additions.lengths[doc]).toBe(expected.length);
    });
    // One vocabulary across texts: a term seen twice has one id.
    expect(new Set(interner.terms).size).toBe(interner.terms.length);
  });
});
