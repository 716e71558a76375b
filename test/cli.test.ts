import { describe, expect, test } from "bun:test";
import { runBinary, tempDir } from "./support/helpers.ts";

describe("the compiled binary's dispatcher", () => {
  const home = tempDir();

  test("--version prints the package version", async () => {
    const { code, stdout } = await runBinary(["--version"], { home });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^triforge \d+\.\d+\.\d+\n$/);
  });

  test("--version --verbose names the embedded model", async () => {
    const { code, stdout } = await runBinary(["--version", "--verbose"], { home });
    expect(code).toBe(0);
    expect(stdout).toMatch(/model potion-base-2M-\w+ \(dimension 64\)/);
  });

  test("an unknown command prints usage to stderr and exits 2", async () => {
    const { code, stdout, stderr } = await runBinary(["frobnicate"], { home });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("unknown command 'frobnicate'");
    expect(stderr).toContain("Usage: triforge <command>");
  });

  test("an unknown option prints the command's usage to stderr and exits 2", async () => {
    const { code, stderr } = await runBinary(["embed", "--no-such-flag"], { home });
    expect(code).toBe(2);
    expect(stderr).toContain("Usage: triforge embed");
  });

  test("--help lists every command of the table, under its group", async () => {
    const { commands } = await import("../src/cli/commands.ts");
    const { code, stdout } = await runBinary(["--help"], { home });
    expect(code).toBe(0);
    for (const [name, entry] of Object.entries(commands)) {
      const section = stdout.slice(stdout.indexOf(`\n${entry.group}:\n`));
      expect(section).toMatch(
        new RegExp(`^  ${name} +${entry.summary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"),
      );
    }
  });

  test("--help on a command prints its options and exits 0", async () => {
    const { code, stdout } = await runBinary(["embed", "--help"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("--stdin");
  });
});

describe("hooks fail open", () => {
  const home = tempDir();

  test("a hook command called with a bad option exits 0, prints nothing and logs the error", async () => {
    const { code, stdout, stderr } = await runBinary(["capture", "--no-such-flag"], { home, stdin: "{}" });
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toBe("");
    const log = await Bun.file(`${home}/.claude/triforge/errors.log`).text();
    expect(log).toContain("[capture] unknown option '--no-such-flag'");
  });
});
