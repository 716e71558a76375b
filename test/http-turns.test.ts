import { describe, expect, test } from "bun:test";
import { TurnQueue } from "../src/http/turns.ts";

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe("TurnQueue", () => {
  test("runs jobs one at a time, in the order they were handed in", async () => {
    const queue = new TurnQueue();
    const events: string[] = [];
    // Earlier jobs wait longer: run at once, they would finish in the reverse order.
    const results = await Promise.all(
      [40, 30, 20, 10, 0].map((ms, i) =>
        queue.run(async () => {
          events.push(`start ${i}`);
          await sleep(ms);
          events.push(`end ${i}`);
          return i * 10;
        }),
      ),
    );
    expect(results).toEqual([0, 10, 20, 30, 40]);
    expect(events).toEqual([0, 1, 2, 3, 4].flatMap((i) => [`start ${i}`, `end ${i}`]));
  });

  test("gives the event loop a turn between two jobs", async () => {
    const queue = new TurnQueue();
    const events: string[] = [];
    const first = queue.run(async () => {
      events.push("first");
      // What the loop has waiting when a job ends (in the server: requests read from sockets).
      setImmediate(() => events.push("loop"));
    });
    const second = queue.run(async () => {
      events.push("second");
    });
    await Promise.all([first, second]);
    expect(events).toEqual(["first", "loop", "second"]);
  });

  test("a job's error goes to its caller and the next job still runs", async () => {
    const queue = new TurnQueue();
    const thrown = queue.run((): Promise<number> => {
      throw new Error("before any await");
    });
    const rejected = queue.run(async () => {
      await sleep(1);
      throw new Error("after an await");
    });
    const after = queue.run(async () => "still runs");
    await expect(thrown).rejects.toThrow("before any await");
    await expect(rejected).rejects.toThrow("after an await");
    expect(await after).toBe("still runs");
  });
});
