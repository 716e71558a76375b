/**
 * Pinned memory: chunks a person chose (on the web page) for the SessionStart prelude to always carry.
 * Kept in the project's data folder as `pins.json` — a copy of each pinned chunk's (already redacted) text,
 * so the prelude reads one small file and never opens the store.
 * PERF: meant for the prelude's path: reading uses Bun.file, and node:fs is required only by the writers.
 */
import { dirname } from "node:path";
import { pinsPath } from "../home/paths.ts";

export interface Pin {
  /** The store's chunk id. */
  chunk_id: number;
  session_id: string;
  ts: string;
  text: string;
  pinned_at: string;
}

/** Pins kept at most: with PIN_CHARS each they fill about half the prelude's default budget. */
export const MAX_PINS = 8;
/** Characters of a chunk kept in its pin (the prelude shows this much of it). */
export const PIN_CHARS = 200;

function fs(): typeof import("node:fs") {
  return require("node:fs") as typeof import("node:fs");
}

/** Only entries of the right shape count: the file may have been edited by hand. */
function validPins(parsed: unknown): Pin[] {
  return Array.isArray(parsed)
    ? parsed.filter(
        (p): p is Pin =>
          typeof p === "object" &&
          p !== null &&
          typeof (p as Pin).chunk_id === "number" &&
          typeof (p as Pin).session_id === "string" &&
          typeof (p as Pin).text === "string",
      )
    : [];
}

/**
 * The project's pins, oldest first; none when the file is missing or unreadable. Read through Bun.file,
 * so the prelude pays no node:fs for it.
 */
export async function readPins(projectRoot: string): Promise<Pin[]> {
  // Whatever is in pins.json's place (nothing, garbage, a folder), the prelude still runs without pins.
  try {
    const file = Bun.file(pinsPath(projectRoot));
    // PERF: a (sync) size, not an awaited exists(): missing and empty both mean no pins.
    if (file.size === 0) return [];
    return validPins(JSON.parse(await file.text()));
  } catch {
    return [];
  }
}

/** readPins for the writers below, which hold no await between reading and writing. */
function readPinsNow(projectRoot: string): Pin[] {
  const { existsSync, readFileSync } = fs();
  const file = pinsPath(projectRoot);
  if (!existsSync(file)) return [];
  try {
    return validPins(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    return [];
  }
}

function writePins(projectRoot: string, pins: Pin[]): void {
  const { mkdirSync, renameSync, writeFileSync } = fs();
  const file = pinsPath(projectRoot);
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(pins, null, 1)}\n`);
  renameSync(temporary, file);
}

export class PinLimitError extends Error {}

/** Pins a chunk (again: its text is refreshed). Throws PinLimitError past MAX_PINS. */
export function addPin(projectRoot: string, chunk: Omit<Pin, "pinned_at" | "text"> & { text: string }): Pin {
  const pins = readPinsNow(projectRoot).filter((p) => p.chunk_id !== chunk.chunk_id);
  if (pins.length >= MAX_PINS)
    throw new PinLimitError(`at most ${MAX_PINS} chunks can be pinned; unpin one first`);
  const text = chunk.text.length > PIN_CHARS ? `${chunk.text.slice(0, PIN_CHARS - 1)}…` : chunk.text;
  const pin: Pin = { ...chunk, text, pinned_at: new Date().toISOString() };
  writePins(projectRoot, [...pins, pin]);
  return pin;
}

/** Unpins one chunk; whether it was pinned. */
export function removePin(projectRoot: string, chunkId: number): boolean {
  const pins = readPinsNow(projectRoot);
  const kept = pins.filter((p) => p.chunk_id !== chunkId);
  if (kept.length !== pins.length) writePins(projectRoot, kept);
  return kept.length !== pins.length;
}

/** Drops the pins of a forgotten session: a forgotten text must not live on in the prelude. */
export function removeSessionPins(projectRoot: string, sessionId: string): number {
  const pins = readPinsNow(projectRoot);
  const kept = pins.filter((p) => p.session_id !== sessionId);
  if (kept.length !== pins.length) writePins(projectRoot, kept);
  return pins.length - kept.length;
}

/** The pins as the prelude shows them: one `- (date · session id) text` item each, or "" for none. */
export function pinnedSection(pins: Pin[]): string {
  if (pins.length === 0) return "";
  const items = pins.map(
    (p) => `- (${p.ts.slice(0, 10)} · session ${p.session_id}) ${p.text.replace(/\s+/g, " ").trim()}`,
  );
  return ["## Pinned by the user", ...items].join("\n");
}
