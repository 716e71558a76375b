import { describe, expect, test } from "bun:test";
import { ndcgAt10, pathMatches, type Query } from "../benchmark/code-quality.ts";

describe("code-quality's NDCG@10", () => {
  test("a target path matches only whole path components", () => {
    expect(pathMatches("completions.go", "completions.go")).toBe(true);
    expect(pathMatches("cmd/completions.go", "completions.go")).toBe(true);
    expect(pathMatches("bash_completions.go", "completions.go")).toBe(false);
    expect(pathMatches("src/mycore.h", "core.h")).toBe(false);
  });

  test("a file whose name ends with another target's name does not take that target's hit", () => {
    const query: Query = {
      query: "shell completion scripts",
      relevant: ["shell_completions.go"],
      secondary: ["completions.go"],
      category: "semantic",
    };
    const hit = (file_path: string) => ({ file_path, start_line: 1, end_line: 20 });
    // Both targets in the first two places: a perfect ranking.
    expect(ndcgAt10([hit("shell_completions.go"), hit("completions.go")], query, "")).toBeCloseTo(1, 6);
    // Only the first target found: shell_completions.go must not also count as completions.go.
    const one = 1 / (1 + 1 / Math.log2(3));
    expect(ndcgAt10([hit("shell_completions.go"), hit("other.go")], query, "")).toBeCloseTo(one, 6);
  });

  test("the benchmark root's prefix and a target's line span both count", () => {
    const query: Query = {
      query: "Parser",
      relevant: [{ path: "lib/parse/parser.ts", start_line: 40, end_line: 60 }],
      category: "symbol",
    };
    expect(ndcgAt10([{ file_path: "parse/parser.ts", start_line: 50, end_line: 70 }], query, "lib/")).toBe(1);
    expect(ndcgAt10([{ file_path: "parse/parser.ts", start_line: 1, end_line: 30 }], query, "lib/")).toBe(0);
  });
});
