import { afterAll, describe, expect, test } from "bun:test";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { chunkRecords, MAX_CHUNK_CHARS } from "../src/memory/chunking.ts";
import { forgetSession } from "../src/memory/forget.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { capHitText, hitExcerpt, MAX_HIT_CHARS } from "../src/memory/recall/excerpt.ts";
import { closeWarmIndexes, formatRecalled, recall } from "../src/memory/recall/recall.ts";
import { memoryStatus } from "../src/memory/status.ts";
import { appendRecords, dumpGraph, memoryHome } from "./support/memory-helpers.ts";

const { project } = memoryHome();
afterAll(closeWarmIndexes);

/** One user turn followed by `replies` assistant replies of ~120 characters (the audit's 10 KB chunk). */
function longExchange(session: string, replies: number): ChatRecord[] {
  const ts = "2025-04-01T09:00:00.000Z";
  const records: ChatRecord[] = [
    {
      ts,
      session_id: session,
      role: "user",
      text: "Walk me through the release steps.",
      uuid: `${session}-u`,
    },
  ];
  for (let i = 0; i < replies; i++) {
    const topic = i === 60 ? "the zanzibarWidget checksum is verified against the manifest" : "step done";
    records.push({
      ts,
      session_id: session,
      role: "assistant",
      text: `Reply ${i}: ${topic}; ${"the build keeps going and logs progress. ".repeat(2)}`,
      uuid: `${session}-a${i}`,
    });
  }
  return records;
}

describe("chunk grouping", () => {
  test("a reply written before its prompt (Stop ran before the transcript held the turn) joins its prompt", () => {
    const record = (uuid: string, role: "user" | "assistant", ts: string, session = "s1"): ChatRecord => ({
      ts,
      session_id: session,
      role,
      text: `${role} text of ${uuid}`,
      uuid,
    });
    const records = [
      record("reply1", "assistant", "2025-04-01T09:00:05.000Z"),
      record("other", "user", "2025-04-01T09:00:01.000Z", "s2"),
      record("prompt1", "user", "2025-04-01T09:00:00.000Z"),
      record("prompt2", "user", "2025-04-01T09:01:00.000Z"),
      record("reply2", "assistant", "2025-04-01T09:01:04.000Z"),
    ];
    const chunks = chunkRecords(records);
    expect(chunks.map((c) => c.turns.map((t) => t.uuid))).toEqual([
      ["prompt1", "reply1"],
      ["other"],
      ["prompt2", "reply2"],
    ]);
    // File order when the times are equal: the old behaviour for records that carry one time.
    const sameTime = records.map((r) => ({ ...r, ts: "2025-04-01T09:00:00.000Z" }));
    expect(chunkRecords(sameTime).map((c) => c.turns.map((t) => t.uuid))).toEqual([
      ["reply1"],
      ["other"],
      ["prompt1"],
      ["prompt2", "reply2"],
    ]);
  });
});

describe("chunk size cap", () => {
  test("an over-long exchange is cut at turn boundaries into chunks within MAX_CHUNK_CHARS", () => {
    const records = longExchange("long", 85);
    const total = records.reduce((n, r) => n + r.text.length, 0);
    expect(total).toBeGreaterThan(8_000);
    const chunks = chunkRecords(records);
    expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(total / MAX_CHUNK_CHARS));
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(MAX_CHUNK_CHARS);
      // Every turn is whole and its span points at its own text.
      for (const t of c.turns) {
        const record = records.find((r) => r.uuid === t.uuid);
        expect(c.text.slice(t.start, t.end)).toBe(record?.text.trim() ?? "");
      }
    }
    // All turns, in order, once each; the first piece opens with the user turn.
    expect(chunks.flatMap((c) => c.turns.map((t) => t.uuid))).toEqual(records.map((r) => r.uuid));
    expect(chunks[0].turns[0].role).toBe("user");
    // Stable: chunking the same records again gives the same hashes, all distinct.
    expect(chunkRecords(records).map((c) => c.hash)).toEqual(chunks.map((c) => c.hash));
    expect(new Set(chunks.map((c) => c.hash)).size).toBe(chunks.length);
  });

  test("a group that fits is one chunk with the same hash as ever; one long turn stays whole", () => {
    const short = longExchange("short", 3);
    expect(chunkRecords(short)).toHaveLength(1);
    const huge: ChatRecord = { ...short[1], uuid: "huge", text: "x".repeat(MAX_CHUNK_CHARS * 2) };
    const chunks = chunkRecords([short[0], huge, short[2]]);
    expect(chunks.map((c) => c.turns.map((t) => t.uuid))).toEqual([["short-u"], ["huge"], ["short-a1"]]);
  });

  test("indexing the long exchange is idempotent, recall returns a cut excerpt, forget removes every piece", async () => {
    const root = project("long-exchange");
    appendRecords(root, longExchange("long", 85));
    const first = await indexProject(root, { llm: null });
    expect(first.chunks).toBeGreaterThan(1);
    const before = dumpGraph(root);
    expect((await indexProject(root, { llm: null })).chunks).toBe(0);
    expect(dumpGraph(root)).toEqual(before);
    for (const mode of ["hybrid", "bm25"] as const) {
      const { hits } = await recall(root, "zanzibarWidget checksum", { mode, topK: 3 });
      expect(hits[0].text).toContain("zanzibarWidget checksum");
      for (const h of hits) expect(h.text.length).toBeLessThanOrEqual(MAX_HIT_CHARS);
    }
    expect(await forgetSession(root, "long")).toMatchObject({ chunks: first.chunks });
    expect((await memoryStatus(root)).chunks).toBe(0);
  });
});

describe("hit excerpts", () => {
  const turnsOf = (texts: string[], roles: string[]) => {
    let text = "";
    const turns = texts.map((t, i) => {
      if (text) text += "\n\n";
      const start = text.length;
      text += t;
      return { role: roles[i], start, end: text.length };
    });
    return { text, turns };
  };

  test("a short chunk is shown whole, each turn labelled", () => {
    const { text, turns } = turnsOf(["Why?", "Because."], ["user", "assistant"]);
    expect(hitExcerpt(text, turns, "why")).toBe("[user] Why?\n[assistant] Because.");
  });

  test("a long chunk is cut around the best-matching turn, whole turns, with markers", () => {
    const filler = (i: number) => `Turn ${i}: ${"nothing to see in this paragraph. ".repeat(8)}`;
    const texts = Array.from({ length: 30 }, (_, i) =>
      i === 17 ? "The flux capacitor needs 1.21 gigawatts." : filler(i),
    );
    const { text, turns } = turnsOf(
      texts,
      texts.map((_, i) => (i === 0 ? "user" : "assistant")),
    );
    const excerpt = hitExcerpt(text, turns, "how much power does the flux capacitor need?");
    expect(excerpt.length).toBeLessThanOrEqual(MAX_HIT_CHARS);
    expect(excerpt).toContain("[assistant] The flux capacitor needs 1.21 gigawatts.");
    expect(excerpt).toMatch(/^\[… \d+ earlier turn\(s\) of this chunk cut\]/);
    expect(excerpt).toMatch(/\[… \d+ later turn\(s\) of this chunk cut\]$/);
    // The turn after the match is shown (answers often follow the turn that matches).
    expect(excerpt).toContain("Turn 18:");
  });

  test("one turn longer than the cap is windowed around the query's first word, label kept", () => {
    const long = `${"log line ok\n".repeat(300)}ERROR segfault in renderChart\n${"log line ok\n".repeat(300)}`;
    const { text, turns } = turnsOf(["What broke?", long], ["user", "assistant"]);
    const excerpt = hitExcerpt(text, turns, "segfault");
    expect(excerpt.length).toBeLessThanOrEqual(MAX_HIT_CHARS);
    expect(excerpt).toContain("ERROR segfault in renderChart");
    expect(excerpt).toContain("[assistant] …");
    expect(excerpt).toStartWith("[… 1 earlier turn(s) of this chunk cut]");
  });

  test("formatRecalled caps any hit's text with a marker", () => {
    expect(capHitText("short")).toBe("short");
    const formatted = formatRecalled([
      { text: "y".repeat(10_000), role: "user", ts: "t", session_id: "s", score: 1 },
    ]);
    expect(formatted.length).toBeLessThan(MAX_HIT_CHARS + 800);
    expect(formatted).toContain("characters shown]");
  });
});
