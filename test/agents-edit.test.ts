import { describe, expect, test } from "bun:test";
import { ragCommandText, triforgeServer } from "../src/agents/claude.ts";
import { codexTable } from "../src/agents/codex.ts";
import { applyEdit, type Edit, revertEdit } from "../src/agents/edits.ts";
import {
  appendJsonArrayItem,
  detectStyle,
  getJsonValue,
  removeJsonArrayItem,
  removeJsonValue,
  setJsonValue,
} from "../src/agents/json-edit.ts";
import { commandLine } from "../src/agents/launcher.ts";
import { opencodeEntry } from "../src/agents/opencode.ts";
import {
  addLine,
  removeLine,
  removeSection,
  removeTomlTable,
  upsertSection,
  upsertTomlTable,
} from "../src/agents/text-edit.ts";
import { compareVersions, parseChecksums } from "../src/agents/update.ts";
import { shellQuote } from "../src/home/shell.ts";

const server = { type: "stdio", command: "/opt/tri forge/triforge", args: ["serve"] };

describe("JSON edits keep every byte they do not own", () => {
  const documents: Record<string, string> = {
    "four spaces, inline sibling": `{\n    "numStartups": 3,\n    "mcpServers": {\n        "other": { "command": "x" }\n    },\n    "z": [1, 2]\n}\n`,
    tabs: `{\n\t"theme": "dark",\n\t"mcpServers": {\n\t\t"a": {"command": "a"}\n\t}\n}`,
    "empty servers object": `{\n  "mcpServers": {}\n}\n`,
    "no servers key": `{\n  "userID": "abc",\n  "projects": {"/x": {"allowedTools": []}}\n}\n`,
    "JSONC with comments and trailing commas": `{\n  // my servers\n  "mcpServers": {\n    "a": { "command": "a" }, // keep me\n  },\n}\n`,
    CRLF: `{\r\n  "k": 1,\r\n  "mcpServers": {\r\n    "a": {}\r\n  }\r\n}\r\n`,
  };
  for (const [name, original] of Object.entries(documents)) {
    test(`${name}: set then remove is the identity`, () => {
      const { text, createdParents } = setJsonValue(original, ["mcpServers", "triforge"], server);
      expect(getJsonValue(text, ["mcpServers", "triforge"])).toEqual(server);
      // Every other value is still there, unchanged.
      const before = JSON.parse(JSON.stringify(getJsonValue(original, [])));
      const after = getJsonValue(text, []) as Record<string, unknown>;
      for (const key of Object.keys(before))
        if (key !== "mcpServers") expect(after[key]).toEqual(before[key]);
      expect(removeJsonValue(text, ["mcpServers", "triforge"], createdParents)).toBe(original);
    });
  }

  test("the inserted entry uses the file's indentation and line endings", () => {
    const original = documents["four spaces, inline sibling"];
    const { text } = setJsonValue(original, ["mcpServers", "triforge"], server);
    expect(text).toContain(
      `        "other": { "command": "x" },\n        "triforge": {\n            "type": "stdio",`,
    );
    expect(detectStyle(documents.tabs).indent).toBe("\t");
    expect(
      setJsonValue(documents.CRLF, ["mcpServers", "t"], { a: 1 })
        .text.split("\n")
        .every((l, i, all) => i === all.length - 1 || l.endsWith("\r")),
    ).toBe(true);
  });

  test("JSONC comments survive and a trailing-comma file keeps its habit", () => {
    const { text } = setJsonValue(
      documents["JSONC with comments and trailing commas"],
      ["mcpServers", "triforge"],
      { a: 1 },
    );
    expect(text).toContain("// my servers");
    expect(text).toContain("// keep me");
    expect(text).toContain(
      `"a": { "command": "a" }, // keep me\n    "triforge": {\n      "a": 1\n    },\n  },`,
    );
  });

  test("replacing an existing value touches only that value", () => {
    const original = `{\n  "mcpServers": {\n    "triforge": {"command": "/old"},\n    "b": 2\n  }\n}\n`;
    const { text, createdParents } = setJsonValue(original, ["mcpServers", "triforge"], { command: "/new" });
    expect(createdParents).toBe(0);
    expect(text).toBe(
      `{\n  "mcpServers": {\n    "triforge": {\n      "command": "/new"\n    },\n    "b": 2\n  }\n}\n`,
    );
  });

  test("a new file gets a complete document; removing with its created parents empties it", () => {
    const { text, createdParents } = setJsonValue("", ["mcpServers", "triforge"], { a: 1 });
    expect(JSON.parse(text)).toEqual({ mcpServers: { triforge: { a: 1 } } });
    expect(createdParents).toBe(1);
    expect(removeJsonValue(text, ["mcpServers", "triforge"], createdParents).trim()).toBe("{}");
  });

  test("a parent the user filled after we created it stays", () => {
    const { text, createdParents } = setJsonValue(`{\n  "a": 1\n}\n`, ["mcpServers", "triforge"], { a: 1 });
    const edited = setJsonValue(text, ["mcpServers", "mine"], { b: 2 }).text;
    const removed = removeJsonValue(edited, ["mcpServers", "triforge"], createdParents);
    expect(JSON.parse(removed)).toEqual({ a: 1, mcpServers: { mine: { b: 2 } } });
  });

  test("invalid JSON is refused with the file and line named", () => {
    expect(() => setJsonValue(`{\n  "a": 1,\n  "b": \n}`, ["x"], 1, "/home/u/.claude.json")).toThrow(
      /\/home\/u\/\.claude\.json: invalid JSON \(.+ at line 4\)/,
    );
    expect(() => setJsonValue(`[1, 2]`, ["x"], 1, "f.json")).toThrow(/expected a JSON object/);
  });

  test("array items are appended after the user's and removed exactly", () => {
    const original = `{\n  "hooks": {\n    "Stop": [\n      {"hooks": [{"type": "command", "command": "mine"}]}\n    ]\n  }\n}\n`;
    const ours = { hooks: [{ type: "command", command: "ours", timeout: 5 }] };
    const { text } = appendJsonArrayItem(original, ["hooks", "Stop"], ours);
    expect((getJsonValue(text, ["hooks", "Stop"]) as unknown[])[1]).toEqual(ours);
    expect(appendJsonArrayItem(text, ["hooks", "Stop"], ours).text).toBe(text);
    expect(removeJsonArrayItem(text, ["hooks", "Stop"], ours, false, 0)).toBe(original);
    // Created array: it goes with its created parent.
    const fresh = appendJsonArrayItem(`{\n  "a": 1\n}\n`, ["hooks", "SessionEnd"], ours);
    expect(removeJsonArrayItem(fresh.text, ["hooks", "SessionEnd"], ours, true, fresh.createdParents)).toBe(
      `{\n  "a": 1\n}\n`,
    );
  });
});

describe("text edits", () => {
  const body = "## Tools\n\nUse rag_search.";

  test("a Markdown section is appended after a blank line, idempotent, and removed exactly", () => {
    for (const original of [
      "# Mine\n\nKeep tabs.\n",
      "# Mine\nno final newline",
      "",
      "# CRLF\r\n\r\ntext\r\n",
    ]) {
      const once = upsertSection(original, "triforge", body);
      expect(once).toContain("<!-- triforge:begin");
      expect(once.startsWith(original.replace(/\r?\n?$/, ""))).toBe(true);
      expect(upsertSection(once, "triforge", body)).toBe(once);
      const removed = removeSection(once, "triforge");
      // A file without a final newline gains one line break; every other byte is the original's.
      expect(removed === original || removed === `${original}\n`).toBe(true);
    }
  });

  test("a changed body replaces the section in place, keeping what the user wrote after it", () => {
    const once = `${upsertSection("# Mine\n", "triforge", body)}\nuser line after\n`;
    const twice = upsertSection(once, "triforge", "## Tools\n\nnew text");
    expect(twice).toContain("new text");
    expect(twice).not.toContain("Use rag_search.");
    expect(twice.endsWith("\nuser line after\n")).toBe(true);
    expect(removeSection(twice, "triforge")).toBe("# Mine\n\nuser line after\n");
  });

  test("a line is added once and removed exactly", () => {
    const original = "# Project\n\nRules.\n";
    const added = addLine(original, "@AGENTS.md");
    expect(added).toBe("# Project\n\nRules.\n\n@AGENTS.md\n");
    expect(addLine(added, "@AGENTS.md")).toBe(added);
    expect(removeLine(added, "@AGENTS.md")).toBe(original);
  });

  test("a TOML table is appended, replaced in place and removed exactly; the file stays valid TOML", () => {
    const original = `model = "o3"\n\n[mcp_servers.foo]\ncommand = "foo"\n\n[profiles.fast]\nmodel = "mini"\n`;
    const table = codexTable(["/opt/tri forge/triforge"]);
    const added = upsertTomlTable(original, "mcp_servers.triforge", table);
    const parsed = Bun.TOML.parse(added) as {
      mcp_servers: Record<string, { command: string; args: string[] }>;
      profiles: unknown;
    };
    expect(parsed.mcp_servers.triforge).toEqual({ command: "/opt/tri forge/triforge", args: ["serve"] });
    expect(parsed.mcp_servers.foo.command).toBe("foo");
    expect(upsertTomlTable(added, "mcp_servers.triforge", table)).toBe(added);
    expect(removeTomlTable(added, "mcp_servers.triforge")).toBe(original);
    // In the middle of the file: replaced where it stands, removed with its gap.
    const middle = `[mcp_servers.triforge]\ncommand = "/old"\n\n[other]\nx = 1\n`;
    const replaced = upsertTomlTable(middle, "mcp_servers.triforge", table);
    expect(replaced.startsWith(table)).toBe(true);
    expect(replaced.endsWith("\n\n[other]\nx = 1\n")).toBe(true);
    expect(removeTomlTable(replaced, "mcp_servers.triforge")).toBe("[other]\nx = 1\n");
    expect(
      removeTomlTable(replaced, "mcp_servers.triforge", `[mcp_servers.triforge]\ncommand = "/old"`),
    ).toBe(middle);
  });

  test("a Windows path is a valid TOML string", () => {
    const parsed = Bun.TOML.parse(codexTable(["C:\\Program Files\\triforge\\triforge.exe"])) as {
      mcp_servers: { triforge: { command: string } };
    };
    expect(parsed.mcp_servers.triforge.command).toBe("C:\\Program Files\\triforge\\triforge.exe");
  });
});

describe("edit records", () => {
  test("an entry the user already has under the same name is kept and not recorded", () => {
    const original = `{"mcpServers": {"insforge": {"type": "http", "url": "https://mine", "headers": {"A": "b"}}}}`;
    const edit: Edit = {
      kind: "json",
      path: ["mcpServers", "insforge"],
      value: { type: "http", url: "x" },
      keepExisting: true,
    };
    expect(applyEdit(original, edit, "f")).toEqual({ text: original, applied: null });
  });

  test("reverting an edit over a value that was there puts that value back", () => {
    const original = `{\n  "mcpServers": {\n    "triforge": {\n      "command": "/old"\n    }\n  }\n}\n`;
    const { text, applied } = applyEdit(
      original,
      { kind: "json", path: ["mcpServers", "triforge"], value: { command: "/new" } },
      "f",
    );
    expect(applied?.previous).toEqual({ command: "/old" });
    expect(revertEdit(text!, applied!, "f").text).toBe(original);
  });

  test("a whole file edited by the user is left in place unless forced", () => {
    const { applied } = applyEdit(undefined, { kind: "file", content: "ours\n" }, "f");
    expect(revertEdit("ours\n", applied!, "f").text).toBeUndefined();
    expect(revertEdit("ours, edited\n", applied!, "f")).toEqual({
      text: "ours, edited\n",
      note: "changed since it was written; left in place",
    });
    const forced = applyEdit(undefined, { kind: "file", content: "ours\n", force: true }, "f").applied!;
    expect(revertEdit("edited\n", forced, "f").text).toBeUndefined();
    expect(
      applyEdit("theirs\n", { kind: "file", content: "ours\n", createOnly: true }, "f").applied,
    ).toBeNull();
  });
});

describe("launcher quoting", () => {
  test("POSIX: bare when safe, single-quoted otherwise", () => {
    expect(shellQuote("/usr/local/bin/triforge", "linux")).toBe("/usr/local/bin/triforge");
    expect(shellQuote("/home/me/my tools/triforge", "linux")).toBe("'/home/me/my tools/triforge'");
    expect(shellQuote("/it's/$HOME", "darwin")).toBe(`'/it'\\''s/$HOME'`);
  });

  test("Windows: always double-quoted, forward slashes", () => {
    expect(
      commandLine(
        ["C:\\Program Files\\triforge\\triforge.exe", "prelude", "--project=C:\\Users\\me\\my proj"],
        "win32",
      ),
    ).toBe(`"C:/Program Files/triforge/triforge.exe" "prelude" --project="C:/Users/me/my proj"`);
  });

  test("a hook command line survives sh word splitting", async () => {
    const line = commandLine(["printf", "%s|", "a b", "it's", "--project=/x y/$z"], "linux");
    const result = Bun.spawnSync(["sh", "-c", line]);
    expect(result.stdout.toString()).toBe("a b|it's|--project=/x y/$z|");
  });
});

describe("agent entries", () => {
  test("Claude's MCP entry starts the launcher with serve; from source the script comes first", () => {
    expect(triforgeServer(["/bin/triforge"])).toEqual({
      type: "stdio",
      command: "/bin/triforge",
      args: ["serve"],
    });
    expect(triforgeServer(["/usr/bin/bun", "/src/index.ts"])).toEqual({
      type: "stdio",
      command: "/usr/bin/bun",
      args: ["/src/index.ts", "serve"],
    });
  });

  test("/rag's frontmatter is the first thing in the file and allows exactly the command it runs", () => {
    const text = ragCommandText(["/opt/my tools/triforge"], "linux");
    const [, frontmatter, body] = text.split(/^---$/m);
    expect(text.startsWith("---\ndescription: ")).toBe(true);
    expect(frontmatter).toContain("allowed-tools: Bash('/opt/my tools/triforge' activate:*)");
    expect(body).toContain("!`'/opt/my tools/triforge' activate`");
  });

  test("OpenCode: flat `mcp.<name>` by default, `mcp.servers` when the file already nests servers", () => {
    expect(opencodeEntry("", ["/b/triforge"])).toEqual({
      path: ["mcp", "triforge"],
      value: { type: "local", command: ["/b/triforge", "serve"], enabled: true },
    });
    const nested = `{"mcp": {"servers": {"x": {"type": "local", "command": ["x"]}}}}`;
    expect(opencodeEntry(nested, ["/b/triforge"]).path).toEqual(["mcp", "servers", "triforge"]);
  });
});

describe("update helpers", () => {
  test("versions compare numerically", () => {
    expect(compareVersions("v0.10.0", "0.9.9")).toBe(1);
    expect(compareVersions("0.1.0", "v0.1.0")).toBe(0);
    expect(compareVersions("1.2", "1.2.1")).toBe(-1);
  });

  test("SHA256SUMS lines parse in both sha256sum modes", () => {
    const hash = "a".repeat(64);
    const sums = parseChecksums(
      `${hash}  triforge-linux-x64\n${"B".repeat(64)} *triforge-windows-x64.exe\ngarbage\n`,
    );
    expect(sums.get("triforge-linux-x64")).toBe(hash);
    expect(sums.get("triforge-windows-x64.exe")).toBe("b".repeat(64));
    expect(sums.size).toBe(2);
  });
});

describe("JSON removal after the user edited around our entry", () => {
  test("a property the user added after ours keeps its place; the document stays valid", () => {
    const original = `{\n  "mcpServers": {\n    "a": 1 // note\n  }\n}\n`;
    const { text } = setJsonValue(original, ["mcpServers", "triforge"], { x: 1 });
    expect(text).toContain(`"a": 1, // note\n    "triforge"`);
    const edited = setJsonValue(text, ["mcpServers", "b"], 2).text;
    const removed = removeJsonValue(edited, ["mcpServers", "triforge"]);
    expect(removed).toBe(`{\n  "mcpServers": {\n    "a": 1, // note\n    "b": 2\n  }\n}\n`);
    expect(removeJsonValue(text, ["mcpServers", "triforge"])).toBe(original);
  });

  test("one-line objects get a valid edit both ways", () => {
    const original = `{"mcpServers": {"a": {"command": "a"}}, "z": 1}`;
    const { text } = setJsonValue(original, ["mcpServers", "triforge"], { x: 1 });
    expect(JSON.parse(text).mcpServers).toEqual({ a: { command: "a" }, triforge: { x: 1 } });
    expect(removeJsonValue(text, ["mcpServers", "triforge"])).toBe(original);
  });
});
