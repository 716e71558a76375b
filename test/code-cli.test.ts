import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { indexFile } from "../src/code/store.ts";
import {
  codeRepository,
  compiledBinary,
  connectServe,
  runBinary,
  spawnCollect,
  tempDir,
} from "./support/helpers.ts";

const home = tempDir("triforge-code-cli-");

const repo = (files: Record<string, string>) => codeRepository(files, "triforge-code-repo-");

const sample = () =>
  repo({
    "src/auth/session.py":
      'import hmac\n\n\ndef verify_session_token(token: str, secret: bytes) -> bool:\n    """Checks that a session token was signed with our secret."""\n    body, _, signature = token.rpartition(".")\n    expected = hmac.new(secret, body.encode(), "sha256").hexdigest()\n    return hmac.compare_digest(expected, signature)\n',
    "src/auth/login.py":
      "from .session import verify_session_token\n\n\ndef login(request):\n    return verify_session_token(request.cookies['s'], b'k')\n",
    "src/ui/theme.py": "PRIMARY = 'teal'\nBACKGROUND = '#ffffff'\n",
    "docs/guide.md": "# Guide\n\nSessions are signed tokens.\n",
  });

describe("triforge search (compiled binary)", () => {
  test("prints file:lines and numbered snippet lines, best first", async () => {
    const root = sample();
    const { code, stdout, stderr } = await runBinary(["search", "verify_session_token", root, "-k", "2"], {
      home,
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.split("\n")[0]).toMatch(/^src\/auth\/session\.py:1-8 {2}\(score [\d.]+\)$/);
    expect(stdout).toContain("4  def verify_session_token(token: str, secret: bytes) -> bool:");
  });

  test("--json gives hits with file_path, start_line, end_line, score and content; the path defaults to the cwd", async () => {
    const root = sample();
    const { code, stdout } = await runBinary(
      ["search", "where are session tokens checked", "--json", "--max-snippet-lines", "3"],
      { home, cwd: root },
    );
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.hits[0]).toMatchObject({ file_path: "src/auth/session.py" });
    for (const hit of result.hits) {
      expect(hit.end_line - hit.start_line).toBeLessThanOrEqual(2);
      expect(typeof hit.score).toBe("number");
      expect(hit.content.split("\n")).toHaveLength(hit.end_line - hit.start_line + 1);
    }
  });

  test("--content docs searches prose only", async () => {
    const { stdout } = await runBinary(["search", "signed tokens", sample(), "--content", "docs", "--json"], {
      home,
    });
    expect(JSON.parse(stdout).hits.map((h: { file_path: string }) => h.file_path)).toEqual(["docs/guide.md"]);
  });

  test("--stdin answers JSONL queries one JSON line each, reports bad lines and goes on", async () => {
    const root = sample();
    const input = [
      JSON.stringify({ query: "verify_session_token", top_k: 1 }),
      "not json",
      JSON.stringify({ query: "theme colors", top_k: 2 }),
      JSON.stringify({ top_k: 2 }),
      JSON.stringify({ query: "theme colors", top_k: "x" }),
      JSON.stringify({ query: "theme colors", top_k: 1.5 }),
      JSON.stringify({ query: "theme colors", max_snippet_lines: -1 }),
    ].join("\n");
    const { code, stdout } = await runBinary(["search", "--stdin", root], { home, stdin: input });
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(7);
    expect(lines[0].hits).toHaveLength(1);
    expect(lines[0].hits[0].file_path).toBe("src/auth/session.py");
    expect(lines[1]).toEqual({ line: 2, error: "not valid JSON" });
    expect(lines[2].hits[0].file_path).toBe("src/ui/theme.py");
    expect(lines[3].error).toContain("expected");
    // A bad top_k or max_snippet_lines is that line's error, as -k and --max-snippet-lines are usage errors.
    for (const [k, line] of [5, 6, 7].entries()) {
      expect(lines[4 + k]).toMatchObject({
        line,
        error: expect.stringContaining("top_k must be a whole number"),
      });
    }
    expect(code).toBe(1);
  });

  test("a path that does not exist, or is a file, is a clear error with exit 1", async () => {
    const root = sample();
    const missing = await runBinary(["search", "x", join(root, "missing")], { home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`triforge search: ${join(root, "missing")} does not exist\n`);
    const file = await runBinary(["search", "x", join(root, "docs/guide.md")], { home });
    expect(file.code).toBe(1);
    expect(file.stderr).toContain("is not a directory");
    // Every command that takes the path says so the same way.
    for (const args of [
      ["code-index", join(root, "missing")],
      ["find-related", "src/auth/session.py", "1", join(root, "missing")],
      ["search", "--stdin", join(root, "missing")],
    ]) {
      const result = await runBinary(args, { home, stdin: "" });
      expect(result).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr).toBe(`triforge ${args[0]}: ${join(root, "missing")} does not exist\n`);
    }
  });

  test("a 10 KB query, a punctuation-only query and an invalid UTF-8 file are answered, each with its note", async () => {
    const root = sample();
    writeFileSync(
      join(root, "src/latin1.py"),
      new Uint8Array([
        ...new TextEncoder().encode("caf"),
        0xe9,
        ...new TextEncoder().encode(" = 'uniqueLatinMarker'\n"),
      ]),
    );
    writeFileSync(join(root, "src/ops.ts"), "export const pick = (o?: { a?: number }) => o?.a ?? 0;\n");
    const index = await runBinary(["code-index", root, "--json"], { home });
    expect(index.code).toBe(0);
    expect(JSON.parse(index.stdout)).toMatchObject({ files: 6, invalidUtf8: 1 });
    const latin = await runBinary(["search", "uniqueLatinMarker", root, "--json"], { home });
    expect(JSON.parse(latin.stdout).hits[0]).toMatchObject({ file_path: "src/latin1.py" });
    expect(JSON.parse(latin.stdout).hits[0].content).toContain("caf\uFFFD = 'uniqueLatinMarker'");

    const long = await runBinary(["search", "verify session token ".repeat(500), root, "--json"], { home });
    expect(long.code).toBe(0);
    const longResult = JSON.parse(long.stdout);
    expect(longResult.hits[0].file_path).toBe("src/auth/session.py");
    expect(longResult.note).toContain("the query was cut to its first 4000 characters");
    const longText = await runBinary(["search", "verify session token ".repeat(500), root], { home });
    expect(longText.stderr).toContain("triforge search: the query was cut");

    const punctuation = await runBinary(["search", "?.", root, "--content", "all", "--json"], { home });
    expect(punctuation.code).toBe(0);
    expect(JSON.parse(punctuation.stdout).hits.map((h: { file_path: string }) => h.file_path)).toEqual([
      "src/ops.ts",
    ]);
    const nothing = await runBinary(["search", "#@!", root], { home });
    expect(nothing).toMatchObject({ code: 0, stdout: "" });
    expect(nothing.stderr).toBe(
      "triforge search: nothing in 6 indexed files matches: the text does not occur in them\n",
    );

    // Words no file holds (gibberish, a language the model does not know) get no confident-looking
    // nearest neighbours; an exact occurrence still counts.
    for (const query of ["zzzqqq xyzzy", "¿cómo se maneja?"]) {
      const unrelated = await runBinary(["search", query, root, "--json"], { home });
      expect(unrelated.code).toBe(0);
      const result = JSON.parse(unrelated.stdout);
      expect(result.hits).toEqual([]);
      expect(result.note).toBe(
        "nothing in 6 indexed files matches: no code file shares a word with the query (content: all searches every kind)",
      );
    }
  });

  test("bad options are usage errors (exit 2)", async () => {
    const root = sample();
    expect((await runBinary(["search", "x", root, "-k", "zero"], { home })).code).toBe(2);
    const content = await runBinary(["search", "x", root, "--content", "pictures"], { home });
    expect(content.code).toBe(2);
    expect(content.stderr).toContain("content must be one of code, docs, config, all, not 'pictures'");
    expect((await runBinary(["search"], { home })).code).toBe(2);
    const empty = await runBinary(["search", "  ", root], { home });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("the query is empty");
  });
});

describe("triforge code-index and find-related (compiled binary)", () => {
  test("code-index reports files, chunks and what it skipped; a second run re-indexes nothing", async () => {
    const root = sample();
    writeFileSync(join(root, "data.bin.py"), new Uint8Array([0, 1, 2, 3]));
    const first = await runBinary(["code-index", root, "--json"], { home });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ files: 4, changed: 4, skipped: { binary: 1 } });
    const second = await runBinary(["code-index", root], { home });
    expect(second.stdout).toMatch(
      /^4 files, \d+ chunks \(0 re-indexed, 0 removed in \d+ ms\); skipped: 1 binary\n$/,
    );
  });

  // Root reads every file, so the unreadable file is only unreadable to an unprivileged user.
  test.skipIf(process.getuid?.() !== 0 || !Bun.which("setpriv"))(
    "an unreadable file is skipped and counted, the rest is indexed",
    async () => {
      const root = sample();
      writeFileSync(join(root, "src/private.py"), "def hidden_secret_function():\n    pass\n");
      chmodSync(join(root, "src/private.py"), 0o000);
      const userHome = tempDir("triforge-nobody-");
      for (const dir of [
        root,
        join(root, "src"),
        join(root, "src/auth"),
        join(root, "src/ui"),
        join(root, "docs"),
        userHome,
      ])
        chmodSync(dir, 0o777);
      const { stdout, code } = await spawnCollect(
        [
          "setpriv",
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          await compiledBinary(),
          "code-index",
          root,
          "--json",
        ],
        { env: { PATH: process.env.PATH ?? "", HOME: userHome, TRIFORGE_HOME: join(userHome, "data") } },
      );
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ files: 4, skipped: { unreadable: 1 } });
    },
  );

  test("find-related shows chunks like the one at a line, by relative path", async () => {
    const root = sample();
    const { code, stdout, stderr } = await runBinary(
      ["find-related", "src/auth/session.py", "5", root, "--json"],
      { home },
    );
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.source.file_path).toBe("src/auth/session.py");
    expect(result.hits[0].file_path).toBe("src/auth/login.py");
    expect(stderr).toBe("");
    const bad = await runBinary(["find-related", "src/nope.py", "1", root], { home });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("is not an indexed file");
  });

  test("find-related's source snippet, cut to --max-snippet-lines, holds the line it was asked about", async () => {
    const root = repo({});
    const body = Array.from({ length: 30 }, (_, i) => `    total = total + step_${i}(values)`).join("\n");
    writeFileSync(
      join(root, "long.py"),
      `def accumulate(values):\n    total = 0\n${body}\n    return total\n`,
    );
    writeFileSync(join(root, "other.py"), "def other(values):\n    return sum(step(v) for v in values)\n");
    const { code, stdout } = await runBinary(
      ["find-related", "long.py", "25", root, "--max-snippet-lines", "4", "--json"],
      { home },
    );
    expect(code).toBe(0);
    const { source } = JSON.parse(stdout) as {
      source: { start_line: number; end_line: number; content: string };
    };
    expect(source.end_line - source.start_line).toBe(3);
    expect(source.start_line).toBeLessThanOrEqual(25);
    expect(source.end_line).toBeGreaterThanOrEqual(25);
    expect(source.content).toContain("step_22(values)"); // line 25 of the file
  });
});

/** A git repository (a `.git` folder is all the walk up looks for) with code in two subfolders. */
const gitRepo = () => {
  const root = repo({
    "src/lib/tokens.py":
      "def verify_session_token(token):\n    body, _, signature = token.rpartition('.')\n    return signature == sign(body)\n",
    "src/lib/sign.py": "def sign(body):\n    return hmac_digest(body, load_key())\n",
    "src/app/handler.py":
      "def handle(request):\n    if not verify_session_token(request.cookies['s']):\n        raise PermissionError('bad session token')\n",
  });
  return realpathSync(root);
};

/** The code indexes under a data dir: one per indexed folder. */
const codeIndexes = (home: string) => readdirSync(join(home, ".claude", "triforge", "code"));

describe("a folder inside a repository (compiled binary)", () => {
  test("search from a subfolder uses the repository's one index and returns only that subfolder's code, paths from the root", async () => {
    const userHome = tempDir("triforge-code-sub-");
    const root = gitRepo();
    const fromSub = await runBinary(["search", "verify_session_token", "--json", "--content", "all"], {
      home: userHome,
      cwd: join(root, "src/lib"),
    });
    expect(fromSub.code).toBe(0);
    const sub = JSON.parse(fromSub.stdout);
    expect(sub).toMatchObject({ repo: root, scope: "src/lib" });
    expect(sub.hits.length).toBeGreaterThan(0);
    for (const hit of sub.hits) expect(hit.file_path).toStartWith("src/lib/");
    // The same index serves the whole repository: nothing is re-indexed and there is no second index.
    const whole = JSON.parse(
      (await runBinary(["search", "verify_session_token", root, "--json"], { home: userHome })).stdout,
    );
    expect(whole.scope).toBeUndefined();
    expect(whole.hits.map((h: { file_path: string }) => h.file_path)).toContain("src/app/handler.py");
    expect(codeIndexes(userHome)).toHaveLength(1);
    const report = await runBinary(["code-index", join(root, "src/app"), "--json"], { home: userHome });
    expect(JSON.parse(report.stdout)).toMatchObject({ files: 3, changed: 0 });
    expect(codeIndexes(userHome)).toHaveLength(1);
    // The path argument from the root, and --stdin, restrict the same way.
    const byPath = JSON.parse(
      (
        await runBinary(["search", "verify_session_token", "src/app", "--json"], {
          home: userHome,
          cwd: root,
        })
      ).stdout,
    );
    expect(byPath.hits.map((h: { file_path: string }) => h.file_path)).toEqual(["src/app/handler.py"]);
    const batch = await runBinary(["search", "--stdin", "src/app"], {
      home: userHome,
      cwd: root,
      stdin: `${JSON.stringify({ query: "verify_session_token" })}\n`,
    });
    expect(JSON.parse(batch.stdout).hits.map((h: { file_path: string }) => h.file_path)).toEqual([
      "src/app/handler.py",
    ]);
    const none = await runBinary(["search", "#@!", "src/app"], { home: userHome, cwd: root });
    expect(none.stderr).toBe(
      `triforge search: Repository ${root} (searched src/app/ only); paths are relative to the repository\n` +
        "triforge search: nothing in 1 indexed files under src/app matches: the text does not occur in them\n",
    );
    // Text for people says where the paths start, since it is not the folder they asked about.
    const text = await runBinary(["search", "verify_session_token"], {
      home: userHome,
      cwd: join(root, "src/lib"),
    });
    expect(text.stderr).toContain(`(searched src/lib/ only); paths are relative to the repository`);
    expect(text.stdout).toStartWith("src/lib/tokens.py:1-3");
  });

  test("find-related from a subfolder takes the file relative to it, to the cwd or to the root", async () => {
    const userHome = tempDir("triforge-code-sub-");
    const root = gitRepo();
    for (const file of ["tokens.py", "src/lib/tokens.py", join(root, "src/lib/tokens.py")]) {
      const { code, stdout, stderr } = await runBinary(["find-related", file, "1", "--json"], {
        home: userHome,
        cwd: join(root, "src/lib"),
      });
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const result = JSON.parse(stdout);
      expect(result).toMatchObject({ repo: root, scope: "src/lib" });
      expect(result.source.file_path).toBe("src/lib/tokens.py");
      expect(result.hits.map((h: { file_path: string }) => h.file_path)).toEqual(["src/lib/sign.py"]);
    }
    // Repository-relative from elsewhere, with the subfolder named as the path.
    const named = await runBinary(["find-related", "tokens.py", "1", "src/lib", "--json"], {
      home: userHome,
      cwd: root,
    });
    expect(JSON.parse(named.stdout).source.file_path).toBe("src/lib/tokens.py");
  });

  test("a dotfiles repository in the home folder does not turn a plain folder under it into an index of the home", async () => {
    const userHome = realpathSync(tempDir("triforge-code-dotfiles-"));
    mkdirSync(join(userHome, ".git"));
    writeFileSync(join(userHome, "dotfile_setup.py"), "def verify_session_token():\n    pass\n");
    mkdirSync(join(userHome, "notes"));
    writeFileSync(join(userHome, "notes/todo.py"), "def verify_session_token(token):\n    return True\n");
    // Not a project of its own: refused, naming the override; nothing is indexed.
    const refused = await runBinary(["search", "verify_session_token"], {
      home: userHome,
      cwd: join(userHome, "notes"),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${join(userHome, "notes")} is not a project`);
    expect(refused.stderr).toContain("--allow-large");
    expect(existsSync(join(userHome, ".claude", "triforge", "code"))).toBe(false);
    const home = await runBinary(["code-index", userHome], { home: userHome });
    expect(home.code).toBe(1);
    expect(home.stderr).toContain(`${userHome} is the home folder`);
    const { code, stdout } = await runBinary(["search", "verify_session_token", "--json", "--allow-large"], {
      home: userHome,
      cwd: join(userHome, "notes"),
    });
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.repo).toBe(join(userHome, "notes"));
    expect(result.scope).toBeUndefined();
    expect(result.hits.map((h: { file_path: string }) => h.file_path)).toEqual(["todo.py"]);
  });
});

describe("the MCP tools (compiled binary's serve, SDK client)", () => {
  test("find_related answers; a repo that does not exist is a tool error the agent can read", async () => {
    const root = sample();
    const client = await connectServe({ cwd: root, home, name: "code-test" });
    try {
      const related = (await client.callTool(
        { name: "find_related", arguments: { file_path: "src/auth/session.py", line: 4 } },
        CallToolResultSchema,
      )) as {
        isError?: boolean;
        content: { text?: string }[];
        structuredContent?: { hits: { file_path: string }[] };
      };
      expect(related.isError).toBeFalsy();
      expect(related.content[0].text).toContain("Similar to src/auth/session.py:");
      expect(related.structuredContent?.hits[0].file_path).toBe("src/auth/login.py");
      const missing = (await client.callTool(
        { name: "code_search", arguments: { query: "x", repo: "no/such/dir" } },
        CallToolResultSchema,
      )) as {
        isError?: boolean;
        content: { text?: string }[];
      };
      expect(missing.isError).toBe(true);
      expect(missing.content[0].text).toContain("does not exist");
    } finally {
      await client.close();
    }
  });

  test("repo '~' and '~/x' (and a file_path '~/x/f') mean the home folder: no shell expands them on the way", async () => {
    // A home of its own holding only the project, so that '~' is a small folder to index.
    const userHome = tempDir("triforge-code-home-");
    for (const [path, content] of Object.entries({
      "proj/.git/HEAD": "ref: refs/heads/main\n",
      "proj/src/auth/session.py": "def verify_session_token(token):\n    return token.endswith('.sig')\n",
      "proj/src/auth/login.py": "def login(request):\n    return verify_session_token(request.token)\n",
    })) {
      mkdirSync(dirname(join(userHome, path)), { recursive: true });
      writeFileSync(join(userHome, path), content);
    }
    const elsewhere = tempDir("triforge-code-cwd-");
    const client = await connectServe({ cwd: elsewhere, home: userHome, name: "home-test" });
    type Result = {
      isError?: boolean;
      content: { text?: string }[];
      structuredContent?: { repo: string; hits: { file_path: string }[] };
    };
    try {
      // The home folder is indexed only when the agent says it means it.
      const refused = (await client.callTool(
        { name: "code_search", arguments: { query: "verify_session_token", repo: "~" } },
        CallToolResultSchema,
      )) as Result;
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toContain("is the home folder");
      expect(refused.content[0].text).toContain("allow_large: true");
      for (const [repo, path, allow_large] of [
        ["~/proj", "src/auth/session.py", false],
        ["~", "proj/src/auth/session.py", true],
      ] as const) {
        const found = (await client.callTool(
          { name: "code_search", arguments: { query: "verify_session_token", repo, allow_large } },
          CallToolResultSchema,
        )) as Result;
        expect(found.isError).toBeFalsy();
        expect(found.structuredContent?.hits[0].file_path).toBe(path);
      }
      const related = (await client.callTool(
        {
          name: "find_related",
          arguments: { file_path: "~/proj/src/auth/session.py", line: 1, repo: "~/proj" },
        },
        CallToolResultSchema,
      )) as Result;
      expect(related.isError).toBeFalsy();
      expect(related.structuredContent?.hits[0].file_path).toBe("src/auth/login.py");
    } finally {
      await client.close();
    }
  });

  test("a client started in a subfolder searches it through the repository's index; find_related takes its files", async () => {
    const userHome = tempDir("triforge-code-sub-");
    const root = gitRepo();
    const client = await connectServe({ cwd: join(root, "src/lib"), home: userHome, name: "sub-test" });
    type Result = {
      isError?: boolean;
      content: { text?: string }[];
      structuredContent?: { repo: string; scope?: string; hits: { file_path: string }[] };
    };
    try {
      const found = (await client.callTool(
        { name: "code_search", arguments: { query: "verify_session_token" } },
        CallToolResultSchema,
      )) as Result;
      expect(found.isError).toBeFalsy();
      expect(found.structuredContent).toMatchObject({ repo: root, scope: "src/lib" });
      for (const hit of found.structuredContent?.hits ?? []) expect(hit.file_path).toStartWith("src/lib/");
      expect(found.content[0].text).toStartWith(
        `Repository ${root} (searched src/lib/ only); paths are relative to the repository.\n\nsrc/lib/tokens.py:1-3`,
      );
      // As code_search gave it, or relative to the folder the client works in.
      for (const file_path of ["src/lib/tokens.py", "tokens.py"]) {
        const related = (await client.callTool(
          { name: "find_related", arguments: { file_path, line: 1 } },
          CallToolResultSchema,
        )) as Result;
        expect(related.isError).toBeFalsy();
        expect(related.structuredContent?.hits.map((h) => h.file_path)).toEqual(["src/lib/sign.py"]);
      }
      // The whole repository is one argument away.
      const whole = (await client.callTool(
        { name: "code_search", arguments: { query: "verify_session_token", repo: "../.." } },
        CallToolResultSchema,
      )) as Result;
      expect(whole.structuredContent?.scope).toBeUndefined();
      expect(whole.structuredContent?.hits.map((h) => h.file_path)).toContain("src/app/handler.py");
      expect(whole.content[0].text).not.toContain("searched");
    } finally {
      await client.close();
    }
    expect(codeIndexes(userHome)).toHaveLength(1);
  });

  test("serve's warm-up opens a saved code index of its folder (refreshing it) and never builds one unasked", async () => {
    const indexed = sample();
    const fresh = sample();
    const triforgeHome = join(home, ".claude", "triforge");
    expect((await runBinary(["code-index", indexed], { home })).code).toBe(0);
    const saved = (root: string) => {
      process.env.TRIFORGE_HOME = triforgeHome;
      return indexFile(realpathSync(root));
    };
    const before = statSync(saved(indexed)).mtimeMs;
    // A change after indexing: the warm-up's refresh re-indexes it and saves, with no tool call.
    writeFileSync(join(indexed, "src/ui/theme.py"), "PRIMARY = 'navy'\n");
    /** Serves in `cwd` until `untilSettled()` or `limitMs`; returns how long that took. */
    const serve = async (cwd: string, untilSettled: () => boolean, limitMs: number) => {
      const started = performance.now();
      const client = await connectServe({ cwd, home, name: "warm-test" });
      try {
        while (performance.now() - started < limitMs && !untilSettled()) await Bun.sleep(50);
        return performance.now() - started;
      } finally {
        await client.close();
      }
    };
    const warmed = await serve(indexed, () => statSync(saved(indexed)).mtimeMs > before, 15_000);
    expect(statSync(saved(indexed)).mtimeMs).toBeGreaterThan(before);
    // Twice as long as that warm-up took: an unasked index of the fresh folder would exist by then.
    await serve(fresh, () => existsSync(saved(fresh)), Math.max(1_000, 2 * warmed));
    expect(existsSync(saved(fresh))).toBe(false);
  }, 60_000);
});
