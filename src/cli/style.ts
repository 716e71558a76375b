/**
 * Colour for people at a terminal: paths, scores and headings stand out. Off when the stream is not a
 * terminal (a pipe, a file, an agent reading the output), when NO_COLOR is set (no-color.org), or on a
 * dumb terminal; FORCE_COLOR turns it on anyway. Not for hook paths: a hook's output is read by a program.
 */
export interface Style {
  path(text: string): string;
  score(text: string): string;
  heading(text: string): string;
  ok(text: string): string;
  warn(text: string): string;
}

const plain: Style = {
  path: (t) => t,
  score: (t) => t,
  heading: (t) => t,
  ok: (t) => t,
  warn: (t) => t,
};

const paint = (code: string) => (text: string) => `\x1b[${code}m${text}\x1b[0m`;

const coloured: Style = {
  path: paint("36"),
  score: paint("33"),
  heading: paint("1"),
  ok: paint("32"),
  warn: paint("31;1"),
};

export function colourWanted(
  stream: { isTTY?: boolean } = process.stdout,
  env: Record<string, string | undefined> = process.env,
): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return true;
  return Boolean(stream.isTTY) && env.TERM !== "dumb";
}

/** The style for output written to `stream`. */
export function styleFor(
  stream: { isTTY?: boolean } = process.stdout,
  env: Record<string, string | undefined> = process.env,
): Style {
  return colourWanted(stream, env) ? coloured : plain;
}
