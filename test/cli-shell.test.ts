import { describe, expect, test } from "bun:test";
import { shellQuote, triforgeCommand } from "../src/home/shell.ts";

/** Runs `line` under sh with `triforge` defined to print its arguments, one per `|`. */
function argvUnderSh(line: string): string {
  const result = Bun.spawnSync(["sh", "-c", `triforge() { printf '%s|' "$@"; }; ${line}`]);
  expect(result.exitCode).toBe(0);
  return result.stdout.toString();
}

describe("shellQuote", () => {
  const paths = [
    "/home/me/project",
    "/home/me/my project",
    "/home/me/it's here",
    "/tmp/$HOME and `date` and \\n",
    "/tmp/semi;colon & amp|pipe",
    "/tmp/*glob?[x]",
    "",
  ];

  test("POSIX: every path reaches the program as one argument, unchanged", () => {
    for (const path of paths)
      expect(argvUnderSh(`triforge x ${shellQuote(path, "linux")}`)).toBe(`x|${path}|`);
  });

  test("POSIX: a plainly safe path stays bare; anything else is single-quoted", () => {
    expect(shellQuote("/usr/local/bin/triforge", "linux")).toBe("/usr/local/bin/triforge");
    expect(shellQuote("/home/me/my project", "darwin")).toBe("'/home/me/my project'");
    expect(shellQuote("/it's", "linux")).toBe(`'/it'\\''s'`);
  });

  test("Windows: always double-quoted, with forward slashes", () => {
    expect(shellQuote("C:\\Users\\me\\my proj", "win32")).toBe('"C:/Users/me/my proj"');
    expect(shellQuote("C:\\work", "win32")).toBe('"C:/work"');
  });
});

describe("triforgeCommand", () => {
  test("a printed command with a spaced path runs as written", () => {
    const line = triforgeCommand(["index", "--project", "/home/me/it's my app"], "linux");
    expect(line).toBe(`triforge index --project '/home/me/it'\\''s my app'`);
    expect(argvUnderSh(line)).toBe("index|--project|/home/me/it's my app|");
  });

  test("on Windows the path is double-quoted", () => {
    expect(triforgeCommand(["activate", "--project", "C:\\a b"], "win32")).toBe(
      'triforge activate --project "C:/a b"',
    );
  });
});
