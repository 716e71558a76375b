/**
 * `triforge ingest` and `triforge serve --http` as users run them: the compiled binary, an isolated
 * home, claw-rag-service's environment names, and its client's request (`POST /v1/query` without a token).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBinary, serveHttp, tempDir } from "./support/helpers.ts";

const home = tempDir("triforge-http-cli-");
const catalog = join(home, "rag", "index.sqlite");

function workspace(name: string, functions: string[]): string {
  const root = join(home, name);
  mkdirSync(join(root, "lib"), { recursive: true });
  for (const fn of functions)
    writeFileSync(
      join(root, "lib", `${fn}.py`),
      `def ${fn}(value):\n    """${fn} of the value."""\n    return value\n`,
    );
  return root;
}
const alpha = workspace("alpha", ["normalize_address", "geocode_street"]);
const beta = workspace("beta", ["render_invoice_pdf"]);

const running: { kill(signal?: number | NodeJS.Signals): void }[] = [];
afterAll(() => {
  for (const proc of running) proc.kill("SIGKILL");
});

/** Starts `serve --http` and waits for the line that says where it listens. */
async function startServe(args: string[], env: Record<string, string> = {}) {
  const served = await serveHttp(args, { cwd: home, home, env });
  running.push(served.proc);
  return served;
}

function childrenOf(pid: number): number[] {
  return Bun.spawnSync(["ps", "-o", "pid=", "--ppid", String(pid)])
    .stdout.toString()
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
}

/** A process's user + system CPU time in clock ticks (/proc/PID/stat fields 14 and 15). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("triforge ingest", () => {
  test("ingests several workspaces into one catalog, each on its own", async () => {
    const first = await runBinary(["ingest", "-w", alpha, "-w", beta, "--db", catalog], { home });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`ingest: ${alpha}: files=2`);
    expect(first.stdout).toContain(`ingest: ${beta}: files=1`);
    // Again with only one of them, through claw-rag-service's variable: nothing changed, nothing removed.
    const again = await runBinary(["ingest", "-w", alpha, "--json"], { home, env: { CLAW_RAG_DB: catalog } });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ root: alpha, files: 2, changed: 0, removed: 0 });
  });

  test("a missing workspace or none at all is a clear error", async () => {
    const none = await runBinary(["ingest"], { home });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("give at least one -w DIR");
    const missing = await runBinary(["ingest", "-w", join(home, "nope"), "--db", catalog], { home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("does not exist");
    expect(missing.stderr).not.toContain("    at ");
  });
});

describe("triforge serve --http", () => {
  test("serves the catalog's workspaces to a claw-rag-service client, and the embedded page", async () => {
    const { proc, url, stderr } = await startServe([], { CLAW_RAG_DB: catalog });
    expect(url).toStartWith("http://127.0.0.1:");
    expect(stderr).toContain(alpha);
    expect(stderr).toContain(beta);
    expect(await (await fetch(`${url}/health`)).text()).toBe("ok");
    // What claw-analog's retrieve_context sends: no Authorization header, `query` and `top_k`.
    const res = await fetch(`${url}/v1/query`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "render the invoice as a pdf", top_k: 3 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { phase: string; hits: { path: string }[] };
    expect(body.phase).toBe("1-sqlite");
    expect(body.hits[0].path).toBe("beta:lib/render_invoice_pdf.py");
    const page = await (await fetch(`${url}/`)).text();
    expect(page).toContain('<script src="/page.js"');
    expect(await (await fetch(`${url}/page.js`)).text()).toContain("textContent");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  test("--workers answers code queries from worker processes, as the server itself does, and stops them", async () => {
    const queries = ["render the invoice as a pdf", "geocode a street", "normalize_address"];
    const ask = async (url: string, query: string) =>
      (await fetch(`${url}/v1/query`, {
        method: "POST",
        headers: { "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ query, top_k: 3 }),
      }).then((r) => r.json())) as { hits: unknown[] };
    const single = await startServe([], { CLAW_RAG_DB: catalog });
    const pooled = await startServe(["--workers", "2"], { CLAW_RAG_DB: catalog });
    expect(pooled.stderr).toContain("2 query workers");
    const children = childrenOf(pooled.proc.pid);
    expect(children).toHaveLength(2);
    const before = children.map(cpuTicks);
    const asked = Array.from({ length: 20 }, () => queries).flat();
    const answers = await Promise.all(asked.map((q) => ask(pooled.url, q)));
    expect(answers.every((a) => a.hits.length > 0)).toBe(true);
    for (const query of queries) {
      const expected = await ask(single.url, query);
      for (const [i, q] of asked.entries()) if (q === query) expect(answers[i]).toEqual(expected);
    }
    // The workers answered them (their CPU time grew).
    expect(children.map(cpuTicks).some((ticks, i) => ticks > before[i])).toBe(true);
    for (const { proc } of [single, pooled]) {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
    expect(children.filter(isAlive)).toEqual([]);
    const bad = await runBinary(["serve", "--http", "--workers", "many"], { home });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--workers must be a whole number");
  });

  test("--workers: a worker that dies is replaced and the server goes on answering; a port in use is refused", async () => {
    const pooled = await startServe(["--workers", "1"], { CLAW_RAG_DB: catalog });
    const [child] = childrenOf(pooled.proc.pid);
    process.kill(child, "SIGKILL");
    const query = () =>
      fetch(`${pooled.url}/v1/query`, {
        method: "POST",
        headers: { "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ query: "geocode a street", top_k: 1 }),
      });
    // A query the dying worker held fails; the next ones are answered (by the server until a worker is back).
    let answered = false;
    for (let tries = 0; tries < 100 && !answered; tries++)
      answered = await query().then(
        (res) => res.status === 200,
        () => Bun.sleep(20).then(() => false),
      );
    expect(answered).toBe(true);
    for (let i = 0; i < 10; i++) expect((await query()).status).toBe(200);
    // Restarted: a new worker, which loads the index and takes queries again.
    let replaced: number[] = [];
    for (let tries = 0; tries < 100 && replaced.length === 0; tries++) {
      await Bun.sleep(100);
      replaced = childrenOf(pooled.proc.pid).filter((pid) => pid !== child);
    }
    expect(replaced).toHaveLength(1);
    expect((await query()).status).toBe(200);
    // Another server on the same port is refused, with workers as without.
    const port = new URL(pooled.url).port;
    const clash = await runBinary(["serve", "--http", "--port", port, "--workers", "1"], {
      home,
      env: { CLAW_RAG_DB: catalog },
    });
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    pooled.proc.kill("SIGTERM");
    expect(await pooled.proc.exited).toBe(0);
    expect(replaced.filter(isAlive)).toEqual([]);
  });

  test("--workers: a workspace re-ingested through the server is answered from by its worker", async () => {
    const root = workspace("gamma", ["parse_ledger"]);
    const db = join(home, "rag", "gamma.sqlite");
    const pooled = await startServe(["--workers", "1", "--workspace", root, "--db", db]);
    const token = readFileSync(join(home, ".claude", "triforge", "http", "token"), "utf8").trim();
    writeFileSync(
      join(root, "lib", "settle_invoice_batch.py"),
      "def settle_invoice_batch(batch):\n    return batch\n",
    );
    const ingest = await fetch(`${pooled.url}/v1/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: "{}",
    });
    expect(await ingest.text()).toContain("event: end");
    // The server ingested; the worker reloads the index file (it checks it at most once a second).
    const firstPaths = async () =>
      Promise.all(
        Array.from({ length: 12 }, async () => {
          const res = await fetch(`${pooled.url}/v1/query`, {
            method: "POST",
            headers: { "content-type": "application/json", connection: "close" },
            body: JSON.stringify({ query: "settle_invoice_batch", top_k: 1 }),
          });
          return ((await res.json()) as { hits: { path: string }[] }).hits[0]?.path;
        }),
      );
    let paths = await firstPaths();
    for (let tries = 0; tries < 40 && paths.some((p) => p !== "lib/settle_invoice_batch.py"); tries++) {
      await Bun.sleep(250);
      paths = await firstPaths();
    }
    expect(new Set(paths)).toEqual(new Set(["lib/settle_invoice_batch.py"]));
    pooled.proc.kill("SIGTERM");
    expect(await pooled.proc.exited).toBe(0);
  });

  test("an option of the other mode is a usage error, not ignored", async () => {
    const port = await runBinary(["serve", "--port", "9000"], { home });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port is an option of 'serve --http'");
    const project = await runBinary(["serve", "--http", "--project", alpha], { home });
    expect(project.code).toBe(2);
    expect(project.stderr).toContain("serves --workspace folders");
  });

  test("a port in use is a clear error", async () => {
    const { url } = await startServe(["--workspace", alpha]);
    const port = new URL(url).port;
    const clash = await runBinary(["serve", "--http", "--port", port, "--workspace", alpha], { home });
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
  });
});
