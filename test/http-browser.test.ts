/**
 * The web page in a real browser: Debian's chromium, headless, driven by playwright-core (both installed
 * by .ci/run). Search code and memory with the keyboard, forget a session and delete one chunk and see
 * recall lose them, pin a chunk into the prelude, re-index with live progress, and read it on a narrow
 * window. Screenshots go to tmp/test-output/http-browser/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendRecord } from "../src/home/ledger.ts";
import { type RunningServer, startHttpServer } from "../src/http/server.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { recall } from "../src/memory/recall/recall.ts";
import { ingestWorkspace, RagService } from "../src/rag/service.ts";
import { ROOT } from "./support/helpers.ts";
import { appendRecords, exchange, memoryHome } from "./support/memory-helpers.ts";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = join(ROOT, "tmp", "test-output", "http-browser");
const SETUP_TIMEOUT_MS = 60_000;

async function playwright(): Promise<typeof import("playwright-core") | undefined> {
  try {
    return await import("playwright-core");
  } catch {
    return undefined;
  }
}
const driver = existsSync(CHROMIUM) ? await playwright() : undefined;
if (!driver)
  console.warn(
    `http-browser: skipped — needs ${CHROMIUM} (Debian chromium) and the playwright-core package; .ci/run installs both`,
  );

/** The page of `app` served on a free port, and a headless chromium to open it with. */
async function servePage(app: string, catalogPath: string) {
  const server = startHttpServer({
    host: "127.0.0.1",
    port: 0,
    token: "browser-test-token",
    rag: new RagService([app], { catalogPath }),
  });
  const browser = await driver!.chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  return { server, browser };
}

describe.skipIf(!driver)("the web page in chromium", () => {
  const { home, project } = memoryHome();
  const app = project("webapp");
  let server: RunningServer;
  // biome-ignore lint/suspicious/noExplicitAny: playwright's types are loaded only when it is installed.
  let browser: any;
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  let page: any;
  let promptAnswer = "";

  // Waits by selector, not by a function run in the page: the page's CSP (no eval) refuses those.
  const waitForText = (selector: string, text: RegExp) =>
    page.locator(selector, { hasText: text }).first().waitFor();

  const write = (name: string, body: string) => {
    mkdirSync(join(app, "src"), { recursive: true });
    writeFileSync(join(app, "src", `${name}.ts`), body);
  };

  // Indexing, ingesting and starting Chromium take over bun's 5 s hook default on a loaded machine.
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    write(
      "signSessionCookie",
      "export function signSessionCookie(value: string, key: string) {\n  return hmac(key, value);\n}\n",
    );
    write("parseInvoice", "export function parseInvoice(text: string) {\n  return text.split('\\n');\n}\n");
    appendRecords(app, [
      ...exchange(
        "s-cookies",
        "How do we store sessions?",
        "We decided on signed cookies with HMAC, no Redis.",
        1,
      ),
      ...exchange(
        "s-markup",
        'The invoice preview shows <img src=x onerror="window.__pwned=1"> in totals',
        "parseInvoice now escapes <script>alert(1)</script> before rendering the invoice totals.",
        2,
      ),
      ...exchange(
        "s-deploys",
        "Should the nightly canary deploy use the blue-green switch?",
        "Yes: the canary deploy flips the blue-green switch after the smoke checks pass.",
        3,
      ),
      ...exchange("s-deploys", "And the rollback?", "The rollback restores the previous release tag.", 3),
    ]);
    await indexProject(app, { llm: null });
    appendRecord(app, { ts: "2025-03-01T09:00:00.000Z", event: "prelude", outcome: "ok", tokens: 640 });
    appendRecord(app, {
      ts: "2025-03-01T09:01:00.000Z",
      event: "capture",
      outcome: "ok",
      session: "s-cookies",
      turns: 2,
    });
    appendRecord(app, {
      ts: "2025-03-01T09:02:00.000Z",
      event: "code_search",
      outcome: "ok",
      tokens: 300,
      fileTokens: 2_300,
    });
    const catalogPath = join(home, "catalog.db");
    await ingestWorkspace(app, { catalogPath });
    ({ server, browser } = await servePage(app, catalogPath));
    page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    // confirm() is accepted; prompt() gets `promptAnswer`.
    page.on("dialog", (dialog: { type(): string; accept(text?: string): Promise<void> }) =>
      dialog.type() === "prompt" ? dialog.accept(promptAnswer) : dialog.accept(),
    );
    await page.goto(server.url);
    await waitForText("#stats", /code chunks/);
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("code search from the keyboard shows path:line, highlighted terms and copy buttons", async () => {
    await page.focus("#query");
    await page.keyboard.type("sign session cookie");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#results li.result");
    expect(await page.textContent("#results li.result .where")).toBe("src/signSessionCookie.ts:1-3");
    const marks: string[] = await page
      .locator("#results li.result")
      .first()
      .locator("mark")
      .allTextContents();
    // The query's words, wherever they stand inside an identifier (signSessionCookie).
    expect(marks.map((m) => m.toLowerCase())).toEqual(expect.arrayContaining(["sign", "session", "cookie"]));
    expect(
      await page.locator("#results li.result").first().locator(".actions button").allTextContents(),
    ).toEqual(["Copy path:line", "Copy snippet"]);
    await page.screenshot({ path: join(SHOTS, "code-search.png"), fullPage: true });
  });

  test("the Memory tab (arrow keys) shows memories as text, never as markup", async () => {
    await page.fill("#query", "invoice totals preview");
    await page.focus("#tab-code");
    await page.keyboard.press("ArrowRight");
    expect(await page.getAttribute("#tab-memory", "aria-selected")).toBe("true");
    await waitForText("#search-note", /recalled data, not instructions/);
    const text = await page.textContent("#results");
    expect(text).toContain('<img src=x onerror="window.__pwned=1">');
    expect(await page.$$("#results img, #results script")).toHaveLength(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    await page.screenshot({ path: join(SHOTS, "memory-search.png"), fullPage: true });
  });

  test("the token ledger is a chart: injected and saved per session", async () => {
    await waitForText("#ledger .ledger-row", /s-cookie/);
    expect(await page.locator("#ledger .ledger-row").first().textContent()).toContain("640 injected");
    expect(await page.locator("#ledger .ledger-row").first().textContent()).toContain("2000 saved");
    // The larger bar is the full width of its track, the other in proportion.
    const widths = await page
      .locator("#ledger .bar")
      .evaluateAll((bars: { style: { width: string } }[]) => bars.map((b) => b.style.width));
    expect(widths).toEqual(["32%", "100%"]);
  });

  test("a chunk pinned on the page is in the prelude", async () => {
    await page.click('li.session[data-session="s-markup"] button:text("Chunks")');
    await page.click('li.session[data-session="s-markup"] .chunks button:text("Pin to prelude")');
    await waitForText("#prelude", /Pinned by the user/);
    expect(await page.textContent("#prelude")).toContain("parseInvoice now escapes");
  });

  test("a summary line corrected on the page is what the prelude shows", async () => {
    promptAnswer = "Decided: the invoice preview escapes markup before rendering totals";
    await page.click('li.session[data-session="s-markup"] ol.summary li:first-child button');
    await waitForText("#sessions-note", /^edited a line/);
    await waitForText('li.session[data-session="s-markup"] ol.summary', /escapes markup before rendering/);
    await waitForText("#prelude", /escapes markup before rendering totals/);
  });

  test("forgetting a session on the page takes it out of recall", async () => {
    const query = "how do we store sessions signed cookies";
    expect((await recall(app, query)).hits.map((h) => h.session_id)).toContain("s-cookies");
    await page.click('li.session[data-session="s-cookies"] button:text("Forget session")');
    await waitForText("#sessions-note", /^forgot session/);
    // The list is drawn again after the note: the session's item goes then.
    await page.locator('li.session[data-session="s-cookies"]').waitFor({ state: "detached" });
    expect((await recall(app, query)).hits.map((h) => h.session_id)).not.toContain("s-cookies");
    await page.screenshot({ path: join(SHOTS, "after-forget.png"), fullPage: true });
  });

  test("deleting one chunk on the page takes it out of recall and keeps the session's others", async () => {
    const query = "canary deploy blue-green switch";
    const texts = async () => (await recall(app, query, { topK: 5 })).hits.map((h) => h.text).join("\n");
    expect(await texts()).toContain("blue-green switch");
    await page.click('li.session[data-session="s-deploys"] button:text("Chunks")');
    const chunk = page.locator('li.session[data-session="s-deploys"] .chunks li', { hasText: "blue-green" });
    await chunk.locator('button:text("Delete chunk")').click();
    await waitForText("#sessions-note", /^forgot chunk \d+: 2 chat-log lines/);
    await chunk.waitFor({ state: "detached" });
    expect(await texts()).not.toContain("blue-green");
    // The session's other chunk stays, on the page and in recall.
    await waitForText('li.session[data-session="s-deploys"] .chunks', /previous release tag/);
    expect((await recall(app, "rollback previous release tag")).hits[0].text).toContain(
      "previous release tag",
    );
    await page.screenshot({ path: join(SHOTS, "after-delete-chunk.png"), fullPage: true });
  });

  test("re-index shows live progress, and the new file is searchable after it", async () => {
    for (let i = 0; i < 40; i++)
      write(`generatedHelper${i}`, `export const generatedHelper${i} = (x: number) => x + ${i};\n`);
    write(
      "computeShippingQuote",
      "export function computeShippingQuote(weight: number) {\n  return weight * 3;\n}\n",
    );
    // Every text the status line shows while the re-index runs, recorded in the page.
    await page.evaluate(`(() => {
      const status = document.getElementById("reindex-status");
      window.statuses = [];
      // One record per change, each with the text node it added: changes made in one task are not merged.
      new MutationObserver((records) => {
        for (const record of records) for (const node of record.addedNodes) window.statuses.push(node.textContent);
      }).observe(status, { childList: true });
    })()`);
    await page.click("#reindex");
    await waitForText("#reindex-status", /^indexed/);
    const statuses: string[] = await page.evaluate("window.statuses");
    expect(statuses.some((s) => /^indexing \d+ \/ \d+/.test(s))).toBe(true);
    expect(statuses.at(-1)).toMatch(/^indexed \d+ files/);
    await page.screenshot({ path: join(SHOTS, "reindex.png"), fullPage: true });
    await page.click("#tab-code");
    await page.fill("#query", "compute shipping quote");
    await page.keyboard.press("Enter");
    await waitForText("#results li.result .where", /^src\/computeShippingQuote\.ts/);
  });

  test("a narrow window needs no sideways scrolling", async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    await page.screenshot({ path: join(SHOTS, "narrow.png"), fullPage: true });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(361);
  });
});

describe.skipIf(!driver)("the session list of a long memory in chromium", () => {
  const { home, project } = memoryHome();
  const app = project("long-memory");
  let server: RunningServer;
  // biome-ignore lint/suspicious/noExplicitAny: playwright's types are loaded only when it is installed.
  let browser: any;

  beforeAll(async () => {
    // More sessions than a page shows (100): the newest come first, the rest behind "Show more".
    appendRecords(
      app,
      Array.from({ length: 130 }, (_, i) =>
        exchange(
          `s-${String(i).padStart(3, "0")}`,
          `Question ${i} about the ledger?`,
          `Answer ${i}.`,
          1 + (i % 28),
        ),
      ).flat(),
    );
    await indexProject(app, { llm: null });
    const catalogPath = join(home, "catalog.db");
    ({ server, browser } = await servePage(app, catalogPath));
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("shows the newest 100 sessions, then the rest a page at a time", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    await page.goto(server.url);
    await page.locator("#sessions-note", { hasText: /^100 of 130 sessions, newest first/ }).waitFor();
    expect(await page.locator("#sessions li.session").count()).toBe(100);
    // In the API's order, newest first.
    const response = await fetch(`${server.url}/v1/memory/sessions`, {
      headers: { authorization: "Bearer browser-test-token" },
    });
    const listed = ((await response.json()) as { sessions: { session_id: string }[] }).sessions.map(
      (s) => s.session_id,
    );
    const ids = (): Promise<string[]> =>
      page
        .locator("#sessions li.session")
        .evaluateAll((items: { getAttribute(name: string): string | null }[]) =>
          items.map((item) => item.getAttribute("data-session")),
        );
    expect(await ids()).toEqual(listed.slice(0, 100));
    await page.click("#sessions-more button");
    await page.locator("#sessions-note", { hasText: /^130 sessions, newest first/ }).waitFor();
    expect(await page.locator("#sessions-more button").count()).toBe(0);
    expect(await ids()).toEqual(listed);
  });
});
