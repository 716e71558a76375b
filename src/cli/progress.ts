/**
 * Progress for the long commands (`index`, `code-index`, `forget`, `import`): a bar
 * `label [####----] 12/40 unit` for work that counts its steps, a status line for work that does not,
 * each redrawn in place on one line of stderr. Only a terminal gets them; piped or redirected output
 * stays clean for the program reading it. Not for hook paths (`isTTY` opens the stream).
 */

/** Redraws at most this often: a progress bar must not cost more than the work it shows. */
const REDRAW_MS = 50;
const BAR_WIDTH = 30;

export interface ProgressBar {
  /** Shows `done` of `total`; the last step (done = total) is always drawn, earlier ones at most every REDRAW_MS. */
  update(done: number, total: number, label?: string): void;
  /** Erases the bar, leaving the line for what the command prints next. */
  clear(): void;
}

/** A bar counting `unit` on `stream` (stderr by default), or undefined when the stream is not a terminal. */
export function terminalProgress(
  unit: string,
  stream: Pick<NodeJS.WriteStream, "isTTY" | "write"> = process.stderr,
  now: () => number = () => performance.now(),
): ProgressBar | undefined {
  if (!stream.isTTY) return undefined;
  let drawnAt = Number.NEGATIVE_INFINITY;
  let drawn = false;
  return {
    update(done, total, label) {
      const at = now();
      if (done < total && at - drawnAt < REDRAW_MS) return;
      drawnAt = at;
      const filled = total ? Math.min(BAR_WIDTH, Math.round((BAR_WIDTH * done) / total)) : BAR_WIDTH;
      const bar = `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}]`;
      stream.write(`\r\x1b[2K${label ? `${label} ` : ""}${bar} ${done}/${total} ${unit}`);
      drawn = true;
    },
    clear() {
      if (drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}

export interface StatusLine {
  /** Replaces the line's text. */
  set(text: string): void;
  /** Erases the line. */
  clear(): void;
}

/**
 * One line saying what a job that cannot count its steps is doing (`forgetting session …`), redrawn in
 * place on stderr and erased when done; on anything but a terminal, nothing at all.
 */
export function terminalStatus(
  stream: Pick<NodeJS.WriteStream, "isTTY" | "write"> = process.stderr,
): StatusLine | undefined {
  if (!stream.isTTY) return undefined;
  let drawn = false;
  return {
    set(text) {
      stream.write(`\r\x1b[2K${text}`);
      drawn = true;
    },
    clear() {
      if (drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
