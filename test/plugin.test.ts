/**
 * The Claude Code plugin (`plugin/`, listed by `.claude-plugin/marketplace.json`) stays in step with the
 * rest: its version is the package's, its hooks are activate's hooks (same events, commands and
 * timeouts, the project taken from the hook's cwd), and its launcher finds the binary in the documented
 * order and fails open for hooks. The real CLI runs it in test/e2e/plugin.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { HOOK_TIMEOUTS, projectHooks } from "../src/agents/activate.ts";
import { ROOT, runBinary, spawnCollect, tempDir } from "./support/helpers.ts";

const PLUGIN = join(ROOT, "plugin");
const LAUNCHER = join(PLUGIN, "bin", "triforge-launch");
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
/** Claude Code's placeholder for the plugin's folder, written out in the plugin's files. */
const ROOT_VAR = "$" + "{CLAUDE_PLUGIN_ROOT}";

describe("the plugin's files", () => {
  test("the marketplace lists the plugin folder, whose manifest carries the package's name and version", () => {
    const marketplace = readJson(join(ROOT, ".claude-plugin", "marketplace.json"));
    const entry = marketplace.plugins.find((p: { name: string }) => p.name === "triforge");
    expect(entry.source).toBe("./plugin");
    const manifest = readJson(join(ROOT, entry.source, ".claude-plugin", "plugin.json"));
    expect(manifest).toMatchObject({ name: pkg.name, version: pkg.version, license: pkg.license });
  });

  test("its hooks are activate's hooks: same events, subcommands and timeouts, run by the launcher", () => {
    const hooks = readJson(join(PLUGIN, "hooks", "hooks.json")).hooks;
    const launcher = `"${ROOT_VAR}/bin/triforge-launch"`;
    const expected = Object.fromEntries(
      Object.entries(projectHooks(["triforge"], "/p", "linux")).map(([event, entry]) => {
        const hook = (entry as { hooks: { command: string; timeout: number }[] }).hooks[0];
        // The plugin has no project of its own: each hook finds it from the session's cwd.
        const args = hook.command.replace(/^triforge /, "").replace(" --project=/p", "");
        return [
          event,
          [{ hooks: [{ type: "command", command: `${launcher} ${args}`, timeout: hook.timeout }] }],
        ];
      }),
    );
    expect(hooks).toEqual(expected);
    expect(Object.keys(hooks).sort()).toEqual(Object.keys(HOOK_TIMEOUTS).sort());
  });

  test("its MCP server and /rag run the launcher; /rag leaves the hooks to the plugin", () => {
    expect(readJson(join(PLUGIN, ".mcp.json")).mcpServers.triforge).toEqual({
      command: `${ROOT_VAR}/bin/triforge-launch`,
      args: ["serve"],
    });
    const rag = readFileSync(join(PLUGIN, "commands", "rag.md"), "utf8");
    // Frontmatter must start on line 1 with no blank line after it, or Claude Code ignores it.
    expect(rag).toStartWith("---\ndescription: ");
    expect(rag).toContain(`!\`"${ROOT_VAR}/bin/triforge-launch" activate --hooks plugin\``);
  });
});

describe("the launcher", () => {
  const dir = tempDir("triforge-launch-");
  /** A stand-in binary that prints who it is and its arguments. */
  const fakeBinary = (path: string, name: string) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, `#!/bin/sh\necho "${name} $*"\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const onPath = join(dir, "path");
  fakeBinary(join(onPath, "triforge"), "on-path");
  const data = join(dir, "data");
  const run = (args: string[], env: Record<string, string>) =>
    spawnCollect(["sh", LAUNCHER, ...args], { env: { PATH: `${onPath}:/usr/bin:/bin`, ...env } });

  test("takes TRIFORGE_BINARY first, then the plugin's fetched copy, then triforge on PATH", async () => {
    const explicit = fakeBinary(join(dir, "explicit", "triforge"), "explicit");
    expect(
      (await run(["status", "--json"], { TRIFORGE_BINARY: explicit, CLAUDE_PLUGIN_DATA: data })).stdout,
    ).toBe("explicit status --json\n");
    expect((await run(["serve"], { CLAUDE_PLUGIN_DATA: data })).stdout).toBe("on-path serve\n");
    fakeBinary(join(data, "triforge"), "fetched");
    expect((await run(["serve"], { CLAUDE_PLUGIN_DATA: data })).stdout).toBe("fetched serve\n");
  });

  test("with no binary a hook exits 0 and says how to install; another command fails", async () => {
    const env = { PATH: "/usr/bin:/bin", CLAUDE_PLUGIN_DATA: join(dir, "empty") };
    const hook = await spawnCollect(["sh", LAUNCHER, "capture"], { env });
    expect(hook.code).toBe(0);
    expect(hook.stdout).toBe("");
    expect(hook.stderr).toContain("no triforge binary found");
    expect(hook.stderr).toContain("install.sh");
    const serve = await spawnCollect(["sh", LAUNCHER, "serve"], { env });
    expect(serve.code).toBe(1);
  });

  test("fetch installs with the install script into the plugin's data folder", async () => {
    // A stand-in for install.sh: it reports the folder it was asked to install into.
    const script = join(dir, "install.sh");
    writeFileSync(script, 'echo "installing into $TRIFORGE_INSTALL_DIR"\n');
    const fetched = await run(["fetch"], {
      CLAUDE_PLUGIN_DATA: join(dir, "fresh"),
      TRIFORGE_INSTALL_SCRIPT: script,
    });
    expect(fetched.code).toBe(0);
    expect(fetched.stdout).toBe(`installing into ${join(dir, "fresh")}\n`);
  });
});

describe("activate --hooks plugin (what the plugin's /rag runs)", () => {
  test("turns memory on without a hooks file, and git status stays clean", async () => {
    const dir = tempDir("triforge-plugin-activate-");
    const project = join(dir, "repo");
    mkdirSync(project);
    await spawnCollect(["git", "init", "-q", project]);
    const home = join(dir, "home");
    const activated = await runBinary(["activate", "--hooks", "plugin", "--no-import"], {
      home,
      cwd: project,
    });
    expect(activated.code).toBe(0);
    expect(existsSync(join(project, ".triforge", "config.json"))).toBe(true);
    expect(existsSync(join(project, ".claude", "settings.local.json"))).toBe(false);
    expect((await spawnCollect(["git", "-C", project, "status", "--porcelain"])).stdout).toBe("");
    const bad = await runBinary(["activate", "--hooks", "elsewhere"], { home, cwd: project });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--hooks must be one of settings, plugin");
  }, 60_000);
});
