/**
 * Jobs run one at a time, in the order they were handed in, each in its own turn of the event loop.
 *
 * Why: a server answering code queries on its own thread runs each search synchronously. Left to
 * itself, Bun's loop takes every request ready on its sockets and runs their searches back to back,
 * one batch per wake-up; a request that arrives during a batch is read only after it, and then in
 * the socket order of the loop's ready list, not of arrival, so under load one in a few waits
 * through two whole batches (in the server, 50 clients: p99 twice the p50, 49 later requests
 * answered first). With a turn between searches the loop reads what has arrived after every search,
 * the queue holds the requests in arrival order, and a request waits for those before it only.
 */
export class TurnQueue {
  private readonly waiting: (() => Promise<void>)[] = [];
  private running = false;

  /** Runs `job` after every job handed in before it has settled; its result or error is returned. */
  run<T>(job: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // Through a promise, so a job that throws before its first await still settles and frees the queue.
      this.waiting.push(() => Promise.resolve().then(job).then(resolve, reject));
      if (!this.running) {
        this.running = true;
        this.next();
      }
    });
  }

  private next(): void {
    const job = this.waiting.shift();
    if (!job) {
      this.running = false;
      return;
    }
    // The job's own errors went to its caller (run's reject); setImmediate gives the loop its turn.
    job().then(() => setImmediate(() => this.next()));
  }
}
