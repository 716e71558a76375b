/**
 * summary.md after each index run (memory/summary.ts refreshSummaryFile): new summaries appended to
 * the file while the store's older ones stand as the file holds them, else the file written whole;
 * either way the same bytes and the same replaced decisions as a file rendered from every summary.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { summaryPath } from "../src/home/paths.ts";
import { indexProject } from "../src/memory/indexer.ts";
import { replacedDecisionKeys, replacedSidecarPath } from "../src/memory/prelude.ts";
import { refreshSummaryFile, renderSummary, type SummaryStore } from "../src/memory/summary.ts";
import { openStoreForWrite } from "../src/store/open.ts";
import type { SummaryEntry } from "../src/store/types.ts";
import { tempDir } from "./support/helpers.ts";
import { appendRecords, exchange, memoryHome } from "./support/memory-helpers.ts";

type Row = SummaryEntry & { id: number };

/** A store of summary rows in memory, ordered as SqliteMemoryStore orders them (ts, then row id). */
function rowStore(rows: Row[], changes: { count: number }, id = "store-a"): SummaryStore {
  const ordered = (list: Row[]) =>
    [...list].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id - b.id));
  const plain = ({ id: _id, ...entry }: Row): SummaryEntry => entry;
  return {
    summaries: async () => ordered(rows).map(plain),
    summariesAfter: (after) => ordered(rows.filter((r) => r.id > after)),
    decisionSummaries: () => ordered(rows.filter((r) => r.text.includes("Decided:"))).map(plain),
    summaryChanges: () => changes.count,
    summaryMarks: () => ({
      id: Math.max(0, ...rows.map((r) => r.id)),
      ts:
        rows
          .map((r) => r.ts)
          .sort()
          .at(-1) ?? "",
    }),
    storeId: () => id,
  };
}

let nextId = 0;
function row(day: number, session: string, text: string): Row {
  const date = `2025-04-${String(day).padStart(2, "0")}`;
  return { id: ++nextId, sessionId: session, date, ts: `${date}T10:00:00.000Z`, text, source: "extractive" };
}

/** What summary.md and its sidecar should be for `rows`, whichever way they were written. */
async function expectCurrent(path: string, store: SummaryStore) {
  const text = readFileSync(path, "utf8");
  expect(text).toBe(renderSummary(await store.summaries()));
  const sidecar = JSON.parse(readFileSync(replacedSidecarPath(path), "utf8"));
  expect(sidecar.keys).toEqual(replacedDecisionKeys(text));
  expect(sidecar.bytes).toBe(Bun.file(path).size);
  return sidecar.keys as string[];
}

describe("summary.md kept up to the store", () => {
  test("appended run by run, it is the file rendered from every summary, replaced decisions included", async () => {
    const path = join(tempDir(), "summary.md");
    const rows: Row[] = [];
    const changes = { count: 0 };
    const store = rowStore(rows, changes);
    const runs: Row[][] = [
      [
        row(
          1,
          "s1",
          "Discussed: sessions.\nDecided:\n- We'll store sessions in Redis (`src/auth/session.ts`).",
        ),
        row(1, "s2", "Discussed: the chart legend."),
      ],
      [row(2, "s3", "Discussed: retries.\nDecided:\n- Add a retry with backoff in src/jobs/worker.ts.")],
      [
        row(
          3,
          "s4",
          "Discussed: sessions again.\nDecided:\n- Sessions will be signed cookies (HMAC) in `src/auth/session.ts`, no Redis.",
        ),
        row(3, "s5", "Discussed: nothing new."),
      ],
    ];
    let keys: string[] = [];
    for (const added of runs) {
      rows.push(...added);
      await refreshSummaryFile(path, store);
      keys = await expectCurrent(path, store);
    }
    // The last run's decision replaced the first run's: found across appended runs.
    expect(keys).toEqual([
      "## 2025-04-01 · session s1\nWe'll store sessions in Redis (`src/auth/session.ts`).",
    ]);
  });

  test("a file its sidecar vouches for is extended, not rendered again; one changed beside it is written whole", async () => {
    const path = join(tempDir(), "summary.md");
    const rows: Row[] = [row(1, "a", "Discussed: one.")];
    const store = rowStore(rows, { count: 0 });
    await refreshSummaryFile(path, store);
    // Text the store does not hold, with the sidecar brought to the file's new size and time: the
    // next run keeps it, so it did append (and did not read the older summaries back).
    writeFileSync(path, `${readFileSync(path, "utf8").trimEnd()} (kept)\n`);
    const sidecarPath = replacedSidecarPath(path);
    const sidecar = JSON.parse(readFileSync(sidecarPath, "utf8"));
    writeFileSync(
      sidecarPath,
      JSON.stringify({ ...sidecar, bytes: Bun.file(path).size, modified: Bun.file(path).lastModified }),
    );
    rows.push(row(2, "b", "Discussed: two."));
    await refreshSummaryFile(path, store);
    expect(readFileSync(path, "utf8")).toContain("Discussed: one. (kept)\n\n## 2025-04-02 · session b");
    // Edited without the sidecar following (a person, another tool): written whole from the store.
    writeFileSync(path, `${readFileSync(path, "utf8")}stray line\n`);
    rows.push(row(3, "c", "Discussed: three."));
    await refreshSummaryFile(path, store);
    await expectCurrent(path, store);
  });

  test("a change to an older summary, a summary that sorts before the file's last, or another store: written whole", async () => {
    const path = join(tempDir(), "summary.md");
    const rows: Row[] = [row(5, "a", "Discussed: five."), row(6, "b", "Discussed: six.")];
    const changes = { count: 0 };
    await refreshSummaryFile(path, rowStore(rows, changes));
    // An older summary edited (the store counts it) and a new one: the edit shows.
    rows[0].text = "Discussed: five, corrected.";
    changes.count++;
    rows.push(row(7, "c", "Discussed: seven."));
    await refreshSummaryFile(path, rowStore(rows, changes));
    await expectCurrent(path, rowStore(rows, changes));
    expect(readFileSync(path, "utf8")).toContain("five, corrected");
    // An imported session older than the file's last: in its place by time, not at the end.
    rows.push(row(4, "old", "Discussed: four."));
    await refreshSummaryFile(path, rowStore(rows, changes));
    await expectCurrent(path, rowStore(rows, changes));
    expect(readFileSync(path, "utf8").indexOf("session old")).toBeLessThan(
      readFileSync(path, "utf8").indexOf("session a"),
    );
    // The same rows under another store's name (a store rebuilt in place): written whole.
    rows[1].text = "Discussed: six, in the rebuilt store.";
    await refreshSummaryFile(path, rowStore(rows, changes, "store-b"));
    expect(readFileSync(path, "utf8")).toContain("six, in the rebuilt store");
  });

  test("the store counts every changed or deleted summary, so a run after a change it did not write out shows it", async () => {
    const { project } = memoryHome();
    const root = project("summary-changes");
    appendRecords(root, exchange("first", "How is the build configured?", "It reads bunfig.toml.", 1));
    await indexProject(root, { llm: null });
    const store = openStoreForWrite(root);
    try {
      const before = store.summaryChanges();
      // As a crash between the store's change and summary.md's rewrite would leave it.
      expect(
        await store.replaceSummaryLine(
          "first",
          "Discussed: How is the build configured?",
          "Discussed: the build, corrected.",
        ),
      ).toBe(1);
      expect(store.summaryChanges()).toBe(before + 1);
    } finally {
      store.close();
    }
    appendRecords(root, exchange("second", "And the tests?", "They run with bun test.", 2));
    await indexProject(root, { llm: null });
    const text = readFileSync(summaryPath(root), "utf8");
    expect(text).toContain("Discussed: the build, corrected.");
    expect(text).toContain("session second");
    // A deleted summary (forget) is counted too.
    const again = openStoreForWrite(root);
    try {
      const before = again.summaryChanges();
      await again.forgetSession("first");
      expect(again.summaryChanges()).toBe(before + 1);
    } finally {
      again.close();
    }
  });
});
