/**
 * One progress bar for the commands that index (`index`, `code-index`): `label [####----] 12/40 unit`
 * redrawn in place on one line of stderr. Only a terminal gets one; piped or redirected output stays
 * clean for the program reading it.
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
