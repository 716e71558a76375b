/** The terminal progress bar `index` and `code-index` share (src/cli/progress.ts). */
import { describe, expect, test } from "bun:test";
import { terminalProgress } from "../src/cli/progress.ts";

/** A stream that records what is written, terminal or not, and a clock the test moves. */
function fakeTerminal(isTTY: boolean) {
  const writes: string[] = [];
  let time = 0;
  return {
    writes,
    stream: { isTTY, write: (text: string) => writes.push(text) > 0 },
    now: () => time,
    advance: (ms: number) => {
      time += ms;
    },
  };
}

describe("terminalProgress", () => {
  test("output that is not a terminal gets no bar at all", () => {
    const piped = fakeTerminal(false);
    expect(terminalProgress("chunks", piped.stream, piped.now)).toBeUndefined();
    expect(piped.writes).toEqual([]);
  });

  test("a terminal gets one line redrawn in place: label, bar, count and unit, then erased", () => {
    const tty = fakeTerminal(true);
    const bar = terminalProgress("files indexed", tty.stream, tty.now);
    bar?.update(5, 20, "indexing");
    expect(tty.writes).toEqual([`\r\x1b[2Kindexing [${"#".repeat(8)}${"-".repeat(22)}] 5/20 files indexed`]);
    tty.advance(100);
    bar?.update(20, 20);
    expect(tty.writes.at(-1)).toBe(`\r\x1b[2K[${"#".repeat(30)}] 20/20 files indexed`);
    bar?.clear();
    expect(tty.writes.at(-1)).toBe("\r\x1b[2K");
  });

  test("redraws are throttled, but the last step is always drawn; clear with nothing drawn writes nothing", () => {
    const tty = fakeTerminal(true);
    const bar = terminalProgress("chunks", tty.stream, tty.now);
    bar?.clear();
    expect(tty.writes).toEqual([]);
    for (let done = 1; done < 100; done++) bar?.update(done, 100);
    expect(tty.writes).toHaveLength(1); // the clock did not move: only the first step was drawn
    bar?.update(100, 100);
    expect(tty.writes).toHaveLength(2);
    expect(tty.writes[1]).toEndWith("100/100 chunks");
  });
});
