import { afterEach, describe, expect, test } from "bun:test";
import { pathPenalty, STRONG_PATH_PENALTY } from "../src/code/rank/penalties.ts";
import { setTuning, tuned } from "../src/code/rank/tuning.ts";

afterEach(() => setTuning({}));

describe("ranking tuning overrides (benchmark/code-cv.ts)", () => {
  test("without overrides every weight is its file's constant", () => {
    expect(tuned("definitionBoost", 3)).toBe(3);
    expect(pathPenalty("tests/test_app.py")).toBe(STRONG_PATH_PENALTY);
  });

  test("an override changes the weight where it is applied, and clearing restores the constant", () => {
    setTuning({ strongPathPenalty: 0.6 });
    expect(pathPenalty("tests/test_app.py")).toBe(0.6);
    expect(pathPenalty("examples/demo/tests/a.py")).toBeCloseTo(0.36);
    expect(tuned("definitionBoost", 3)).toBe(3);
    setTuning({});
    expect(pathPenalty("tests/test_app.py")).toBe(STRONG_PATH_PENALTY);
  });

  test("setTuning replaces earlier overrides rather than adding to them", () => {
    setTuning({ definitionBoost: 1 });
    setTuning({ pathMatchBoost: 2 });
    expect(tuned("definitionBoost", 3)).toBe(3);
    expect(tuned("pathMatchBoost", 1)).toBe(2);
  });
});
