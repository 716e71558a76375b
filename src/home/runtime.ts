/**
 * Whether this process is a `bun build --compile` binary: its entry then runs from Bun's embedded file
 * system (`/$bunfs/…` on Unix, `B:\~BUN\…` on Windows), not from a file on disk.
 */
export function isCompiled(entry: string = Bun.main): boolean {
  return entry.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(entry);
}
