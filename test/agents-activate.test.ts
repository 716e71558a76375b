import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { snapshot } from "./support/agents-tree.ts";
import { compiledBinary, runBinary, tempDir } from "./support/helpers.ts";

const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A home and a project whose path holds spaces and a quote, the hardest to put in a hook line. */
const scratch = tempDir("triforge-activate-");

function setup() {
  const root = mkdtempSync(join(scratch, "case-"));
  const home = join(root, "home");
  const project = join(root, "it's my project");
  mkdirSync(home);
  mkdirSync(project);
  return { home, project };
}

const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

describe("triforge activate / deactivate", () => {
  test("merges hooks into the user's, writes the project files, and deactivate restores every byte", async () => {
    const { home, project } = setup();
    const binary = await compiledBinary();
    mkdirSync(join(project, ".claude"));
    const settings = `{\n\t"permissions": { "allow": ["Bash(npm test)"] },\n\t"hooks": {\n\t\t"Stop": [\n\t\t\t{ "hooks": [{ "type": "command", "command": "say done" }] }\n\t\t],\n\t\t"PreToolUse": [\n\t\t\t{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "guard" }] }\n\t\t]\n\t}\n}\n`;
    writeFileSync(join(project, ".claude", "settings.local.json"), settings);
    writeFileSync(join(project, "CLAUDE.md"), "# Project rules\n\nRun the tests.\n");
    writeFileSync(join(project, "main.ts"), "export const x = 1;\n");
    const before = snapshot(project);

    const result = await runBinary(["activate"], { home, cwd: project, env: { TRIFORGE_BINARY: undefined } });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toStartWith("Memory activated in ");
    for (const file of [
      ".triforge/config.json",
      ".triforge/.gitignore",
      "AGENTS.md",
      "CLAUDE.md",
      ".claude/settings.local.json",
    ]) {
      expect(result.stdout).toContain(join(project, file).replace(home, "~"));
    }

    expect(json(join(project, ".triforge", "config.json"))).toEqual({
      storage: "local",
      llm: "auto",
      exclude: [],
    });
    expect(readFileSync(join(project, ".triforge", ".gitignore"), "utf8")).toContain("!config.json");
    const agents = readFileSync(join(project, "AGENTS.md"), "utf8");
    expect(agents).toContain("<!-- triforge:begin");
    expect(agents).toContain("rag_search");
    expect(readFileSync(join(project, "CLAUDE.md"), "utf8")).toBe(
      "# Project rules\n\nRun the tests.\n\n@AGENTS.md\n",
    );

    const hooks = json(join(project, ".claude", "settings.local.json")).hooks;
    // The user's hooks come first and are untouched.
    expect(hooks.Stop[0]).toEqual({ hooks: [{ type: "command", command: "say done" }] });
    expect(hooks.PreToolUse).toEqual([{ matcher: "Bash", hooks: [{ type: "command", command: "guard" }] }]);
    expect(hooks.SessionStart).toEqual([
      { hooks: [{ type: "command", command: `${binary} prelude --project=${q(project)}`, timeout: 15 }] },
    ]);
    expect(hooks.Stop[1]).toEqual({
      hooks: [{ type: "command", command: `${binary} capture --project=${q(project)}`, timeout: 30 }],
    });
    expect(hooks.SessionEnd).toEqual([
      {
        hooks: [
          { type: "command", command: `${binary} index --project=${q(project)} --background`, timeout: 5 },
        ],
      },
    ]);
    // The file keeps its tab indentation.
    expect(readFileSync(join(project, ".claude", "settings.local.json"), "utf8")).toContain(
      '\t\t"SessionStart": [\n\t\t\t{\n\t\t\t\t"hooks": [',
    );

    const activated = snapshot(project);
    const again = await runBinary(["activate", "--project", project], { home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing changed");
    expect(snapshot(project)).toEqual(activated);

    const off = await runBinary(["deactivate"], { home, cwd: join(project) });
    expect(off.code).toBe(0);
    expect(off.stdout).toContain("Memory deactivated");
    expect(snapshot(project)).toEqual(before);
    expect(existsSync(join(project, ".triforge"))).toBe(false);
  });

  test("the hook command lines run under sh: the SessionStart hook reaches the binary with the right project", async () => {
    const { home, project } = setup();
    expect((await runBinary(["activate", "--project", project], { home })).code).toBe(0);
    const hooks = json(join(project, ".claude", "settings.local.json")).hooks;
    const command: string = hooks.SessionStart[0].hooks[0].command;
    // The prelude prints nothing for a project without a summary, and exits 0; a bad quote would fail.
    const run = Bun.spawnSync(["sh", "-c", command], {
      env: { ...process.env, HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") },
      stdin: new TextEncoder().encode("{}"),
    });
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
    // And with a summary in the project's data folder, that very command prints it as hook context.
    const { projectKey } = await import("../src/home/paths.ts");
    const data = join(home, ".claude", "triforge", projectKey(project));
    mkdirSync(data, { recursive: true });
    writeFileSync(
      join(data, "summary.md"),
      "## 2026-01-02 · session abc\nDecided: deploy with blue-green.\n",
    );
    const withSummary = Bun.spawnSync(["sh", "-c", command], {
      env: { ...process.env, HOME: home, TRIFORGE_HOME: join(home, ".claude", "triforge") },
      stdin: new TextEncoder().encode("{}"),
    });
    expect(withSummary.stdout.toString()).toContain("blue-green");
  });

  test("an existing AGENTS.md is appended to; a CLAUDE.md that already imports it is left alone", async () => {
    const { home, project } = setup();
    writeFileSync(join(project, "AGENTS.md"), "# Agents\n\nBe brief.\n");
    writeFileSync(join(project, "CLAUDE.md"), "See @AGENTS.md for the rules.\n");
    const result = await runBinary(["activate", "--project", project, "--storage", "postgres"], { home });
    expect(result.code).toBe(0);
    expect(readFileSync(join(project, "AGENTS.md"), "utf8")).toStartWith(
      "# Agents\n\nBe brief.\n\n<!-- triforge:begin",
    );
    expect(readFileSync(join(project, "CLAUDE.md"), "utf8")).toBe("See @AGENTS.md for the rules.\n");
    expect(json(join(project, ".triforge", "config.json")).storage).toBe("postgres");
    expect((await runBinary(["deactivate", "--project", project], { home })).code).toBe(0);
    expect(readFileSync(join(project, "AGENTS.md"), "utf8")).toBe("# Agents\n\nBe brief.\n");
  });

  test("hooks the user adds after activation survive deactivate; ours go; an edited config still goes", async () => {
    const { home, project } = setup();
    expect((await runBinary(["activate", "--project", project], { home })).code).toBe(0);
    const file = join(project, ".claude", "settings.local.json");
    const settings = json(file);
    settings.hooks.SessionStart.push({ hooks: [{ type: "command", command: "echo mine" }] });
    settings.permissions = { allow: ["Read"] };
    writeFileSync(file, JSON.stringify(settings, null, 2));
    const config = json(join(project, ".triforge", "config.json"));
    writeFileSync(
      join(project, ".triforge", "config.json"),
      JSON.stringify({ ...config, exclude: ["ACME-\\d+"] }),
    );

    const off = await runBinary(["deactivate", "--project", project], { home });
    expect(off.code).toBe(0);
    expect(json(file)).toEqual({
      hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo mine" }] }] },
      permissions: { allow: ["Read"] },
    });
    // The project must be inactive afterwards, so the config goes even though it was edited.
    expect(existsSync(join(project, ".triforge", "config.json"))).toBe(false);
    expect(existsSync(join(project, "AGENTS.md"))).toBe(false);
  });

  test("a project activated by someone else (committed .triforge/config.json) is not deleted by deactivate", async () => {
    const { home, project } = setup();
    mkdirSync(join(project, ".triforge"));
    writeFileSync(
      join(project, ".triforge", "config.json"),
      `{"storage": "local", "llm": "none", "exclude": []}\n`,
    );
    expect((await runBinary(["activate", "--project", project], { home })).code).toBe(0);
    expect(json(join(project, ".triforge", "config.json")).llm).toBe("none");
    expect((await runBinary(["deactivate", "--project", project], { home })).code).toBe(0);
    expect(json(join(project, ".triforge", "config.json")).llm).toBe("none");
    const none = await runBinary(["deactivate", "--project", project], { home });
    expect(none.stdout).toContain("was not written by 'triforge activate' here");
  });

  test("a storage chosen on a config that was there before survives a later activate without --storage", async () => {
    const { home, project } = setup();
    mkdirSync(join(project, ".triforge"));
    writeFileSync(join(project, ".triforge", "config.json"), `{"llm": "none"}\n`);
    const env = { TRIFORGE_PG_URL: "" };
    expect(
      (await runBinary(["activate", "--project", project, "--storage", "postgres"], { home, env })).code,
    ).toBe(0);
    expect(json(join(project, ".triforge", "config.json")).storage).toBe("postgres");
    expect((await runBinary(["activate", "--project", project], { home, env })).code).toBe(0);
    expect(json(join(project, ".triforge", "config.json"))).toEqual({ llm: "none", storage: "postgres" });
    // deactivate still gives the file back as it was.
    expect((await runBinary(["deactivate", "--project", project], { home })).code).toBe(0);
    expect(json(join(project, ".triforge", "config.json"))).toEqual({ llm: "none" });
  });

  test("a bad --storage is a usage error", async () => {
    const { home, project } = setup();
    const result = await runBinary(["activate", "--project", project, "--storage", "mongo"], { home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--storage must be one of local, postgres, insforge");
    expect(existsSync(join(project, ".triforge"))).toBe(false);
  });

  test("a project path that does not exist is refused and not created", async () => {
    const { home, project } = setup();
    const missing = join(project, "no such folder");
    const result = await runBinary(["activate", "--project", missing], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`project folder not found: ${missing}`);
    expect(result.stdout).toBe("");
    expect(existsSync(missing)).toBe(false);
  });

  test("a project path that is a file is refused with a clear error", async () => {
    const { home, project } = setup();
    const file = join(project, "notes.txt");
    writeFileSync(file, "not a project\n");
    const result = await runBinary(["activate", "--project", file], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`not a folder: ${file}`);
    expect(result.stderr).not.toContain("ENOTDIR");
    expect(readFileSync(file, "utf8")).toBe("not a project\n");
  });

  test("--storage postgres is kept in the config; without a URL the warning says memory stays on this machine", async () => {
    const { home, project } = setup();
    const result = await runBinary(["activate", "--project", project, "--storage", "postgres"], {
      home,
      env: { TRIFORGE_PG_URL: "" },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toStartWith("Memory activated in ");
    expect(result.stderr).toContain("storage postgres needs a connection URL: set TRIFORGE_PG_URL");
    expect(result.stderr).toContain("memory is indexed on this machine only");
    expect(json(join(project, ".triforge", "config.json")).storage).toBe("postgres");
    // Run again without --storage: the config still names postgres, so the warning still comes.
    const again = await runBinary(["activate", "--project", project], { home, env: { TRIFORGE_PG_URL: "" } });
    expect(again.stderr).toContain("storage postgres needs a connection URL");
    // A server that is not there: said in one line, without the password.
    const down = await runBinary(["activate", "--project", project], {
      home,
      env: { TRIFORGE_PG_URL: "postgres://u:hunter2@127.0.0.1:9/db" },
    });
    expect(down.code).toBe(0);
    expect(down.stderr).toContain("postgres at postgres://u@127.0.0.1:9/db cannot be reached");
    expect(down.stderr).toContain("pushed when the database answers");
    expect(down.stderr).not.toContain("hunter2");
    const local = setup();
    const plain = await runBinary(["activate", "--project", local.project, "--storage", "local"], {
      home: local.home,
    });
    expect(plain.stderr).toBe("");
  });

  test("malformed settings.local.json: clear error, nothing written", async () => {
    const { home, project } = setup();
    mkdirSync(join(project, ".claude"));
    writeFileSync(join(project, ".claude", "settings.local.json"), "{ hooks: ");
    const result = await runBinary(["activate", "--project", project], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("settings.local.json: invalid JSON");
    expect(existsSync(join(project, ".triforge"))).toBe(false);
    expect(existsSync(join(project, "AGENTS.md"))).toBe(false);
  });
});
