/**
 * Records flagged `review: true` by capture are cleaned by the indexer before their text reaches the
 * store, summary.md or an LLM: with an LLM (a fake OpenAI server on 127.0.0.1, real SDK and HTTP) the
 * model sees only masked candidates and its verdict is applied; without one — or when its answer is
 * unusable — the strict entropy pass redacts every candidate.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chatLogLockPath, indexLockPath, projectDataDir, storePath, summaryPath } from "../src/home/paths.ts";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { indexProject, offsetFingerprint } from "../src/memory/indexer.ts";
import { isLocked, tryLock } from "../src/memory/lock.ts";
import { closeWarmIndexes, recall } from "../src/memory/recall/recall.ts";
import { redact } from "../src/privacy/index.ts";
import { openStoreForWrite } from "../src/store/open.ts";
import { chatReply, startFakeOpenAI } from "./support/fakes/openai.ts";
import { ROOT } from "./support/helpers.ts";
import {
  appendRecords,
  chatLog,
  dumpGraph,
  exchange,
  fakeOpenAiOptions,
  isNer,
  isReview,
  isSummary,
  isTriples,
  memoryHome,
} from "./support/memory-helpers.ts";

const { project } = memoryHome();
const fake = startFakeOpenAI({ fallback: null });
afterAll(async () => {
  closeWarmIndexes();
  await fake.stop();
});

/** Two strings redaction left near trigger words: an identifier and a generated-looking secret. */
const IDENTIFIER = "buildNumberGenerator2024";
const SECRET = "xK9pQ2mV7rT4zL8n";
const FLAGGED = `token was wrongly set; also see ${IDENTIFIER} for auth handling of ${SECRET}`;

function records(session: string): ChatRecord[] {
  const cleaned = redact(FLAGGED);
  expect(cleaned.review).toBe(true); // capture would store exactly this
  return [
    {
      ts: "2025-05-01T10:00:00Z",
      session_id: session,
      role: "user",
      text: cleaned.text,
      uuid: `${session}-u`,
      review: true,
    },
    {
      ts: "2025-05-01T10:01:00Z",
      session_id: session,
      role: "assistant",
      // Not flagged: the strict pass must not touch it.
      text: "Rotated it; the release script now reads it from the vault, see ReleaseTokenLoader2024.",
      uuid: `${session}-a`,
    },
  ];
}

/** Everything the index keeps as text: chunk texts, phrase labels, fact predicates. */
function storedText(root: string): string {
  const db = new Database(storePath(root), { readonly: true });
  try {
    const column = (sql: string) => (db.query(sql).all() as { t: string }[]).map((r) => r.t).join("\n");
    return [
      column("SELECT text AS t FROM chunks"),
      column("SELECT label AS t FROM entities"),
      column("SELECT phrase AS t FROM entities"),
      column("SELECT predicate AS t FROM facts"),
    ].join("\n");
  } finally {
    db.close();
  }
}

const llmOptions = fakeOpenAiOptions(fake.url);

/** Replies for the rest of the indexing (OpenIE, summary) so only the review is under test. */
function scriptIndexing(): void {
  fake.enqueue(
    chatReply(JSON.stringify({ named_entities: ["release script"] }), { when: isNer }),
    chatReply(JSON.stringify({ triples: [] }), { when: isTriples }),
    chatReply("Discussed a leaked value. Decided: rotate it. Files: none.", { when: isSummary }),
  );
}

describe("flagged records", () => {
  test("without an LLM the strict entropy pass redacts every candidate before anything is stored", async () => {
    const root = project("review-strict");
    appendRecords(root, records("strict"));
    const result = await indexProject(root, { llm: null });
    expect(result).toMatchObject({ records: 2, chunks: 1 });
    const stored = storedText(root);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain(IDENTIFIER);
    expect(stored).toContain("[REDACTED:entropy]");
    expect(stored).toContain("ReleaseTokenLoader2024"); // the unflagged record is untouched
    const summary = readFileSync(summaryPath(root), "utf8");
    expect(summary).not.toContain(SECRET);
    expect(summary).not.toContain(IDENTIFIER);
  });

  test("with an LLM only masked candidates are sent, and the ones it calls secrets are redacted", async () => {
    const root = project("review-llm", { llm: "openai" });
    appendRecords(root, records("llm"));
    const before = fake.chatRequests().length;
    // Candidate 0 is the identifier, 1 the secret (order of appearance).
    fake.enqueue(chatReply(JSON.stringify({ secrets: [1] }), { when: isReview }));
    scriptIndexing();
    const result = await indexProject(root, { llmOptions });
    expect(result).toMatchObject({ chunks: 1, llmFailures: 0 });
    const sent = fake.chatRequests().slice(before);
    const reviews = sent.filter(isReview);
    expect(reviews).toHaveLength(1);
    expect(reviews[0].rawBody).toContain("xK…8n");
    expect(reviews[0].rawBody).not.toContain(IDENTIFIER);
    // The secret never left the machine whole, in the review or in OpenIE and summary calls.
    for (const request of sent) expect(request.rawBody).not.toContain(SECRET);
    const stored = storedText(root);
    expect(stored).not.toContain(SECRET);
    expect(stored).toContain("[REDACTED:secret]");
    expect(stored).toContain(IDENTIFIER); // judged not a secret, so kept searchable
    expect(readFileSync(summaryPath(root), "utf8")).not.toContain(SECRET);
  });

  test("an unusable LLM answer falls back to the strict pass and is logged", async () => {
    const root = project("review-bad-answer", { llm: "openai" });
    appendRecords(root, records("bad"));
    const before = fake.chatRequests().length;
    fake.enqueue(chatReply("Looks fine to me!", { when: isReview }));
    scriptIndexing();
    await indexProject(root, { llmOptions });
    const sent = fake.chatRequests().slice(before);
    for (const request of sent) expect(request.rawBody).not.toContain(SECRET);
    const stored = storedText(root);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain(IDENTIFIER);
    expect(stored).toContain("[REDACTED:entropy]");
    expect(readFileSync(join(projectDataDir(root), "errors.log"), "utf8")).toContain("secret review");
  });
});

describe("chats.jsonl after cleaning", () => {
  const lines = (root: string) => readFileSync(chatLog(root), "utf8").split("\n").filter(Boolean);

  test("flagged lines are rewritten in place with the cleaned text and no flag; the rest is untouched", async () => {
    const root = project("review-rewrite");
    appendRecords(
      root,
      exchange("before", "Which cache does renderChart use?", "The LRU one in src/ui/cache.ts."),
    );
    await indexProject(root, { llm: null }); // a saved offset > 0, so the rewrite happens past it
    appendRecords(root, records("rewrite"));
    appendRecords(root, exchange("after", "Is the vault loader done?", "Yes, merged this morning."));
    // A flagged record written without a uuid: the indexer derives one from its content.
    const noUuid = { ...records("nouuid")[0], uuid: undefined };
    writeFileSync(chatLog(root), `${JSON.stringify(noUuid)}\n`, { flag: "a" });
    const original = lines(root);
    await indexProject(root, { llm: null });
    const rewritten = lines(root);
    expect(rewritten).toHaveLength(original.length);
    const log = rewritten.join("\n");
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('"review"');
    expect(log).toContain("[REDACTED:entropy]");
    rewritten.forEach((line, i) => {
      if (original[i].includes('"review"')) {
        const { text, review, ...fields } = JSON.parse(line);
        const { text: _old, review: _flag, ...originalFields } = JSON.parse(original[i]);
        expect(review).toBeUndefined();
        expect(text).toContain("[REDACTED:entropy]");
        expect(fields).toMatchObject({ ...originalFields, uuid: expect.any(String) });
      } else expect(line).toBe(original[i]);
    });
    // The saved offset follows the rewrite: a new line is indexed once, nothing twice, and a full rescan
    // (the store deleted) rebuilds the same chunks from the cleaned lines.
    appendRecords(root, exchange("later", "Ship it?", "Shipped."));
    expect(await indexProject(root, { llm: null })).toMatchObject({ records: 2, chunks: 1, badLines: 0 });
    const graph = dumpGraph(root);
    expect(new Set(graph.turns).size).toBe(graph.turns.length);
    expect(graph.turns).toHaveLength(rewritten.length + 2);
    closeWarmIndexes();
    const { rmSync } = await import("node:fs");
    rmSync(storePath(root));
    await indexProject(root, { llm: null });
    expect(dumpGraph(root).chunks).toEqual(graph.chunks);
    expect((await recall(root, "vault loader")).hits[0]?.session_id).toBe("after");
  });

  test("the rewrite waits for the chat-log lock, so a capture append in flight is kept", async () => {
    const root = project("review-rewrite-race");
    appendRecords(root, records("race"));
    const capture = tryLock(chatLogLockPath(root), "capture")!;
    const indexer = Bun.spawn(["bun", join(ROOT, "test/support/memory-index-child.ts"), root], {
      env: process.env,
      stdout: "pipe",
    });
    for (let i = 0; i < 200 && !isLocked(indexLockPath(root)); i++) await Bun.sleep(25);
    await Bun.sleep(300);
    expect(readFileSync(chatLog(root), "utf8")).toContain('"review":true');
    appendRecords(root, exchange("race", "appended by capture under the lock", "kept"));
    capture.release();
    expect(await indexer.exited).toBe(0);
    const log = readFileSync(chatLog(root), "utf8");
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('"review"');
    expect(log).toContain("appended by capture under the lock");
    // The appended exchange comes after what the indexer read: the next run indexes it.
    expect(await indexProject(root, { llm: null })).toMatchObject({ records: 2, chunks: 1 });
  });

  test("lines flagged and indexed by an older version are rewritten once, by a one-time full read", async () => {
    const root = project("review-stale");
    appendRecords(root, records("stale"));
    appendRecords(
      root,
      exchange("plain", "Which port does the API use?", "Port 8080, set in src/api/server.ts."),
    );
    const flaggedLog = readFileSync(chatLog(root), "utf8");
    await indexProject(root, { llm: null });
    const graph = dumpGraph(root);
    // What an older version left: the flagged lines on disk, the offset at their end, no sweep yet.
    const asOlderVersion = async (swept: boolean) => {
      writeFileSync(chatLog(root), flaggedLog);
      const size = Buffer.byteLength(flaggedLog);
      const store = openStoreForWrite(root);
      await store.setState({
        offset: size,
        offsetCheck: offsetFingerprint(chatLog(root), size),
        reviewSwept: swept,
      });
      store.close();
    };
    await asOlderVersion(true);
    expect(await indexProject(root, { llm: null })).toMatchObject({ records: 0, chunks: 0 });
    expect(readFileSync(chatLog(root), "utf8")).toContain(SECRET); // swept stores do not read again
    await asOlderVersion(false);
    expect(await indexProject(root, { llm: null })).toMatchObject({ records: 0, chunks: 0 });
    const log = readFileSync(chatLog(root), "utf8");
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('"review"');
    expect(dumpGraph(root)).toEqual(graph);
    // The offset followed the rewrite: a new exchange is indexed once, nothing else.
    appendRecords(root, exchange("plain", "And the admin port?", "8081."));
    expect(await indexProject(root, { llm: null })).toMatchObject({ records: 2, chunks: 1, badLines: 0 });
  });
});
