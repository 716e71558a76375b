/**
 * The docs cannot drift from the CLI: every `triforge <command> --option` written in code in the README
 * or under docs/ names a command of the command table, and each option appears in that command's
 * `--help`. Prose is not read; only code spans and fenced blocks, where a reader copies from.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { commands } from "../src/cli/commands.ts";
import { ROOT, spawnCollect } from "./support/helpers.ts";

/** Options of `triforge` itself, before any command. */
const TOP_LEVEL_OPTIONS = new Set(["--version", "--verbose", "--help", "-h"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/**
 * The code a reader would copy: fenced blocks' lines and inline code spans. A block marked `text` is
 * quoted prose (the MCP server's instructions), not commands.
 */
function codeOf(markdown: string): string[] {
  const pieces: string[] = [];
  let fence: "code" | "prose" | undefined;
  for (const line of markdown.split("\n")) {
    const opening = /^\s*(```|~~~)\s*(\w*)/.exec(line);
    if (opening) {
      fence = fence ? undefined : opening[2] === "text" ? "prose" : "code";
      continue;
    }
    if (fence === "code") pieces.push(line);
    else if (fence === "prose") continue;
    else for (const span of line.matchAll(/(`+)([^`]+?)\1/g)) pieces.push(span[2]);
  }
  return pieces;
}

interface Invocation {
  command: string;
  options: string[];
}

/**
 * `triforge <command> …` invocations in a piece of code, with the options written after the command (up
 * to a shell separator or the next `triforge`). A word followed by `:` is a URL's scheme, not a command.
 */
function invocations(code: string): Invocation[] {
  const found: Invocation[] = [];
  const pattern =
    /(?<![\w/.@-])triforge((?:\s+-[-\w]+)*)\s+([a-z][a-z0-9-]*)(?![\w:-])((?:(?!triforge)[^|;&#)\n])*)/g;
  for (const match of code.matchAll(pattern)) {
    const before = match[1].trim().split(/\s+/).filter(Boolean);
    const options = [...(match[3] ?? "").matchAll(/(?<![\w-])(--?[a-zA-Z][\w-]*)/g)].map((m) => m[1]);
    found.push({ command: match[2], options: [...before, ...options] });
  }
  return found;
}

const helpCache = new Map<string, Promise<string>>();
function helpOf(command: string): Promise<string> {
  let help = helpCache.get(command);
  if (!help) {
    help = spawnCollect(["bun", join(ROOT, "src/index.ts"), command, "--help"]).then((r) => r.stdout);
    helpCache.set(command, help);
  }
  return help;
}

describe("docs name only commands and options that exist", () => {
  const files = [join(ROOT, "README.md"), ...markdownFiles(join(ROOT, "docs"))];

  test("the scanner reads invocations and their options", () => {
    expect(invocations('triforge search "x" . -k 3 --json | head')).toEqual([
      { command: "search", options: ["-k", "--json"] },
    ]);
    expect(invocations("see triforge-linux-x64 and ~/.claude/triforge/cache")).toEqual([]);
    expect(invocations("scoop bucket add triforge https://example.org/b")).toEqual([]);
    expect(invocations("triforge prelude   triforge index --background")).toEqual([
      { command: "prelude", options: [] },
      { command: "index", options: ["--background"] },
    ]);
    expect(
      codeOf("run `triforge status --json` now\n```sh\ntriforge doctor\n```\n```text\ntriforge gives\n```\n"),
    ).toEqual(["triforge status --json", "triforge doctor"]);
  });

  test("every command and option named in code in README.md and docs/ is in the CLI", async () => {
    const problems: string[] = [];
    let seen = 0;
    for (const file of files) {
      for (const code of codeOf(readFileSync(file, "utf8"))) {
        for (const { command, options } of invocations(code)) {
          seen++;
          const where = `${relative(ROOT, file)}: \`${code.trim()}\``;
          if (!Object.hasOwn(commands, command)) {
            problems.push(`${where}: no command '${command}'`);
            continue;
          }
          const help = await helpOf(command);
          for (const option of options) {
            if (TOP_LEVEL_OPTIONS.has(option)) continue;
            const listed = option.startsWith("--")
              ? new RegExp(`(^|[\\s,\\[])${option}(?![\\w-])`, "m").test(help)
              : new RegExp(`(^|\\s)${option},`, "m").test(help);
            if (!listed) problems.push(`${where}: '${command} --help' lists no ${option}`);
          }
        }
      }
    }
    expect(seen).toBeGreaterThan(30);
    expect(problems).toEqual([]);
  }, 120_000);
});
