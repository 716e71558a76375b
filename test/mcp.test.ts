import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCMessage,
  ListRootsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { BoundedStdioTransport, MAX_MESSAGE_BYTES, TopLevelId } from "../src/mcp/stdio.ts";
import { indexFile } from "../src/code/store.ts";
import { projectDataDir, storePath } from "../src/home/paths.ts";
import { compiledBinary, ROOT, runBinary, tempDir } from "./support/helpers.ts";
import { seededRandom } from "./support/random.ts";

type ToolResult = {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
};

const home = tempDir("triforge-mcp-");
const dataHome = join(home, ".claude", "triforge");

function serverEnv(): Record<string, string> {
  return { HOME: home, USERPROFILE: home, TRIFORGE_HOME: dataHome, PATH: process.env.PATH ?? "" };
}

/** The SDK's own client, spawning the compiled binary's `serve` as a real MCP client would. */
async function connect(options: { cwd: string; args?: string[]; roots?: string[] }) {
  const transport = new StdioClientTransport({
    command: await compiledBinary(),
    args: ["serve", ...(options.args ?? [])],
    cwd: options.cwd,
    env: serverEnv(),
    stderr: "pipe",
  });
  const client = new Client(
    { name: "triforge-test", version: "0" },
    { capabilities: options.roots ? { roots: { listChanged: true } } : {} },
  );
  if (options.roots) {
    const roots = options.roots;
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((r) => ({ uri: pathToFileURL(r).href })),
    }));
  }
  await client.connect(transport);
  return { client, transport };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, CallToolResultSchema)) as ToolResult;
}

/**
 * What docs/mcp.md says about `tool`'s arguments: its signature `tool(a, b?, …)` when it has one,
 * else its section, from its bold heading to the next one.
 */
function documentedArguments(docs: string, tool: string): string {
  const signature = docs.match(new RegExp(`\`${tool}\\(([^)]*)\\)`));
  if (signature) return signature[1];
  const start = docs.indexOf(`**\`${tool}\`**`);
  if (start < 0) return "";
  const end = docs.indexOf("**`", start + 4 + tool.length);
  return docs.slice(start, end < 0 ? undefined : end);
}

function textOf(result: ToolResult): string {
  return result.content.map((c) => c.text ?? "").join("\n");
}

/** Runs `fn` with TRIFORGE_HOME pointing at the servers' data folder (paths are computed from it). */
function inDataHome<T>(fn: () => T): T {
  const previous = process.env.TRIFORGE_HOME;
  process.env.TRIFORGE_HOME = dataHome;
  try {
    return fn();
  } finally {
    if (previous === undefined) delete process.env.TRIFORGE_HOME;
    else process.env.TRIFORGE_HOME = previous;
  }
}

function activeFolder(name: string, config: Record<string, unknown> = {}): string {
  const root = folder(name);
  mkdirSync(join(root, ".triforge"), { recursive: true });
  writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify(config));
  return root;
}

function folder(name: string): string {
  const dir = join(home, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Spawns `serve` with raw pipes, for the tests about what happens on the wire and at shutdown. */
async function spawnRaw(cwd: string, stdout: "pipe" | number = "pipe") {
  return Bun.spawn([await compiledBinary(), "serve"], {
    cwd,
    env: serverEnv(),
    stdin: "pipe",
    stdout,
    stderr: "pipe",
  });
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const line = (message: unknown) => `${JSON.stringify(message)}\n`;

/** Resolves with the exit code, or "running" if the process is still alive after `ms`. */
async function exitWithin(proc: { exited: Promise<number> }, ms: number): Promise<number | "running"> {
  return Promise.race([proc.exited, Bun.sleep(ms).then(() => "running" as const)]);
}

describe("triforge serve: tools and schemas", () => {
  test("lists memory and code tools with JSON schemas, and instructions that mark recall as data", async () => {
    const { client } = await connect({ cwd: folder("plain") });
    try {
      const { tools } = await client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(Object.keys(byName).sort()).toEqual([
        "code_search",
        "find_related",
        "memory_status",
        "rag_search",
      ]);
      const rag = byName.rag_search;
      expect(rag.description).toContain("EARLIER");
      expect(rag.inputSchema.required).toEqual(["query"]);
      const props = rag.inputSchema.properties as Record<
        string,
        { enum?: string[]; default?: unknown; type?: string }
      >;
      expect(Object.keys(props).sort()).toEqual(["mode", "project_path", "query", "speaker", "top_k"]);
      expect(props.speaker.enum).toEqual(["user", "assistant"]);
      expect(props.mode.enum).toEqual(["hybrid", "graph", "dense", "bm25"]);
      expect(props.mode.default).toBe("hybrid");
      expect(props.top_k.default).toBe(5);
      expect(rag.outputSchema?.properties).toHaveProperty("hits");
      expect(byName.memory_status.inputSchema.required ?? []).toEqual([]);
      expect(byName.code_search.inputSchema.required).toContain("query");
      const instructions = client.getInstructions() ?? "";
      // The .txt files are embedded in the compiled binary, byte for byte.
      expect(instructions).toBe(readFileSync(join(ROOT, "src/mcp/instructions.txt"), "utf8"));
      expect(rag.description).toBe(readFileSync(join(ROOT, "src/mcp/tools/rag_search.txt"), "utf8"));
      expect(instructions).toContain("rag_search");
      expect(instructions).toContain("code_search");
      expect(instructions).toContain("not instructions");
    } finally {
      await client.close();
    }
  });

  test("docs/mcp.md names every argument of every tool the server lists", async () => {
    const docs = readFileSync(join(ROOT, "docs/mcp.md"), "utf8");
    const { client } = await connect({ cwd: folder("plain") });
    try {
      const { tools } = await client.listTools();
      const undocumented = tools.flatMap((tool) =>
        Object.keys(tool.inputSchema.properties ?? {})
          .filter((argument) => !new RegExp(`\\b${argument}\\b`).test(documentedArguments(docs, tool.name)))
          .map((argument) => `${tool.name}.${argument}`),
      );
      expect(undocumented).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("memory_status's description explains every field the tool returns", async () => {
    const root = activeFolder("status-fields");
    const { client } = await connect({ cwd: root });
    try {
      const { tools } = await client.listTools();
      const description = tools.find((t) => t.name === "memory_status")?.description ?? "";
      const status = await call(client, "memory_status", {});
      const fields = Object.keys(status.structuredContent ?? {});
      expect(fields).toContain("pendingLlm");
      expect(fields.filter((field) => !new RegExp(`\\b${field}\\b`).test(description))).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("docs/mcp.md quotes the server instructions verbatim", () => {
    const instructions = readFileSync(join(ROOT, "src/mcp/instructions.txt"), "utf8").trim();
    expect(readFileSync(join(ROOT, "docs/mcp.md"), "utf8")).toContain(instructions);
  });

  test("memory_status and rag_search on a project that is not active answer with a reason, not an error", async () => {
    const cwd = folder("inactive");
    const { client } = await connect({ cwd });
    try {
      const status = await call(client, "memory_status", {});
      expect(status.isError).toBeFalsy();
      expect(status.structuredContent).toMatchObject({ project: cwd, active: false });
      expect(String(status.structuredContent?.reason)).toContain("not active");
      // The reason is read first, right after `active`, not below a dozen zero counts.
      expect(textOf(status).split("\n").slice(0, 3)).toEqual([
        `project: ${cwd}`,
        "active: false",
        `reason: ${status.structuredContent?.reason}`,
      ]);

      const search = await call(client, "rag_search", { query: "anything at all" });
      expect(search.isError).toBeFalsy();
      expect(search.structuredContent).toMatchObject({ project: cwd, mode: "hybrid", hits: [] });
      expect(typeof search.structuredContent?.reason).toBe("string");
      expect(textOf(search)).toContain(String(search.structuredContent?.reason));
    } finally {
      await client.close();
    }
  });

  test("serve --project with a folder that does not exist refuses to start, naming it", async () => {
    const missing = join(home, "no-such-project");
    const result = await runBinary(["serve", `--project=${missing}`], { home, stdin: "" });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`${missing} is not an existing folder`);
  });

  test("a project_path starting with ~/ is read from the home folder, as a shell would", async () => {
    const root = activeFolder("tilde");
    const { client } = await connect({ cwd: folder("elsewhere") });
    try {
      const status = await call(client, "memory_status", { project_path: "~/tilde" });
      expect(status.isError).toBeFalsy();
      expect(status.structuredContent).toMatchObject({ project: root, active: true });
    } finally {
      await client.close();
    }
  });

  test("a project_path that does not exist is a tool error naming it; the server keeps serving", async () => {
    const { client } = await connect({ cwd: folder("badpath") });
    try {
      const missing = join(home, "no", "such", "folder");
      const result = await call(client, "rag_search", { query: "x", project_path: missing });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(missing);
      expect((await call(client, "memory_status", {})).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  test("a core that fails gives a tool error result, logged to the project's errors.log, and the server keeps serving", async () => {
    const root = activeFolder("broken-store");
    // A folder where the SQLite store file should be: opening it fails inside the memory core.
    mkdirSync(
      inDataHome(() => storePath(root)),
      { recursive: true },
    );
    const { client } = await connect({ cwd: root });
    try {
      for (const tool of ["rag_search", "memory_status"]) {
        const result = await call(client, tool, { query: "anything" });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toStartWith(`${tool} failed: `);
      }
      // The project's own errors.log, where `triforge status` shows it; the global one stays clean.
      const projectLog = readFileSync(
        inDataHome(() => join(projectDataDir(root), "errors.log")),
        "utf8",
      );
      expect(projectLog).toContain("[mcp memory_status]");
      expect(projectLog).toContain("[mcp rag_search]");
      const globalLog = join(dataHome, "errors.log");
      expect(existsSync(globalLog) ? readFileSync(globalLog, "utf8") : "").not.toContain("[mcp ");
      expect(
        (await call(client, "rag_search", { query: "x", project_path: folder("healthy") })).isError,
      ).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  test("a code tool that fails is logged to the errors.log of the repository it searched", async () => {
    const root = activeFolder("broken-code-index");
    writeFileSync(
      join(root, "auth.ts"),
      "export function verifyPassword(p: string) { return p.length > 8; }\n",
    );
    // A file where the code index's folder should be: the index can be neither read nor written.
    const indexFolder = inDataHome(() => dirname(indexFile(root)));
    mkdirSync(dirname(indexFolder), { recursive: true });
    writeFileSync(indexFolder, "not a folder");
    const { client } = await connect({ cwd: folder("elsewhere") });
    try {
      const result = await call(client, "code_search", { query: "verifyPassword", repo: root });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toStartWith("code_search failed: ");
      const projectLog = inDataHome(() => join(projectDataDir(root), "errors.log"));
      expect(readFileSync(projectLog, "utf8")).toContain("[mcp code_search]");
      const globalLog = join(dataHome, "errors.log");
      expect(existsSync(globalLog) ? readFileSync(globalLog, "utf8") : "").not.toContain("[mcp code_search]");
    } finally {
      await client.close();
    }
  });

  test("invalid arguments are tool errors from the schema, and the server lives on", async () => {
    const { client } = await connect({ cwd: folder("invalid") });
    try {
      // MCP (2025-11-25) reports input validation as a tool error so the model can correct itself.
      for (const args of [
        {},
        { query: "" },
        { query: "x", top_k: 0 },
        { query: "x", mode: "fuzzy" },
        { query: 42 },
      ]) {
        const result = await call(client, "rag_search", args);
        expect(result.isError).toBe(true);
        expect(textOf(result)).toContain("Input validation error");
      }
      // A blank query says what to put there, not "expected string to have >=1 characters".
      const blank = await call(client, "rag_search", { query: "   " });
      expect(blank.isError).toBe(true);
      expect(textOf(blank)).toContain("query is empty: name a topic");
      const unknown = await call(client, "no_such_tool", {});
      expect(unknown.isError).toBe(true);
      const { tools } = await client.listTools();
      expect(tools.length).toBe(4);
    } finally {
      await client.close();
    }
  });

  test("project_path defaults to a client root that does not contain the server's cwd, and --project pins it", async () => {
    const root = folder("client-root");
    const { client } = await connect({ cwd: folder("elsewhere"), roots: [root] });
    try {
      const result = await call(client, "rag_search", { query: "roots" });
      expect(result.structuredContent?.project).toBe(root);
    } finally {
      await client.close();
    }
    const pinned = folder("pinned");
    const second = await connect({ cwd: folder("elsewhere"), args: [`--project=${pinned}`], roots: [root] });
    try {
      const result = await call(second.client, "memory_status", {});
      expect(result.structuredContent?.project).toBe(pinned);
    } finally {
      await second.client.close();
    }
  });
});

describe("triforge serve: recall and code search through the real cores", () => {
  test("rag_search returns the relevant chunk of an indexed project, wrapped as recalled data", async () => {
    const root = activeFolder("indexed", { llm: "none" });
    const data = inDataHome(() => projectDataDir(root));
    mkdirSync(data, { recursive: true });
    const turns = [
      ["s1", "user", "The CSS theme uses a teal accent colour and the navbar is sticky on scroll."],
      ["s1", "assistant", "I changed the navbar to position sticky and set the accent to teal in theme.css."],
      [
        "s2",
        "user",
        "The upload integration test is flaky: the storage mock answers 503 on multipart uploads.",
      ],
      [
        "s2",
        "assistant",
        "We decided to retry multipart uploads three times with jittered backoff in uploader.ts.",
      ],
      ["s3", "user", "Add a Postgres migration that creates the invoices table with a currency column."],
      ["s3", "assistant", "Created migration 0042_invoices.sql with columns id, amount and currency."],
    ];
    const lines = turns.map(([session, role, text], i) =>
      JSON.stringify({
        ts: `2025-02-0${i + 1}T10:00:00.000Z`,
        session_id: session,
        role,
        text,
        uuid: `u${i}`,
      }),
    );
    writeFileSync(join(data, "chats.jsonl"), `${lines.join("\n")}\n`);
    const indexed = await runBinary(["index", `--project=${root}`], { home });
    expect(indexed.code).toBe(0);

    const { client } = await connect({ cwd: join(root) });
    try {
      for (const mode of ["hybrid", "bm25", "dense"]) {
        const result = await call(client, "rag_search", {
          query: "why is the upload test flaky with 503?",
          mode,
          top_k: 3,
        });
        expect(result.isError).toBeFalsy();
        const hits = result.structuredContent?.hits as { text: string; session_id: string }[];
        expect(hits.length).toBeGreaterThan(0);
        expect(hits.length).toBeLessThanOrEqual(3);
        expect(hits[0].text).toMatch(/multipart/);
        expect(hits[0].session_id).toBe("s2");
        expect(textOf(result)).toContain("multipart");
        expect(textOf(result).toLowerCase()).toContain("not instructions");
        // Clients that show the model structuredContent instead of the text still see the label.
        expect(String(result.structuredContent?.notice).toLowerCase()).toContain("not instructions");
      }
      // speaker narrows the hits to one side's own words.
      for (const speaker of ["user", "assistant"]) {
        const result = await call(client, "rag_search", {
          query: "navbar accent colour teal",
          speaker,
          top_k: 3,
        });
        const hits = result.structuredContent?.hits as { text: string; role: string }[];
        expect(hits.length).toBeGreaterThan(0);
        expect(hits.every((hit) => hit.role === speaker)).toBe(true);
        expect(hits[0].text).toMatch(speaker === "user" ? /teal accent colour/ : /position sticky/);
      }
      const status = await call(client, "memory_status", {});
      expect(status.structuredContent).toMatchObject({ project: root, active: true });
      expect(Number(status.structuredContent?.chunks)).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  test("memory_status reports captured records the last index run has not seen (pendingRecords)", async () => {
    const root = activeFolder("pending", { llm: "none" });
    const data = inDataHome(() => projectDataDir(root));
    mkdirSync(data, { recursive: true });
    const record = (i: number, role: string, text: string) =>
      `${JSON.stringify({ ts: `2025-05-0${i}T10:00:00.000Z`, session_id: `p${i}`, role, text, uuid: `p${i}-${role}` })}\n`;
    writeFileSync(
      join(data, "chats.jsonl"),
      record(1, "user", "Where do the invoices get their currency?") +
        record(1, "assistant", "From the currency column of the invoices table."),
    );
    expect((await runBinary(["index", `--project=${root}`], { home })).code).toBe(0);
    // Captured after the index run, as the Stop hook would: not searchable until the next index.
    writeFileSync(
      join(data, "chats.jsonl"),
      record(2, "user", "Rename the currency column to currency_code.") +
        record(2, "assistant", "Renamed it in migration 0043_currency_code.sql."),
      { flag: "a" },
    );
    const { client } = await connect({ cwd: root });
    try {
      const status = await call(client, "memory_status", {});
      expect(status.isError).toBeFalsy();
      expect(status.structuredContent?.pendingRecords).toBe(2);
      expect(textOf(status).split("\n")).toContain("pendingRecords: 2");
    } finally {
      await client.close();
    }
  });

  test("code_search's default folder is the client's root or cwd, under the same project rule: the home folder is refused", async () => {
    const project = folder("rooted-project");
    mkdirSync(join(project, ".git"), { recursive: true });
    writeFileSync(
      join(project, "queue.ts"),
      "export function drainQueue(items: string[]) {\n  return items.splice(0);\n}\n",
    );
    const rooted = await connect({ cwd: home, roots: [project] });
    try {
      const found = await call(rooted.client, "code_search", { query: "drainQueue" });
      expect(found.isError).toBeFalsy();
      expect(found.structuredContent?.repo).toBe(project);
    } finally {
      await rooted.client.close();
    }
    const inHome = await connect({ cwd: home });
    try {
      const refused = await call(inHome.client, "code_search", { query: "drainQueue" });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(`${home} is the home folder`);
      expect(textOf(refused)).toContain("allow_large: true");
      expect(existsSync(inDataHome(() => indexFile(home)))).toBe(false);
    } finally {
      await inHome.client.close();
    }
  });

  test("code_search returns a snippet of a small repository, by default the client's working directory", async () => {
    const repo = folder("repo");
    mkdirSync(join(repo, ".git"));
    mkdirSync(join(repo, "src", "auth"), { recursive: true });
    mkdirSync(join(repo, "src", "ui"), { recursive: true });
    writeFileSync(
      join(repo, "src", "auth", "password.ts"),
      "import { timingSafeEqual } from 'node:crypto';\n\n/** Compares a login attempt with the stored hash. */\nexport function verifyPassword(attempt: Buffer, stored: Buffer): boolean {\n  return attempt.length === stored.length && timingSafeEqual(attempt, stored);\n}\n",
    );
    writeFileSync(
      join(repo, "src", "ui", "colors.ts"),
      "export const accent = 'teal';\nexport const background = '#fff';\n",
    );
    writeFileSync(join(repo, "README.md"), "# demo\n\nA tiny repository for the MCP test.\n");
    const { client } = await connect({ cwd: repo });
    try {
      const byDefault = await call(client, "code_search", { query: "verifyPassword" });
      expect(byDefault.isError).toBeFalsy();
      expect(textOf(byDefault)).toContain("export function verifyPassword");
      expect(textOf(byDefault)).toContain("password.ts");
      const explicit = await call(client, "code_search", {
        query: "where is the login password checked?",
        repo,
        top_k: 1,
      });
      expect(textOf(explicit)).toContain("timingSafeEqual");
    } finally {
      await client.close();
    }
  });
});

describe("triforge serve: the wire and shutdown", () => {
  test("stdout carries only JSON-RPC messages, even through model loading and failing calls", async () => {
    const proc = await spawnRaw(folder("wire"));
    const requests = [
      INITIALIZE,
      INITIALIZED,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "rag_search", arguments: { query: "warm the model" } },
      },
      {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "rag_search", arguments: { top_k: "many" } },
      },
      {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "code_search", arguments: { query: "anything" } },
      },
      { jsonrpc: "2.0", id: 6, method: "no/such/method" },
      // Breaks the protocol itself (tools/call without a tool name): a JSON-RPC error, not a tool result.
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { arguments: {} } },
      { jsonrpc: "2.0", id: 8, method: "tools/list" },
    ];
    proc.stdin.write(requests.map(line).join(""));
    await proc.stdin.flush();
    proc.stdin.end();
    const stdout = await new Response(proc.stdout as ReadableStream<Uint8Array>).text();
    expect(await proc.exited).toBe(0);
    const messages = stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l));
    for (const m of messages) expect(m.jsonrpc).toBe("2.0");
    const byId = new Map(messages.map((m) => [m.id, m]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(byId.get(4).result.isError).toBe(true);
    expect(byId.get(6).error.code).toBe(-32601);
    expect(byId.get(7).result).toBeUndefined();
    expect(byId.get(7).error.message).toContain('"name"');
    expect(byId.get(8).result.tools.length).toBe(4);
  });

  test("closing stdin mid-call ends the server by itself, with exit code 0", async () => {
    const proc = await spawnRaw(folder("disconnect"));
    proc.stdin.write(
      line(INITIALIZE) +
        line(INITIALIZED) +
        line({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "code_search", arguments: { query: "x" } },
        }),
    );
    await proc.stdin.flush();
    proc.stdin.end();
    // Well inside the 2 s after which the SDK's client would send SIGTERM.
    expect(await exitWithin(proc, 1_900)).toBe(0);
  });

  test("a client that stops reading (broken stdout pipe) does not leave the server running", async () => {
    const fifo = join(home, "stdout.fifo");
    Bun.spawnSync(["mkfifo", fifo]);
    const reader = Bun.spawn(["head", "-c", "1", fifo], { stdout: "ignore" });
    const fd = openSync(fifo, "w");
    const proc = await spawnRaw(folder("epipe"), fd);
    closeSync(fd);
    proc.stdin.write(line(INITIALIZE));
    await proc.stdin.flush();
    await reader.exited;
    // The next replies hit a pipe nobody reads; stdin stays open on purpose.
    for (let id = 2; id < 5; id++) {
      proc.stdin.write(line({ jsonrpc: "2.0", id, method: "tools/list" }));
      await proc.stdin.flush();
    }
    expect(await exitWithin(proc, 3_000)).toBe(0);
    proc.stdin.end();
  });

  test("the SDK client's close() mid-call leaves no process behind", async () => {
    const { client, transport } = await connect({ cwd: folder("sdk-close") });
    const pid = transport.pid!;
    const pending = call(client, "rag_search", { query: "interrupted" }).catch(() => "closed");
    await client.close();
    await pending;
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 3_000;
    while (alive() && Date.now() < deadline) await Bun.sleep(20);
    expect(alive()).toBe(false);
  });
});

/** A transport on in-memory streams: what it passes on, and what it answers by itself. */
function memoryTransport(limit?: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new BoundedStdioTransport(input, output, limit);
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  let written = "";
  output.on("data", (chunk) => {
    written += chunk.toString();
  });
  const replies = () =>
    written
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  return { input, transport, received, replies };
}

describe("bounded stdio transport", () => {
  test("a message split anywhere, CRLF or LF, arrives whole; blank lines are ignored", async () => {
    const { input, transport, received, replies } = memoryTransport();
    await transport.start();
    const text = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { q: "ключ ✓" } })}\r\n\n`;
    const bytes = new TextEncoder().encode(text.repeat(3));
    const random = seededRandom(7);
    for (let at = 0; at < bytes.length; ) {
      const size = 1 + Math.floor(random() * 9);
      input.write(bytes.subarray(at, at + size));
      at += size;
    }
    await Bun.sleep(10);
    expect(received).toEqual(
      Array(3).fill({ jsonrpc: "2.0", id: 1, method: "ping", params: { q: "ключ ✓" } }),
    );
    expect(replies()).toEqual([]);
  });

  test("not JSON: -32700 with id null; JSON but not JSON-RPC: -32600 with its id when it has one", async () => {
    const { input, transport, received, replies } = memoryTransport();
    await transport.start();
    input.write('{"jsonrpc": "2.0", "id": 3, "method"\n');
    input.write('{"jsonrpc":"2.0","id":4,"method":17}\n');
    input.write('[{"jsonrpc":"2.0","id":5,"method":"ping"}]\n');
    input.write('{"jsonrpc":"2.0","id":6,"method":"ping"}\n');
    await Bun.sleep(10);
    expect(replies().map((r) => [r.id, r.error.code])).toEqual([
      [null, ErrorCode.ParseError],
      [4, ErrorCode.InvalidRequest],
      [null, ErrorCode.InvalidRequest],
    ]);
    expect(received).toEqual([{ jsonrpc: "2.0", id: 6, method: "ping" }]);
  });

  test("a line over the limit is skipped, not kept: -32600 under its own id (even written last), then reading goes on", async () => {
    const { input, transport, received, replies } = memoryTransport(1_000);
    await transport.start();
    const huge = `{"method":"tools/call","params":{"arguments":{"id":1,"query":"${"x".repeat(50_000)}"}},"jsonrpc":"2.0","id":"call-7"}\n`;
    for (let at = 0; at < huge.length; at += 999) input.write(huge.slice(at, at + 999));
    input.write(`${"y".repeat(5_000)}\n`);
    input.write('{"jsonrpc":"2.0","id":8,"method":"ping"}\n');
    await Bun.sleep(10);
    expect(replies().map((r) => [r.id, r.error.code])).toEqual([
      ["call-7", ErrorCode.InvalidRequest],
      [null, ErrorCode.InvalidRequest],
    ]);
    expect(replies()[0].error.message).toContain("at most 1000 bytes");
    expect(received).toEqual([{ jsonrpc: "2.0", id: 8, method: "ping" }]);
  });

  test("the top-level id is found in any split of the bytes, and never inside the parameters", () => {
    const cases: [string, string | number | null][] = [
      ['{"jsonrpc":"2.0","id":5,"method":"x"}', 5],
      ['{"method":"m","params":{"id":9,"q":"a\\"id\\":3"},"jsonrpc":"2.0","id":42}', 42],
      ['{"params":{"x":[1,2,{"id":1}]},"id":"abc\\"d"}', 'abc"d'],
      ['{ "id" : "ключ" , "x": 1 }', "ключ"],
      ['{"idx":1,"id":-7}', -7],
      ['[{"id":1}]', null],
      ['{"id":{"a":1}}', null],
      ['{"id":null,"method":"m"}', null],
      [`{"id":"${"z".repeat(300)}"}`, null],
      [JSON.stringify({ params: { text: '}}}{{{[[\\"]] \\\\', id: 1 }, id: 11 }), 11],
    ];
    const random = seededRandom(3);
    for (const [text, id] of cases) {
      const bytes = new TextEncoder().encode(text);
      for (let trial = 0; trial < 20; trial++) {
        const scanner = new TopLevelId();
        for (let at = 0; at < bytes.length; ) {
          const size = 1 + Math.floor(random() * 6);
          scanner.scan(bytes.subarray(at, at + size));
          at += size;
        }
        expect([text, scanner.id]).toEqual([text, id]);
      }
    }
  });
});

describe("triforge serve: hostile messages", () => {
  test("raw bytes: a line over the limit, garbage and non-JSON-RPC get JSON-RPC errors; the server keeps serving and exits when stdin closes", async () => {
    const proc = await spawnRaw(folder("hostile"));
    const oversized = `${JSON.stringify({
      jsonrpc: "2.0",
      method: "tools/call",
      params: { name: "rag_search", arguments: { query: "x".repeat(MAX_MESSAGE_BYTES + 1024) } },
      id: 2,
    })}\n`;
    proc.stdin.write(`${line(INITIALIZE)}${line(INITIALIZED)}not json at all\n{"hello":"world"}\n`);
    for (let at = 0; at < oversized.length; at += 1 << 16)
      proc.stdin.write(oversized.slice(at, at + (1 << 16)));
    proc.stdin.write(line({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
    await proc.stdin.flush();
    // The answer to tools/list is written after the errors: everything before it was read.
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let stdout = "";
    while (!stdout.includes('"id":3')) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += new TextDecoder().decode(value);
    }
    proc.stdin.end();
    expect(await exitWithin(proc, 1_900)).toBe(0);
    const messages = stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const errors = messages.filter((m) => m.error).map((m) => [m.id, m.error.code]);
    expect(errors).toEqual([
      [null, ErrorCode.ParseError],
      [null, ErrorCode.InvalidRequest],
      [2, ErrorCode.InvalidRequest],
    ]);
    expect(messages.find((m) => m.id === 3).result.tools.length).toBe(4);
  });

  test("2,000 requests written at once, then stdin closes: the server answers in order and still leaves within its grace", async () => {
    const proc = await spawnRaw(folder("hostile-flood"));
    const flood = Array.from({ length: 2000 }, (_, id) =>
      line({ jsonrpc: "2.0", id: id + 2, method: "ping" }),
    );
    proc.stdin.write(line(INITIALIZE) + flood.join(""));
    await proc.stdin.flush();
    proc.stdin.end();
    // The SDK's client sends SIGTERM 2 s after closing stdin; the grace for answers is 1.5 s.
    expect(await exitWithin(proc, 1_900)).toBe(0);
    const ids = (await new Response(proc.stdout as ReadableStream<Uint8Array>).text())
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).id)
      .filter((id) => id !== 1);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(ids.toSorted((a: number, b: number) => a - b));
  });

  test("stdin closing in the middle of an oversized line still ends the server", async () => {
    const proc = await spawnRaw(folder("hostile-eof"));
    proc.stdin.write(line(INITIALIZE));
    const chunk = "z".repeat(1 << 20);
    for (let i = 0; i < 12; i++) proc.stdin.write(chunk);
    await proc.stdin.flush();
    proc.stdin.end();
    expect(await exitWithin(proc, 1_900)).toBe(0);
  });

  test("the SDK client: an oversized call fails at once with -32600, and the next call is answered", async () => {
    const { client } = await connect({ cwd: folder("hostile-sdk") });
    try {
      const error = await call(client, "rag_search", { query: "q".repeat(MAX_MESSAGE_BYTES) }).catch(
        (e) => e,
      );
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidRequest);
      const { tools } = await client.listTools();
      expect(tools.length).toBe(4);
    } finally {
      await client.close();
    }
  });
});
