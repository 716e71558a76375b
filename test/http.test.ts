/**
 * `serve --http`: a real Bun.serve on 127.0.0.1 over real code-search indexes and a real memory store,
 * called with fetch (and node:http where a header fetch will not send must be forged).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { appendRecord } from "../src/home/ledger.ts";
import { pinsPath, summaryPath as summaryPathOf } from "../src/home/paths.ts";
import { type AuthContext, deny, resolveToken, serverHosts } from "../src/http/auth.ts";
import { type RunningServer, startHttpServer } from "../src/http/server.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { addPin, MAX_PINS, PinLimitError, pinnedSection, readPins } from "../src/memory/pins.ts";
import { preludeContext } from "../src/memory/prelude.ts";
import { loadMemoryIndex, recall } from "../src/memory/recall/recall.ts";
import { Catalog } from "../src/rag/catalog.ts";
import { ingestWorkspace, RagService } from "../src/rag/service.ts";
import { runBinary, tempDir } from "./support/helpers.ts";
import { appendRecords, exchange, memoryHome } from "./support/memory-helpers.ts";

const TOKEN = "test-token-0123456789";
const { home, project } = memoryHome();
const catalogPath = join(home, "catalog.db");

/** A small repository: each file defines one function whose name and body are its own. */
function writeWorkspace(root: string, names: string[]): void {
  mkdirSync(join(root, "src"), { recursive: true });
  for (const name of names)
    writeFileSync(
      join(root, "src", `${name}.ts`),
      `// ${name} module\nexport function ${name}(input: string): string {\n  const ${name}Result = input.trim();\n  return ${name}Result + "-${name}";\n}\n`,
    );
}

const app = project("app");
writeWorkspace(app, ["signSessionCookie", "parseInvoice", "scheduleRetries"]);
const other = join(home, "other");
writeWorkspace(other, ["renderDashboard", "exportLedger"]);
// A link out of the workspace: its target must never be read.
const outside = join(home, "outside");
mkdirSync(outside);
writeFileSync(join(outside, "secret.ts"), "export const leakedOutsideMarker = 42;\n");
symlinkSync(outside, join(app, "src", "linked"));

let server: RunningServer;
let base: string;
let rag: RagService;

beforeAll(async () => {
  appendRecords(app, [
    ...exchange(
      "s-cookies",
      "How do we store sessions? Redis maybe?",
      "We decided on signed cookies with HMAC, no Redis.",
      1,
    ),
    ...exchange(
      "s-invoices",
      "The invoice parser breaks on <b>bold</b> totals",
      "Fixed parseInvoice to strip markup before reading totals.",
      2,
    ),
  ]);
  await indexProject(app, { llm: null });
  await ingestWorkspace(app, { catalogPath });
  await ingestWorkspace(other, { catalogPath });
  rag = new RagService([app, other], { catalogPath });
  server = startHttpServer({ host: "127.0.0.1", port: 0, token: TOKEN, rag });
  base = server.url;
});
afterAll(() => server?.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
// biome-ignore lint/suspicious/noExplicitAny: response bodies are whatever the server sent; the assertions check them.
type Body = any;
const jsonOf = async (response: Promise<Response>): Promise<Body> => (await response).json();
const bearer = { authorization: `Bearer ${TOKEN}` };

/** A raw request with headers fetch would not let us forge (Host). */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("claw-rag-service's API", () => {
  test("GET /health answers ok as plain text", async () => {
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
  });

  test("GET /v1/stats keeps claw's two fields and adds files, workspaces, model, memory", async () => {
    const stats = await jsonOf(fetch(`${base}/v1/stats`));
    expect(stats.phase).toBe("1-sqlite");
    expect(stats.chunks).toBeGreaterThanOrEqual(5);
    expect(stats.files).toBe(5);
    expect(stats.workspaces.map((w: { root: string }) => w.root)).toEqual(rag.workspaces);
    expect(typeof stats.model).toBe("string");
    expect(stats.memory[0]).toMatchObject({ project: rag.workspaces[0], active: true, sessions: 2 });
    // The counts alone, without the graph's: what `triforge status` says of them.
    const { memoryStatus } = await import("../src/memory/status.ts");
    const full = await memoryStatus(rag.workspaces[0]);
    expect(stats.memory[0]).toEqual({
      project: rag.workspaces[0],
      active: true,
      chunks: full.chunks,
      sessions: full.sessions,
      last_indexed: full.lastIndexed,
    });
  });

  test("POST /v1/query returns claw's hit shape, with the lines the snippet really has", async () => {
    const res = await post("/v1/query", { query: "sign the session cookie", top_k: 3 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(["1-sqlite-no-db", "1-sqlite-empty", "1-sqlite", "2-qdrant"]).toContain(body.phase);
    expect(body.hits.length).toBeGreaterThan(0);
    expect(body.hits.length).toBeLessThanOrEqual(3);
    const [hit] = body.hits;
    expect(Object.keys(hit).sort()).toEqual(["end_line", "path", "score", "snippet", "start_line"]);
    // Two workspaces are served, so a path names its workspace.
    expect(hit.path).toBe("app:src/signSessionCookie.ts");
    const lines = readFileSync(join(app, "src", "signSessionCookie.ts"), "utf8").split("\n");
    expect(hit.snippet).toBe(lines.slice(hit.start_line - 1, hit.end_line).join("\n"));
  });

  test("the phase says whether there is an index and whether it holds anything", async () => {
    const fresh = join(home, "never-ingested");
    const empty = join(home, "empty");
    mkdirSync(fresh);
    mkdirSync(empty);
    expect(await new RagService([fresh], { catalogPath }).query("anything")).toEqual({
      hits: [],
      phase: "1-sqlite-no-db",
    });
    expect((await new RagService([fresh], { catalogPath }).stats()).phase).toBe("1-sqlite-no-db");
    await ingestWorkspace(empty, { catalogPath });
    expect(await new RagService([empty], { catalogPath }).query("anything")).toEqual({
      hits: [],
      phase: "1-sqlite-empty",
    });
  });

  test("top_k defaults to 8 and is capped at 64", async () => {
    const names = Array.from({ length: 80 }, (_, i) => `widgetHandler${i}`);
    const big = join(home, "big");
    writeWorkspace(big, names);
    await ingestWorkspace(big, { catalogPath });
    const service = new RagService([big], { catalogPath });
    expect((await service.query("widget handler input")).hits.length).toBe(8);
    expect((await service.query("widget handler input", 1000)).hits.length).toBe(64);
  });

  test("bad requests get JSON errors with the right status and no stack trace", async () => {
    const cases: [Promise<Response>, number][] = [
      [post("/v1/query", "{not json"), 400],
      [post("/v1/query", { query: "   " }), 400],
      [post("/v1/query", { query: 42 }), 422],
      [post("/v1/query", { query: "x", top_k: "5" }), 422],
      [post("/v1/query", { query: "x", top_k: 0 }), 422],
      [post("/v1/query", [1, 2]), 422],
      [
        fetch(`${base}/v1/query`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" }),
        415,
      ],
      [post("/v1/query", { query: "x".repeat(2 << 20) }), 413],
      [fetch(`${base}/v1/nothing`), 404],
      [fetch(`${base}/v1/query`), 405],
    ];
    for (const [pending, status] of cases) {
      const res = await pending;
      expect(res.status).toBe(status);
      const body = (await res.json()) as Body;
      expect(typeof body.error).toBe("string");
      expect(body.error).not.toMatch(/\n\s+at /);
    }
    expect((await fetch(`${base}/v1/query`)).headers.get("allow")).toBe("POST");
  });

  test("nothing outside a workspace is read: a symlink out of it is not followed", async () => {
    const body = await jsonOf(post("/v1/query", { query: "leakedOutsideMarker", top_k: 64 }));
    expect(JSON.stringify(body)).not.toContain("leakedOutsideMarker = 42");
  });
});

describe("ingest", () => {
  test("ingesting one workspace never removes another's chunks", async () => {
    const before = (await rag.query("renderDashboard")).hits.map((h) => h.path);
    expect(before).toContain("other:src/renderDashboard.ts");
    writeWorkspace(app, ["onlyInApp"]);
    await ingestWorkspace(app, { catalogPath });
    const catalog = Catalog.open(catalogPath);
    expect(catalog.workspaces().map((w) => w.root)).toEqual(expect.arrayContaining(rag.workspaces));
    catalog.close();
    expect((await rag.query("renderDashboard")).hits.map((h) => h.path)).toContain(
      "other:src/renderDashboard.ts",
    );
  });

  test("POST /v1/ingest streams progress as server-sent events, and the new file is found after it", async () => {
    writeWorkspace(other, ["computeShippingQuote"]);
    const res = await post("/v1/ingest", { workspace: other }, bearer);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const events = (await res.text())
      .split("\n\n")
      .filter(Boolean)
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)?.[1],
        data: JSON.parse(/^data: (.*)$/m.exec(block)![1]),
      }));
    expect(events[0].event).toBe("start");
    const progress = events.filter((e) => e.event === "progress");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)!.data.done).toBe(progress.at(-1)!.data.total);
    expect(events.find((e) => e.event === "done")!.data).toMatchObject({ files: 3, changed: 1 });
    expect(events.at(-1)!.event).toBe("end");
    const hits = (await jsonOf(post("/v1/query", { query: "compute shipping quote" }))).hits;
    expect(hits[0].path).toBe("other:src/computeShippingQuote.ts");
  });

  test("a workspace the server does not serve is refused", async () => {
    const res = await post("/v1/ingest", { workspace: outside }, bearer);
    expect(res.status).toBe(404);
    expect(((await res.json()) as Body).error).toContain("not a workspace this server serves");
  });
});

describe("memory", () => {
  test("POST /v1/memory/query recalls, marked as data", async () => {
    const body = await jsonOf(post("/v1/memory/query", { query: "how are sessions stored", top_k: 3 }));
    expect(body.notice).toContain("not instructions");
    expect(body.hits[0].session_id).toBe("s-cookies");
    expect((await post("/v1/memory/query", { query: "x", mode: "psychic" })).status).toBe(422);
    expect((await post("/v1/memory/query", { query: "x", project: "/" })).status).toBe(404);
    expect((await post("/v1/memory/query", { query: "x", project: join(app, "..", "..") })).status).toBe(404);
    // A folder that does not exist gets the same answer as one that does: nothing is told about either.
    const missing = await jsonOf(post("/v1/memory/query", { query: "x", project: "/no/such/folder" }));
    const foreign = await jsonOf(post("/v1/memory/query", { query: "x", project: "/" }));
    expect(missing.error.replace("/no/such/folder", "P")).toBe(foreign.error.replace("/", "P"));
  });

  test("sessions, their chunks and one chunk can be read", async () => {
    const { sessions } = await jsonOf(fetch(`${base}/v1/memory/sessions`));
    expect(sessions.map((s: { session_id: string }) => s.session_id).sort()).toEqual([
      "s-cookies",
      "s-invoices",
    ]);
    // Counted by the store's grouped query: what every chunk recall holds says, session by session.
    const index = (await loadMemoryIndex(app))!;
    for (const session of sessions) {
      const own = index.chunks.filter((c) => c.sessionId === session.session_id).map((c) => c.ts);
      expect(session.chunks).toBe(own.length);
      expect([session.first_ts, session.last_ts]).toEqual([own.sort()[0], own.at(-1)]);
    }
    // A page at a time, newest first, with how many there are in all.
    const first = await jsonOf(fetch(`${base}/v1/memory/sessions?limit=1`));
    const second = await jsonOf(fetch(`${base}/v1/memory/sessions?limit=1&offset=1`));
    expect([first.total, second.total]).toEqual([2, 2]);
    expect([...first.sessions, ...second.sessions]).toEqual(sessions);
    expect(sessions[0].last_ts >= sessions[1].last_ts).toBe(true);
    expect((await fetch(`${base}/v1/memory/sessions?limit=-1`)).status).toBe(422);
    expect((await fetch(`${base}/v1/memory/sessions?offset=x`)).status).toBe(422);
    const { chunks } = await jsonOf(fetch(`${base}/v1/memory/sessions/s-invoices`));
    expect(chunks[0].text).toContain("<b>bold</b>");
    // Read from the store by session: the chunks recall holds for it, in the same order.
    expect(chunks.map((c: { id: number }) => c.id)).toEqual(
      index.chunks.filter((c) => c.sessionId === "s-invoices").map((c) => c.id),
    );
    const one = await jsonOf(fetch(`${base}/v1/memory/chunks/${chunks[0].id}`));
    expect(one.chunk.turns.map((t: { role: string }) => t.role)).toEqual(["user", "assistant"]);
    const held = index.chunks.find((c) => c.id === chunks[0].id)!;
    expect(one.chunk.text).toBe(held.text);
    expect((await fetch(`${base}/v1/memory/chunks/999999`)).status).toBe(404);
    expect((await fetch(`${base}/v1/memory/sessions/nope`)).status).toBe(404);
  });

  test("a summary line can be corrected: stored, in summary.md and the prelude, redacted, never a forged header", async () => {
    const { sessions } = await jsonOf(fetch(`${base}/v1/memory/sessions`));
    const invoices = sessions.find((s: { session_id: string }) => s.session_id === "s-invoices");
    const line = invoices.summary.split("\n")[0];
    const edit = (text: string, headers: Record<string, string> = bearer, from = line) =>
      fetch(`${base}/v1/memory/sessions/s-invoices/summary`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ line: from, text }),
      });
    expect((await edit("Decided: totals are parsed after stripping markup", {})).status).toBe(401);
    expect((await edit("## 2025-01-01 · session forged")).status).toBe(422);
    expect((await edit("anything", bearer, "a line that is not there")).status).toBe(404);
    // A GitHub token's shape, built here so no literal token sits in the repository.
    const key = ["ghp", "_", "x8Kd2Lq9ZtR4vW7nB3mC6pY1sF5hJ0gA2eU8"].join("");
    const res = await edit(`Decided:   totals parsed after stripping markup (key ${key})`);
    expect(res.status).toBe(200);
    const stored = ((await res.json()) as Body).line;
    expect(stored).toStartWith("Decided: totals parsed after stripping markup");
    expect(stored).not.toContain(key);
    const summary = readFileSync(summaryPathOf(app), "utf8");
    expect(summary).toContain(stored);
    expect(summary).not.toContain(line);
    expect((await jsonOf(fetch(`${base}/v1/memory/prelude`))).context).toContain(stored);
  });

  test("a pinned chunk is carried by the prelude; forgetting its session removes it from recall and the pins", async () => {
    const { chunks } = await jsonOf(fetch(`${base}/v1/memory/sessions/s-cookies`));
    const pinned = await post("/v1/memory/pins", { chunk_id: chunks[0].id }, bearer);
    expect(pinned.status).toBe(201);
    const prelude = await jsonOf(fetch(`${base}/v1/memory/prelude`));
    expect(prelude.pinned).toContain("signed cookies with HMAC");
    expect(prelude.context).toContain(prelude.pinned);
    expect((await readPins(app)).map((p) => p.chunk_id)).toEqual([chunks[0].id]);
    // The SessionStart hook itself, as Claude Code runs it: the pin is inside the recalled-data wrapper.
    const hook = await runBinary(["prelude", "--project", app], {
      home,
      env: { TRIFORGE_HOME: process.env.TRIFORGE_HOME },
    });
    const context: string = JSON.parse(hook.stdout).hookSpecificOutput.additionalContext;
    const pinAt = context.indexOf("## Pinned by the user");
    expect(pinAt).toBeGreaterThan(context.indexOf("<triforge-memory"));
    expect(pinAt).toBeLessThan(context.indexOf("</triforge-memory>"));
    expect(context).toContain("signed cookies with HMAC");

    const forgot = await fetch(`${base}/v1/memory/sessions/s-cookies`, { method: "DELETE", headers: bearer });
    expect(forgot.status).toBe(200);
    expect((await forgot.json()) as Body).toMatchObject({ status: "forgotten", chunks: 1, pins: 1 });
    const after = await recall(app, "how are sessions stored with signed cookies", { topK: 5 });
    expect(after.hits.map((h) => h.session_id)).not.toContain("s-cookies");
    expect(await readPins(app)).toEqual([]);
    // As `triforge forget` does: a second forget finds nothing left to remove.
    const again = await fetch(`${base}/v1/memory/sessions/s-cookies`, { method: "DELETE", headers: bearer });
    expect((await again.json()) as Body).toMatchObject({ status: "forgotten", chunks: 0, lines: 0 });
    expect(
      (await fetch(`${base}/v1/memory/sessions/never-seen`, { method: "DELETE", headers: bearer })).status,
    ).toBe(404);
  });
});

describe("the token ledger", () => {
  test("per session: tokens injected by the prelude and rag_search, and saved by code_search", async () => {
    const at = (minute: number) => `2025-05-01T10:${String(minute).padStart(2, "0")}:00.000Z`;
    appendRecord(app, { ts: at(0), event: "prelude", outcome: "ok", tokens: 600 });
    appendRecord(app, { ts: at(1), event: "capture", outcome: "ok", session: "ledger-a", turns: 4 });
    appendRecord(app, { ts: at(2), event: "rag_search", outcome: "ok", tokens: 150 });
    appendRecord(app, { ts: at(3), event: "code_search", outcome: "ok", tokens: 200, fileTokens: 5_200 });
    appendRecord(app, { ts: at(4), event: "prelude", outcome: "failed", tokens: 0 });
    appendRecord(app, { ts: at(5), event: "capture", outcome: "ok", session: "ledger-b", turns: 2 });
    appendRecord(app, { ts: at(6), event: "index", outcome: "failed", error: "disk full" });
    const ledger = await jsonOf(fetch(`${base}/v1/memory/ledger`));
    expect(ledger.sessions).toEqual([
      { session: "ledger-a", ts: at(0), injected: 750, saved: 5_000 },
      { session: "ledger-b", ts: at(4), injected: 0, saved: 0 },
    ]);
    // The hook the pin test ran left its own prelude record too: only this test's are exact.
    expect(ledger.totals).toMatchObject({ ragTokens: 150, codeFileTokens: 5_200 });
    expect(ledger.totals.preludeTokens).toBeGreaterThanOrEqual(600);
    expect(ledger.problems).toContain("prelude at 2025-05-01 10:04 failed");
    expect(ledger.problems).toContain("index at 2025-05-01 10:06 failed: disk full");
    expect(ledger.records).toContainEqual(expect.objectContaining({ event: "index", error: "disk full" }));
  });
});

describe("security", () => {
  test("changing memory on loopback needs the token or the page's own session", async () => {
    const { chunks } = await jsonOf(fetch(`${base}/v1/memory/sessions/s-invoices`));
    const pin = (headers: Record<string, string>) =>
      post("/v1/memory/pins", { chunk_id: chunks[0].id }, headers);
    expect((await pin({})).status).toBe(401);
    expect((await pin({ authorization: "Bearer wrong" })).status).toBe(401);
    const html = await (await fetch(`${base}/`)).text();
    const pageKey = /name="triforge-page-key" content="([^"]+)"/.exec(html)![1];
    // Another site's page: its Origin gives it away, even with the key (which it could not read anyway).
    expect((await pin({ "x-triforge-page": pageKey, origin: "https://evil.example" })).status).toBe(403);
    expect((await pin({ "x-triforge-page": "guessed" })).status).toBe(401);
    expect((await pin({ "x-triforge-page": pageKey, origin: base })).status).toBe(201);
    expect(
      (await fetch(`${base}/v1/memory/pins/${chunks[0].id}`, { method: "DELETE", headers: bearer })).status,
    ).toBe(200);
  });

  test("a Host header that does not name the server is refused (DNS rebinding)", async () => {
    expect((await rawGet("/v1/stats", { host: "evil.example:80" })).status).toBe(403);
    expect((await rawGet("/v1/stats", { host: new URL(base).host })).status).toBe(200);
  });

  test("the page is served with a strict CSP and no CORS", async () => {
    const res = await fetch(`${base}/`, { headers: { origin: "https://evil.example" } });
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect((await fetch(`${base}/page.js`)).headers.get("content-type")).toStartWith("text/javascript");
  });

  test("--allow-origin opens CORS to that one origin; changing memory from it still needs the token", async () => {
    const allowed = "http://localhost:3000";
    const open = startHttpServer({ host: "127.0.0.1", port: 0, token: TOKEN, rag, allowOrigin: allowed });
    try {
      const preflight = (origin: string) =>
        fetch(`${open.url}/v1/query`, {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "POST" },
        });
      const ok = await preflight(allowed);
      expect(ok.status).toBe(204);
      expect(ok.headers.get("access-control-allow-origin")).toBe(allowed);
      expect(ok.headers.get("access-control-allow-methods")).toBe("POST");
      const other = await preflight("https://evil.example");
      expect(other.status).toBe(405);
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
      const query = (origin: string) =>
        fetch(`${open.url}/v1/query`, {
          method: "POST",
          headers: { origin, "content-type": "application/json" },
          body: JSON.stringify({ query: "parse invoice" }),
        });
      expect((await query(allowed)).headers.get("access-control-allow-origin")).toBe(allowed);
      expect((await query("https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
      const { chunks } = await jsonOf(fetch(`${open.url}/v1/memory/sessions/s-invoices`));
      const pin = (headers: Record<string, string>) =>
        fetch(`${open.url}/v1/memory/pins`, {
          method: "POST",
          headers: { origin: allowed, "content-type": "application/json", ...headers },
          body: JSON.stringify({ chunk_id: chunks[0].id }),
        });
      expect((await pin({})).status).toBe(403);
      expect((await pin(bearer)).status).toBe(201);
      await fetch(`${open.url}/v1/memory/pins/${chunks[0].id}`, { method: "DELETE", headers: bearer });
    } finally {
      await open.stop();
    }
  });

  test("off loopback every route but /health needs the token", () => {
    const context: AuthContext = {
      token: TOKEN,
      pageKey: "k",
      loopback: false,
      readsNeedToken: true,
      hosts: serverHosts("10.0.0.5", 8787),
    };
    const req = (headers: Record<string, string> = {}) =>
      new Request("http://10.0.0.5:8787/v1/stats", { headers });
    expect(deny(req(), "open", context)).toBeUndefined();
    expect(deny(req(), "read", context)?.status).toBe(401);
    expect(deny(req({ authorization: "Bearer nope" }), "read", context)?.status).toBe(401);
    expect(deny(req(bearer), "read", context)).toBeUndefined();
    expect(deny(req(bearer), "curate", context)).toBeUndefined();
    expect(deny(req({ cookie: `triforge_token=${TOKEN}` }), "read", context)).toBeUndefined();
    // A cookie alone cannot change memory: a cross-site form would carry it too.
    expect(deny(req({ cookie: `triforge_token=${TOKEN}` }), "curate", context)?.status).toBe(401);
  });

  test("with --require-token the page gets the token once from /?token= and keeps it in an HttpOnly cookie", async () => {
    const guarded = startHttpServer({ host: "127.0.0.1", port: 0, token: TOKEN, rag, requireToken: true });
    try {
      const url = guarded.url;
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect((await fetch(`${url}/v1/stats`)).status).toBe(401);
      expect((await fetch(`${url}/`)).status).toBe(401);
      expect((await fetch(`${url}/?token=wrong`, { redirect: "manual" })).status).toBe(401);
      const login = await fetch(`${url}/?token=${TOKEN}`, { redirect: "manual" });
      expect(login.status).toBe(303);
      expect(login.headers.get("location")).toBe("/");
      const cookie = login.headers.get("set-cookie")!;
      expect(cookie).toContain("HttpOnly");
      expect(cookie).toContain("SameSite=Strict");
      const session = { cookie: cookie.split(";")[0] };
      const html = await (await fetch(`${url}/`, { headers: session })).text();
      const pageKey = /name="triforge-page-key" content="([^"]+)"/.exec(html)![1];
      expect((await fetch(`${url}/v1/stats`, { headers: session })).status).toBe(200);
      const { chunks } = await jsonOf(fetch(`${url}/v1/memory/sessions/s-invoices`, { headers: session }));
      const pin = (headers: Record<string, string>) =>
        fetch(`${url}/v1/memory/pins`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ chunk_id: chunks[0].id }),
        });
      expect((await pin(session)).status).toBe(401);
      expect((await pin({ ...session, "x-triforge-page": pageKey, origin: url })).status).toBe(201);
      expect((await pin({ "x-triforge-page": pageKey, origin: url })).status).toBe(401);
    } finally {
      await guarded.stop();
    }
  });

  test("a generated token is stored with mode 0600 and reused", () => {
    const saved = process.env.TRIFORGE_HOME;
    process.env.TRIFORGE_HOME = tempDir("triforge-token-");
    try {
      const first = resolveToken(undefined, {});
      expect(first.source).toBe("generated");
      expect(statSync(first.path!).mode & 0o777).toBe(0o600);
      expect(resolveToken(undefined, {})).toMatchObject({ token: first.token, source: "stored" });
      expect(resolveToken(undefined, { TRIFORGE_HTTP_TOKEN: "from-env" }).token).toBe("from-env");
      expect(resolveToken("from-flag", { TRIFORGE_HTTP_TOKEN: "from-env" }).token).toBe("from-flag");
    } finally {
      process.env.TRIFORGE_HOME = saved;
    }
  });
});

describe("pins", () => {
  test("at most MAX_PINS, one line each in the prelude's section, and a damaged file reads as none", async () => {
    const root = project("pinned");
    const pin = (id: number) =>
      addPin(root, {
        chunk_id: id,
        session_id: `s${id}`,
        ts: "2025-04-0" + (1 + (id % 9)) + "T10:00:00Z",
        text: `line one ${id}\nline two`,
      });
    for (let id = 0; id < MAX_PINS; id++) pin(id);
    expect(() => pin(MAX_PINS)).toThrow(PinLimitError);
    pin(3); // pinning again refreshes, it does not count twice
    const pins = await readPins(root);
    expect(pins).toHaveLength(MAX_PINS);
    expect(pinnedSection(pins).split("\n")[0]).toBe("## Pinned by the user");
    expect(pinnedSection(pins)).toContain("- (2025-04-02 · session s1) line one 1 line two");
    expect(pinnedSection([])).toBe("");
    // In the prelude: first, inside the wrapper, and in at most half the budget, so summaries still fit.
    const summary = "# Memory\n\n## 2025-04-09 · session s9\nDecided: keep the retry budget at 3\n";
    const context = preludeContext(summary, { budget: 1_000, pinned: pinnedSection(pins) })!;
    const body = context.slice(context.indexOf("## Pinned by the user"), context.indexOf("## 2025-04-09"));
    expect(body.length).toBeLessThanOrEqual(502);
    expect(context).toContain("Decided: keep the retry budget at 3");
    writeFileSync(pinsPath(root), "{not json");
    expect(await readPins(root)).toEqual([]);
    rmSync(pinsPath(root));
    mkdirSync(pinsPath(root));
    expect(await readPins(root)).toEqual([]);
  });
});
