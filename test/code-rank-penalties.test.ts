import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { searchCode } from "../src/code/code-search.ts";
import { pathPenalty, STRONG_PATH_PENALTY } from "../src/code/rank/penalties.ts";
import { setTuning } from "../src/code/rank/tuning.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

beforeAll(() => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
});
afterEach(() => setTuning({}));

describe("built output committed beside the source", () => {
  test("dist/ bundles and HTML pages under docs/ rank like generated files; other HTML and names merely like dist do not", () => {
    for (const path of [
      "dist/axios.js",
      "packages/core/dist/index.cjs",
      "docs/index.html",
      "doc/api/Classes/Session.htm",
      "docs/docsets/Lib.docset/Contents/Resources/Documents/index.html",
    ])
      expect([path, pathPenalty(path)]).toEqual([path, STRONG_PATH_PENALTY]);
    for (const path of [
      "lib/dist.js",
      "src/distance.ts",
      "templates/page.html",
      "src/docs.html",
      "docs/guide.md",
    ])
      expect([path, pathPenalty(path)]).toEqual([path, 1]);
  });

  test("the source files rank above the committed bundle that repeats them", async () => {
    const merge =
      "export function mergeConfig(defaults, overrides) {\n  // a request's own options override the config defaults\n  return { ...defaults, ...overrides };\n}\n";
    const defaults =
      "export const defaults = {\n  // the config defaults every request starts from, before its options\n  timeout: 0,\n  headers: { Accept: 'application/json' },\n};\n";
    const root = codeRepository({
      "lib/core/combine.js": merge,
      "lib/core/base.js": defaults,
      "dist/axios.js": `// bundled\n${defaults}\n${merge}`,
    });
    const query = "how request options override the config defaults";
    const files = async () => (await searchCode(root, query, { topK: 3 })).hits.map((h) => h.file_path);
    const ranked = await files();
    expect(ranked.slice(0, 2).sort()).toEqual(["lib/core/base.js", "lib/core/combine.js"]);
    expect(ranked[2]).toBe("dist/axios.js");
    // Without the rule the bundle, which holds both files' words, outranks one of them.
    setTuning({ buildOutputPenalty: 1 });
    const before = await files();
    expect(before.indexOf("dist/axios.js")).toBeLessThan(before.indexOf("lib/core/base.js"));
  });
});

describe("test folders", () => {
  test("a folder named as a kind of tests (integration_test/, e2e-tests/) ranks like tests/; a word merely ending in test does not", () => {
    for (const path of ["integration_test/cases/repo.exs", "e2e-tests/login.ts", "lib/unit_tests/parse.py"])
      expect([path, pathPenalty(path)]).toEqual([path, STRONG_PATH_PENALTY]);
    for (const path of ["lib/ecto/repo.ex", "src/latest/index.ts", "contest/solve.c", "src/attest/verify.rs"])
      expect([path, pathPenalty(path)]).toEqual([path, 1]);
  });

  test("the implementation ranks above an integration test that exercises it with more of the words", async () => {
    const root = codeRepository({
      "lib/store/insert.ex":
        "defmodule Store.Insert do\n  # checks the rows before they are sent\n  def insert_all(rows, placeholders), do: check_types(rows, placeholders)\nend\n",
      "integration_test/cases/insert.exs":
        'defmodule Store.InsertTest do\n  # insert_all with a placeholder of the wrong type: the placeholder type mismatch is reported\n  test "insert_all placeholder type mismatch" do\n    assert_raise ArgumentError, fn -> Store.Insert.insert_all([[1]], [type: :string]) end\n  end\nend\n',
    });
    const query = "placeholder type mismatch check";
    const first = async () => (await searchCode(root, query, { topK: 2 })).hits[0].file_path;
    expect(await first()).toBe("lib/store/insert.ex");
    setTuning({ namedTestDirPenalty: 1 });
    expect(await first()).toBe("integration_test/cases/insert.exs");
  });
});
