/** `triforge embed --stdin` with bad lines, through the compiled binary. */
import { describe, expect, test } from "bun:test";
import { runBinary, tempDir } from "./support/helpers.ts";

const home = tempDir("triforge-cli-embed-");

describe("triforge embed --stdin with bad lines", () => {
  test("a bad line is reported with its number, the rest is still embedded, and the exit code is 1", async () => {
    const input = ['{"text":"first"}', "not json", "", '{"body":1}', '{"text":"last"}'].join("\n");
    const { code, stdout, stderr } = await runBinary(["embed", "--stdin"], { home, stdin: `${input}\n` });
    expect(code).toBe(1);
    expect(stderr).toContain("line 2: not valid JSON");
    expect(stderr).toContain('line 4: expected {"text": "..."}');
    // One output line per non-blank input line, in order, so outputs still pair with inputs.
    const lines = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(4);
    expect(lines[1]).toEqual({ line: 2, error: "not valid JSON" });
    expect(lines[2]).toEqual({ line: 4, error: 'expected {"text": "..."}' });
    const single = async (text: string) => JSON.parse((await runBinary(["embed", text], { home })).stdout);
    expect(lines[0]).toEqual(await single("first"));
    expect(lines[3]).toEqual(await single("last"));
  });

  test("input with no bad line exits 0 with nothing on stderr", async () => {
    const { code, stdout, stderr } = await runBinary(["embed", "--stdin"], {
      home,
      stdin: '{"text":"one"}\n{"text":"two"}\n',
    });
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout.trimEnd().split("\n")).toHaveLength(2);
  });
});
