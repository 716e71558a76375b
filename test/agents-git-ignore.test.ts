import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exactPattern, gitRepository } from "../src/agents/git-ignore.ts";
import { runBinary, tempDir } from "./support/helpers.ts";

// The first test may build the binary it runs.
setDefaultTimeout(60_000);

const scratch = tempDir("triforge-git-ignore-");
const hasGit = Boolean(Bun.which("git"));
if (!hasGit)
  console.warn("agents-git-ignore.test: git is not installed: the real-repository tests are skipped");

/** git with no user or system config (no global excludesFile hiding what we test), as a fixed author. */
function git(cwd: string, ...args: string[]): string {
  const result = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_SYSTEM: "/dev/null" },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** A repository with one commit, a home beside it, and the bytes of its info/exclude as git wrote them. */
function cleanRepository(name = "repo") {
  const root = mkdtempSync(join(scratch, "case-"));
  const home = join(root, "home");
  const repo = join(root, name);
  mkdirSync(home);
  mkdirSync(repo);
  git(repo, "init", "-q");
  writeFileSync(join(repo, "main.ts"), "export const x = 1;\n");
  git(repo, "add", "main.ts");
  git(repo, "commit", "-q", "-m", "first");
  const exclude = join(repo, ".git", "info", "exclude");
  return { root, home, repo, exclude, excludeBefore: readFileSync(exclude, "utf8") };
}

const status = (repo: string) => git(repo, "status", "--porcelain", "--untracked-files=all");

describe("exactPattern", () => {
  test("anchors the path and escapes what git reads as a wildcard, comment, negation or trailing blank", () => {
    expect(exactPattern(".claude/settings.local.json")).toBe("/.claude/settings.local.json");
    expect(exactPattern("a [b]*/#c/!d?/e\\ ")).toBe("/a \\[b\\]\\*/\\#c/\\!d\\?/e\\\\\\ ");
  });
});

describe("gitRepository", () => {
  test("nothing outside a repository", () => {
    const dir = mkdtempSync(join(scratch, "plain-"));
    // The scratch folder lies under the system's temporary folder, which is in no repository.
    expect(gitRepository(dir)).toBeUndefined();
  });

  test("a .git file pointing at a linked worktree's folder resolves to the shared one", () => {
    const root = mkdtempSync(join(scratch, "pointer-"));
    mkdirSync(join(root, "main", ".git", "worktrees", "wt"), { recursive: true });
    writeFileSync(join(root, "main", ".git", "worktrees", "wt", "commondir"), "../..\n");
    mkdirSync(join(root, "wt", "sub"), { recursive: true });
    writeFileSync(join(root, "wt", ".git"), `gitdir: ${join(root, "main", ".git", "worktrees", "wt")}\n`);
    expect(gitRepository(join(root, "wt", "sub"))).toEqual({
      top: join(root, "wt"),
      gitDir: join(root, "main", ".git"),
    });
  });
});

describe.skipIf(!hasGit)("activate keeps personal files out of git", () => {
  test("in a clean repository git status stays clean, and deactivate gives info/exclude back byte for byte", async () => {
    const { home, repo, exclude, excludeBefore } = cleanRepository();
    const activated = await runBinary(["activate"], { home, cwd: repo });
    expect(activated.stderr).toBe("");
    expect(activated.code).toBe(0);
    expect(status(repo)).toBe("");
    expect(activated.stdout).toContain(join(".git", "info", "exclude"));
    const added = readFileSync(exclude, "utf8").slice(excludeBefore.length);
    expect(added).toStartWith("\n# triforge:begin");
    expect(added).toEndWith("# triforge:end\n");
    const patterns = added.split("\n").filter((line) => line && !line.startsWith("#"));
    expect(patterns.sort()).toEqual(["/.claude/settings.local.json", "/.triforge/", "/AGENTS.md"].sort());
    // The files are there for the user, only hidden from git.
    expect(existsSync(join(repo, ".claude", "settings.local.json"))).toBe(true);

    const again = await runBinary(["activate"], { home, cwd: repo });
    expect(again.stdout).toContain("nothing changed");

    const deactivated = await runBinary(["deactivate"], { home, cwd: repo });
    expect(deactivated.code).toBe(0);
    expect(readFileSync(exclude, "utf8")).toBe(excludeBefore);
    expect(status(repo)).toBe("");
  });

  test("a project inside a repository: the patterns name it from the repository's top", async () => {
    const { home, repo, exclude } = cleanRepository();
    const project = join(repo, "packages", "it's [web]");
    mkdirSync(project, { recursive: true });
    const r = await runBinary(["activate", "--project", project], { home, cwd: repo });
    expect(r.code).toBe(0);
    expect(status(repo)).toBe("");
    expect(readFileSync(exclude, "utf8")).toContain("/packages/it's \\[web\\]/.claude/settings.local.json\n");
  });

  test("a linked worktree: the lines go to the info/exclude every worktree shares", async () => {
    const { root, home, repo, exclude, excludeBefore } = cleanRepository();
    const worktree = join(root, "wt");
    git(repo, "worktree", "add", "-q", worktree);
    const r = await runBinary(["activate"], { home, cwd: worktree });
    expect(r.code).toBe(0);
    expect(status(worktree)).toBe("");
    expect(readFileSync(exclude, "utf8")).toContain("/AGENTS.md\n");
    await runBinary(["deactivate"], { home, cwd: worktree });
    expect(readFileSync(exclude, "utf8")).toBe(excludeBefore);
  });

  test("--ignore-file gitignore: the project's .gitignore keeps the hooks out, the shared setup shows to be committed", async () => {
    const { home, repo } = cleanRepository();
    writeFileSync(join(repo, ".gitignore"), "node_modules/\n");
    git(repo, "add", ".gitignore");
    git(repo, "commit", "-q", "-m", "ignore");
    const r = await runBinary(["activate", "--ignore-file", "gitignore"], { home, cwd: repo });
    expect(r.code).toBe(0);
    expect(readFileSync(join(repo, ".gitignore"), "utf8")).toMatch(
      /^node_modules\/\n\n# triforge:begin[^\n]*\n\/\.claude\/settings\.local\.json\n# triforge:end\n$/,
    );
    expect(status(repo).split("\n").filter(Boolean).sort()).toEqual(
      [" M .gitignore", "?? .triforge/.gitignore", "?? .triforge/config.json", "?? AGENTS.md"].sort(),
    );
    await runBinary(["deactivate"], { home, cwd: repo });
    expect(readFileSync(join(repo, ".gitignore"), "utf8")).toBe("node_modules/\n");
    expect(status(repo)).toBe("");
  });

  test("--ignore-file none writes nothing for git, and a bad value is a usage error", async () => {
    const { home, repo, exclude, excludeBefore } = cleanRepository();
    const r = await runBinary(["activate", "--ignore-file", "none"], { home, cwd: repo });
    expect(r.code).toBe(0);
    expect(readFileSync(exclude, "utf8")).toBe(excludeBefore);
    expect(status(repo)).toContain("?? .claude/settings.local.json");
    const bad = await runBinary(["activate", "--ignore-file", "nowhere"], { home, cwd: repo });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--ignore-file must be one of exclude, gitignore, none");
  });

  test("a tracked AGENTS.md is only edited, so it stays visible: the team sees the section it would commit", async () => {
    const { home, repo, exclude } = cleanRepository();
    writeFileSync(join(repo, "AGENTS.md"), "# Agents\n");
    git(repo, "add", "AGENTS.md");
    git(repo, "commit", "-q", "-m", "agents");
    const r = await runBinary(["activate"], { home, cwd: repo });
    expect(r.code).toBe(0);
    expect(status(repo)).toBe(" M AGENTS.md\n");
    expect(readFileSync(exclude, "utf8")).not.toContain("/AGENTS.md");
  });
});
