import { beforeAll, expect, test } from "bun:test";
import { openIndex } from "../src/code/code-search.ts";
import { WHOLE_IDENTIFIER } from "../src/code/rank/boosts.ts";
import { definesSymbol, definesType } from "../src/code/rank/definitions.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

/**
 * Definitions in the forms definesSymbol and definesType know, each beside uses of the same names
 * inside longer identifiers, strings and comments: rerank rules a chunk out of defining a name
 * when its postings lack the name's term, which holds only if every definition names it as a whole
 * identifier the indexer keeps.
 */
const FILES: Record<string, string> = {
  "src/a.ts":
    "// see getRetryDelay and retryDelayMs\nexport function retryDelay(attempt: number) {\n  return 2 ** attempt;\n}\nexport const loadConfig = async (path: string) => read(path);\nexport class HttpClient<T> extends Base {}\ntype Options = { a: 1 };\nexport interface Column$ { x: number }\n",
  "src/b.go":
    "package b\n\n// serveHTTPish is not it\nfunc (m *Mux) ServeHTTP(w Writer, r *Request) {\n}\n\ntype Router struct {\n\troutes []Route\n}\n",
  "src/c.rs":
    "impl Router {\n    pub fn with_state<S>(self, state: S) -> Self { self }\n}\npub struct Extension2(pub T);\nimpl From<u8> for Router {}\n",
  "src/d.py":
    "class ClientSession:\n    async def _request(self, method, url):\n        return await self._do_request(method)\n\ndef __init_subclass__(cls):\n    pass\n",
  "src/e.c":
    "static int\nCurl_conn_data(struct Curl_easy *data)\n{\n  return data->conn_data_x;\n}\nCURLcode Curl_xfer_send(struct Curl_easy *data, const void *buf)\n{\n  return 0;\n}\n",
  "src/f.cc":
    "absl::Status StrCat::AppendPieces(absl::string_view a) {\n  return OkStatus();\n}\ntemplate <typename T>\nclass FixedArray {};\nusing Duration = int64_t;\n",
  "src/g.hs": 'parseJSON :: Value -> Parser a\nparseJSON = withObject "x" $ \\o -> pure o\n',
  "src/h.lua": "local function setup_keys(opts)\n  return opts\nend\nM.load_plugin = function(name) end\n",
  "src/i.kt":
    "fun <T> Column<T>.isNotNull(): Op<Boolean> = IsNotNullOp(this)\ndata class Point(val x: Int)\nsealed class Expression<T>\n",
  "src/j.ex":
    "defmodule Ecto.Repo do\n  defp insert_all_x(rows), do: rows\n  def insert_all(rows, opts), do: insert_all_x(rows)\nend\n",
  "src/k.sh": 'bash_it_reload() {\n  source "$HOME/.bashrc"\n}\n',
  "src/l.swift":
    "public func request(_ url: URL) -> DataRequest {\n  return DataRequest(url)\n}\nstruct HTTPHeaders {}\n",
  "src/m.java":
    "public final class StringUtils {\n  public static boolean isBlank(final CharSequence cs) {\n    return cs == null;\n  }\n}\n",
  "src/n.rb": "module Rack\n  class Builder\n    def self.parse_file(path)\n    end\n  end\nend\n",
  "src/o.php":
    "final class Client implements ClientInterface\n{\n    public function sendAsync(RequestInterface $request): PromiseInterface\n    {\n    }\n}\n",
  "src/p.scala":
    "trait Functor[F[_]] {\n  def map[A, B](fa: F[A])(f: A => B): F[B]\n}\nobject Semigroup {}\n",
  "src/q.zig":
    "pub fn parseParam(str: []const u8) !Param {\n    return error.Invalid;\n}\nconst Token = struct {};\n",
  "src/r.js":
    "module.exports.mergeConfig = function mergeConfig(config1, config2) {\n  return x;\n};\nAxios.prototype.request = function request(config) {};\n",
};

let index: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
  index = await openIndex(codeRepository(FILES), { refresh: "now" });
});

function holdsTerm(term: string, chunk: number): boolean {
  const id = index.bm25.termIds.get(term);
  if (id === undefined) return false;
  for (let p = index.bm25.offsets[id]; p < index.bm25.offsets[id + 1]; p++)
    if (index.bm25.docs[p] === chunk) return true;
  return false;
}

test("a chunk defining a whole-identifier name holds the name's term: definitions in every form, and decoys", () => {
  // Every identifier of the repository as a name, with sub-words, camel parts and their cases.
  const names = new Set<string>();
  for (const text of Object.values(FILES))
    for (const word of text.match(/[A-Za-z_$][\w$]*/g) ?? []) {
      names.add(word);
      for (const part of word.split(/_|(?=[A-Z])/)) if (part) names.add(part);
      names.add(word.slice(1));
      names.add(word.slice(0, -1));
    }
  let definitions = 0;
  for (let chunk = 0; chunk < index.texts.length; chunk++)
    for (const name of names) {
      if (!WHOLE_IDENTIFIER.test(name)) continue;
      for (const defines of [definesSymbol, definesType])
        if (defines(index.texts[chunk], name)) {
          definitions++;
          expect([name, chunk, holdsTerm(name.toLowerCase(), chunk)]).toEqual([name, chunk, true]);
        }
    }
  // The fixture's definitions are found (the check above is not vacuous).
  expect(definitions).toBeGreaterThan(40);
});

test("WHOLE_IDENTIFIER: identifier characters, not a leading digit, two or more, not only underscores", () => {
  for (const name of ["retryDelay", "_request", "__init_subclass__", "x1", "Curl_xfer_send"])
    expect([name, WHOLE_IDENTIFIER.test(name)]).toEqual([name, true]);
  for (const name of ["x", "__", "2fa", "Foo.bar", "std::vector", "$scope", "Column$", "a-b", ""])
    expect([name, WHOLE_IDENTIFIER.test(name)]).toEqual([name, false]);
});
