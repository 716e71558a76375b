import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { folders, snapshot } from "./support/agents-tree.ts";
import { compiledBinary, runBinary, tempDir } from "./support/helpers.ts";

/** A fake triforge binary path (install only writes it into configs; doctor checks it exists). */
function fakeBinary(root: string, name = "bin dir/triforge"): string {
  const path = join(root, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "#!/bin/sh\necho triforge 0.0.0\n");
  chmodSync(path, 0o755);
  return path;
}

/** A home folder (its name has a space, as many do) and a fake binary beside it. */
const scratch = tempDir("triforge-agents-");

function newHome(name = "my home"): { home: string; binary: string } {
  const root = mkdtempSync(join(scratch, "case-"));
  const home = join(root, name);
  mkdirSync(home, { recursive: true });
  return { home, binary: fakeBinary(root) };
}

/** Agent locations come from HOME only: variables of the machine running the tests must not leak in. */
const ISOLATED = {
  XDG_CONFIG_HOME: undefined,
  CODEX_HOME: undefined,
  CLAUDE_CONFIG_DIR: undefined,
  TRIFORGE_BINARY: undefined,
};

const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("triforge install / uninstall (Claude Code)", () => {
  test("a fresh home: everything is created, a second run changes nothing, uninstall leaves the home as it was", async () => {
    const { home, binary } = newHome();
    const env = { ...ISOLATED, TRIFORGE_BINARY: binary };
    const first = await runBinary(["install"], { home, env });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("triforge installed for Claude Code");
    expect(json(join(home, ".claude.json")).mcpServers).toEqual({
      triforge: { type: "stdio", command: binary, args: ["serve"] },
      insforge: { type: "http", url: "https://mcp.insforge.dev/mcp" },
    });
    const instructions = readFileSync(join(home, ".claude", "CLAUDE.md"), "utf8");
    expect(instructions).toMatch(
      /^<!-- triforge:begin[^\n]*-->\n## triforge: long-term memory and code search\n/,
    );
    expect(instructions).toContain("## triforge in a project with `.triforge/`");
    expect(instructions.trimEnd().endsWith("<!-- triforge:end -->")).toBe(true);
    const rag = readFileSync(join(home, ".claude", "commands", "rag.md"), "utf8");
    expect(rag).toStartWith("---\ndescription: ");
    expect(rag).toContain(`allowed-tools: Bash('${binary}' activate:*)`);
    expect(rag).toContain(`!\`'${binary}' activate\``);
    expect(statSync(join(home, ".claude", "triforge")).isDirectory()).toBe(true);

    const installed = snapshot(home);
    const second = await runBinary(["install"], { home, env });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("nothing changed");
    expect(snapshot(home)).toEqual(installed);

    const removed = await runBinary(["uninstall"], { home, env: ISOLATED });
    expect(removed.code).toBe(0);
    expect(snapshot(home)).toEqual({});
    expect(folders(home)).toEqual([]);
  });

  test("existing files come back byte for byte, and install touched only its own bytes", async () => {
    const { home, binary } = newHome("home with spaces");
    const claudeJson = `{\n    "numStartups": 42,\n    "theme": "dark",\n    "mcpServers": {\n        "github": { "type": "http", "url": "https://example.invalid/mcp" }\n    },\n    "projects": {\n        "/w": { "allowedTools": [] }\n    }\n}`;
    const userInstructions = "# My rules\n\nAlways use tabs.\n";
    writeFileSync(join(home, ".claude.json"), claudeJson);
    mkdirSync(join(home, ".claude", "commands"), { recursive: true });
    writeFileSync(join(home, ".claude", "CLAUDE.md"), userInstructions);
    writeFileSync(join(home, ".claude", "commands", "review.md"), "Review the diff.\n");
    const before = snapshot(home);

    const result = await runBinary(["install", "--no-insforge", "--with-semble"], {
      home,
      env: { ...ISOLATED, TRIFORGE_BINARY: binary },
    });
    expect(result.code).toBe(0);
    const after = readFileSync(join(home, ".claude.json"), "utf8");
    // The user's formatting stays: 4-space indent, the inline github entry, key order.
    expect(
      after.startsWith(
        `{\n    "numStartups": 42,\n    "theme": "dark",\n    "mcpServers": {\n        "github": { "type": "http", "url": "https://example.invalid/mcp" },\n        "triforge": {\n            "type": "stdio",`,
      ),
    ).toBe(true);
    expect(Object.keys(json(join(home, ".claude.json")).mcpServers)).toEqual([
      "github",
      "triforge",
      "semble",
    ]);
    expect(json(join(home, ".claude.json")).mcpServers.semble).toEqual({
      type: "stdio",
      command: "uvx",
      args: ["--from", "semble[mcp]", "semble"],
    });
    expect(readFileSync(join(home, ".claude", "CLAUDE.md"), "utf8")).toStartWith(
      `${userInstructions}\n<!-- triforge:begin`,
    );
    // A timestamped backup of ~/.claude.json was taken before it changed.
    const backups = readdirSync(join(home, ".claude", "triforge", "backups"));
    expect(backups.some((name) => /^claude\.json\.[0-9a-f]{8}\.\d{4}-\d\d-\d\dT/.test(name))).toBe(true);

    expect((await runBinary(["uninstall"], { home, env: ISOLATED })).code).toBe(0);
    expect(snapshot(home)).toEqual(before);
  });

  test("edits the user made after install survive uninstall; only our entries and section go", async () => {
    const { home, binary } = newHome();
    writeFileSync(
      join(home, ".claude.json"),
      `{\n  "numStartups": 1,\n  "mcpServers": {\n    "mine": {"type": "stdio", "command": "mine"}\n  }\n}\n`,
    );
    expect((await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: binary } })).code).toBe(
      0,
    );

    // Claude Code rewrites the file as it runs (JSON.stringify, 2 spaces); the user adds a server.
    const rewritten = json(join(home, ".claude.json"));
    rewritten.numStartups = 7;
    rewritten.mcpServers.later = { type: "http", url: "https://later.invalid" };
    writeFileSync(join(home, ".claude.json"), JSON.stringify(rewritten, null, 2));
    const instructions = join(home, ".claude", "CLAUDE.md");
    writeFileSync(
      instructions,
      `# Added by me above\n\n${readFileSync(instructions, "utf8")}\nAnd a note below.\n`,
    );

    const result = await runBinary(["uninstall"], { home, env: ISOLATED });
    expect(result.code).toBe(0);
    expect(json(join(home, ".claude.json"))).toEqual({
      numStartups: 7,
      mcpServers: {
        mine: { type: "stdio", command: "mine" },
        later: { type: "http", url: "https://later.invalid" },
      },
    });
    expect(readFileSync(instructions, "utf8")).toBe("# Added by me above\n\nAnd a note below.\n");
    expect(existsSync(join(home, ".claude", "commands", "rag.md"))).toBe(false);
  });

  test("an entry the user already has under 'insforge' is theirs: kept by install and by uninstall", async () => {
    const { home, binary } = newHome();
    const theirs = {
      type: "http",
      url: "https://mcp.insforge.dev/mcp",
      headers: { Authorization: "Bearer x" },
    };
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ mcpServers: { insforge: theirs } }, null, 2));
    expect((await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: binary } })).code).toBe(
      0,
    );
    expect(json(join(home, ".claude.json")).mcpServers.insforge).toEqual(theirs);
    writeFileSync(join(home, ".claude.json"), `${readFileSync(join(home, ".claude.json"), "utf8")}\n`); // touched
    expect((await runBinary(["uninstall"], { home, env: ISOLATED })).code).toBe(0);
    expect(json(join(home, ".claude.json"))).toEqual({ mcpServers: { insforge: theirs } });
  });

  test("a moved binary: install again updates the path; uninstall still restores the original", async () => {
    const { home, binary } = newHome();
    const original = `{\n  "mcpServers": {}\n}\n`;
    writeFileSync(join(home, ".claude.json"), original);
    expect((await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: binary } })).code).toBe(
      0,
    );
    const moved = fakeBinary(join(binary, "..", ".."), "elsewhere/triforge");
    const again = await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: moved } });
    expect(again.stdout).toContain("updated   ~/.claude.json");
    expect(json(join(home, ".claude.json")).mcpServers.triforge.command).toBe(moved);
    expect(readFileSync(join(home, ".claude", "commands", "rag.md"), "utf8")).toContain(moved);
    expect((await runBinary(["uninstall"], { home, env: ISOLATED })).code).toBe(0);
    expect(readFileSync(join(home, ".claude.json"), "utf8")).toBe(original);
  });

  test("without TRIFORGE_BINARY the entry names this binary, by its PATH link when one leads to it", async () => {
    const { home } = newHome();
    const binary = await compiledBinary();
    const plain = await runBinary(["install", "--agents", "cursor"], { home, env: ISOLATED });
    expect(plain.code).toBe(0);
    expect(json(join(home, ".cursor", "mcp.json")).mcpServers.triforge.command).toBe(binary);
    // A package manager's stable link (e.g. /opt/homebrew/bin/triforge → a versioned folder).
    const links = join(home, "..", "links");
    mkdirSync(links);
    symlinkSync(binary, join(links, basename(binary)));
    const linked = await runBinary(["install", "--agents", "cursor"], {
      home,
      env: { ...ISOLATED, PATH: `${links}:${process.env.PATH}` },
    });
    expect(linked.code).toBe(0);
    expect(json(join(home, ".cursor", "mcp.json")).mcpServers.triforge.command).toBe(
      join(links, basename(binary)),
    );
  });

  test("a malformed ~/.claude.json is refused with a clear error and nothing is written", async () => {
    const { home, binary } = newHome();
    writeFileSync(join(home, ".claude.json"), `{"mcpServers": {,}`);
    const result = await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: binary } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\.claude\.json: invalid JSON \(.+ at line 1\)/);
    expect(readFileSync(join(home, ".claude.json"), "utf8")).toBe(`{"mcpServers": {,}`);
    expect(existsSync(join(home, ".claude", "CLAUDE.md"))).toBe(false);
    expect(existsSync(join(home, ".claude", "commands"))).toBe(false);
  });

  test("unknown agents are a usage error; uninstall without install says so", async () => {
    const { home } = newHome();
    const bad = await runBinary(["install", "--agents", "claude,vim"], { home, env: ISOLATED });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "--agents takes a list of claude, codex, cursor, opencode; got 'claude,vim'",
    );
    const nothing = await runBinary(["uninstall"], { home, env: ISOLATED });
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toContain("not installed");
  });
});

describe("triforge install (Codex, Cursor, OpenCode)", () => {
  test("present agents are detected; each config gets its own format; uninstall restores every byte", async () => {
    const { home, binary } = newHome();
    mkdirSync(join(home, ".codex"));
    mkdirSync(join(home, ".cursor"));
    mkdirSync(join(home, ".config", "opencode"), { recursive: true });
    writeFileSync(
      join(home, ".codex", "config.toml"),
      `model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--stdio"]\n`,
    );
    writeFileSync(
      join(home, ".config", "opencode", "opencode.jsonc"),
      `{\n  // my OpenCode setup\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight",\n}\n`,
    );
    const before = snapshot(home);

    const result = await runBinary(["install", "--no-insforge"], {
      home,
      env: { ...ISOLATED, TRIFORGE_BINARY: binary },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Claude Code, Codex, Cursor, OpenCode");

    const codex = Bun.TOML.parse(readFileSync(join(home, ".codex", "config.toml"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(codex.model).toBe("o3");
    expect(codex.mcp_servers).toEqual({
      docs: { command: "docs-mcp", args: ["--stdio"] },
      triforge: { command: binary, args: ["serve"] },
    });
    expect(json(join(home, ".cursor", "mcp.json"))).toEqual({
      mcpServers: { triforge: { command: binary, args: ["serve"] } },
    });
    const opencode = readFileSync(join(home, ".config", "opencode", "opencode.jsonc"), "utf8");
    expect(opencode).toContain("// my OpenCode setup");
    const { getJsonValue } = await import("../src/agents/json-edit.ts");
    expect(getJsonValue(opencode, ["mcp"])).toEqual({
      triforge: { type: "local", command: [binary, "serve"], enabled: true },
    });
    expect(getJsonValue(opencode, ["theme"])).toBe("tokyonight");

    const again = await runBinary(["install", "--no-insforge"], {
      home,
      env: { ...ISOLATED, TRIFORGE_BINARY: binary },
    });
    expect(again.stdout).toContain("nothing changed");

    expect((await runBinary(["uninstall"], { home, env: ISOLATED })).code).toBe(0);
    expect(snapshot(home)).toEqual(before);
    expect(folders(home)).toEqual([".codex", ".config", ".config/opencode", ".cursor"]);
  });

  test("--agents writes only the named agents, creating their files", async () => {
    const { home, binary } = newHome();
    const result = await runBinary(["install", "--agents", "codex,opencode"], {
      home,
      env: { ...ISOLATED, TRIFORGE_BINARY: binary },
    });
    expect(result.code).toBe(0);
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
    expect(readFileSync(join(home, ".codex", "config.toml"), "utf8")).toBe(
      `[mcp_servers.triforge]\ncommand = ${JSON.stringify(binary)}\nargs = ["serve"]\n`,
    );
    expect(json(join(home, ".config", "opencode", "opencode.json"))).toEqual({
      $schema: "https://opencode.ai/config.json",
      mcp: { triforge: { type: "local", command: [binary, "serve"], enabled: true } },
    });
    expect((await runBinary(["uninstall"], { home, env: ISOLATED })).code).toBe(0);
    expect(snapshot(home)).toEqual({});
  });

  test("a Codex config that is not valid TOML is refused before anything is written", async () => {
    const { home, binary } = newHome();
    mkdirSync(join(home, ".codex"));
    writeFileSync(join(home, ".codex", "config.toml"), `model = "o3\n`);
    const result = await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: binary } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("config.toml: invalid TOML");
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
  });
});

describe("what install registers, said and removable one by one", () => {
  test("install names every MCP server with its purpose, and how to leave InsForge out or remove it alone", async () => {
    const { home, binary } = newHome();
    const r = await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: binary } });
    expect(r.code).toBe(0);
    const servers = r.stdout.slice(r.stdout.indexOf("MCP servers registered:"));
    expect(servers).toMatch(/^ {2}triforge +~\/\.claude\.json: memory and code search/m);
    expect(servers).toMatch(
      /^ {2}insforge +~\/\.claude\.json: InsForge's hosted backend \(https:\/\/mcp\.insforge\.dev\/mcp\)/m,
    );
    expect(servers).toContain("It needs an InsForge account");
    expect(servers).toContain("'triforge uninstall --only insforge' removes insforge alone");
    expect(servers).toContain("'triforge install --without insforge' leaves it out");
    // Each file written says what it holds for triforge.
    expect(r.stdout).toContain("~/.claude/commands/rag.md — the /rag command");
  });

  test("every agent's server is listed with the file that registers it", async () => {
    const { home, binary } = newHome();
    const r = await runBinary(
      ["install", "--agents", "claude,codex,cursor,opencode", "--without", "insforge"],
      {
        home,
        env: { ...ISOLATED, TRIFORGE_BINARY: binary },
      },
    );
    expect(r.code).toBe(0);
    const listed = r.stdout
      .slice(r.stdout.indexOf("MCP servers registered:"))
      .split("\n")
      .filter((line) => line.startsWith("  "))
      .map((line) => line.trim().split(/\s+/).slice(0, 2).join(" "));
    expect(listed).toEqual([
      "triforge ~/.claude.json:",
      "triforge ~/.codex/config.toml:",
      "triforge ~/.cursor/mcp.json:",
      "triforge ~/.config/opencode/opencode.json:",
    ]);
  });

  test("--without insforge (and the older --no-insforge) registers triforge alone; a bad name is a usage error", async () => {
    for (const flags of [["--without", "insforge"], ["--no-insforge"]]) {
      const { home, binary } = newHome();
      const r = await runBinary(["install", ...flags], {
        home,
        env: { ...ISOLATED, TRIFORGE_BINARY: binary },
      });
      expect(r.code).toBe(0);
      expect(Object.keys(json(join(home, ".claude.json")).mcpServers)).toEqual(["triforge"]);
      expect(r.stdout).not.toContain("insforge");
    }
    const { home } = newHome();
    const bad = await runBinary(["install", "--without", "triforge"], { home, env: ISOLATED });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--without takes insforge");
  });

  test("uninstall --only insforge removes that entry alone; the full uninstall still restores every byte", async () => {
    const { home, binary } = newHome();
    const original = `{\n  "theme": "dark",\n  "mcpServers": {\n    "mine": { "command": "mine" }\n  }\n}\n`;
    writeFileSync(join(home, ".claude.json"), original);
    const env = { ...ISOLATED, TRIFORGE_BINARY: binary };
    expect((await runBinary(["install"], { home, env })).code).toBe(0);

    const only = await runBinary(["uninstall", "--only", "insforge"], { home, env });
    expect(only.stderr).toBe("");
    expect(only.code).toBe(0);
    expect(only.stdout).toContain("Removed insforge:");
    expect(only.stdout).toContain("~/.claude.json");
    const servers = json(join(home, ".claude.json")).mcpServers;
    expect(Object.keys(servers).sort()).toEqual(["mine", "triforge"]);
    const again = await runBinary(["uninstall", "--only", "insforge"], { home, env });
    expect(again.stdout).toContain("did not add insforge");

    expect((await runBinary(["uninstall"], { home, env: ISOLATED })).code).toBe(0);
    expect(readFileSync(join(home, ".claude.json"), "utf8")).toBe(original);
  });

  test("uninstall --only with an unknown server is a usage error and changes nothing", async () => {
    const { home, binary } = newHome();
    expect((await runBinary(["install"], { home, env: { ...ISOLATED, TRIFORGE_BINARY: binary } })).code).toBe(
      0,
    );
    const before = snapshot(home);
    const r = await runBinary(["uninstall", "--only", "triforge"], { home, env: ISOLATED });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--only takes insforge or semble");
    expect(snapshot(home)).toEqual(before);
  });
});
