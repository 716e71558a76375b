import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";

/**
 * A lock file per project and purpose: created with O_EXCL, holding the owner's pid, host and a nonce.
 * A crashed owner does not hold it forever: a lock whose process is gone (same host), or whose
 * heartbeat (the file's mtime, touched while held) is older than STALE_AFTER_MS, is taken over.
 */
export const STALE_AFTER_MS = 60_000;
const HEARTBEAT_MS = 10_000;

interface LockInfo {
  pid: number;
  host: string;
  nonce: string;
  purpose: string;
  since: string;
}

export interface ProjectLock {
  readonly path: string;
  release(): void;
}

function readLock(path: string): { info: LockInfo | undefined; mtimeMs: number } | undefined {
  try {
    const mtimeMs = statSync(path).mtimeMs;
    let info: LockInfo | undefined;
    try {
      info = JSON.parse(readFileSync(path, "utf8"));
    } catch {
      info = undefined; // written half-way by a process that died: stale once its mtime ages
    }
    return { info, mtimeMs };
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the holder of a lock is certainly gone. */
function isStale(lock: { info: LockInfo | undefined; mtimeMs: number }, now = Date.now()): boolean {
  if (now - lock.mtimeMs > STALE_AFTER_MS) return true;
  return lock.info !== undefined && lock.info.host === hostname() && !processAlive(lock.info.pid);
}

/** Whether someone holds the lock right now (used to skip spawning a second background indexer). */
export function isLocked(path: string): boolean {
  const lock = readLock(path);
  return lock !== undefined && !isStale(lock);
}

/**
 * Takes the lock, or returns undefined at once when a live process holds it. The caller must call
 * release(); the heartbeat timer is unref'd so it never keeps a process alive.
 */
export function tryLock(path: string, purpose: string): ProjectLock | undefined {
  mkdirSync(dirname(path), { recursive: true });
  const nonce = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  const info: LockInfo = {
    pid: process.pid,
    host: hostname(),
    nonce,
    purpose,
    since: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      try {
        writeSync(fd, JSON.stringify(info));
      } catch (error) {
        // A full disk: an empty lock file would hold off every writer for STALE_AFTER_MS.
        closeSync(fd);
        unlinkSync(path);
        throw error;
      }
      closeSync(fd);
      return held(path, nonce);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const current = readLock(path);
    // Gone since our create failed (its holder released it): try to create ours again. Renaming it away
    // here would move a lock a third process has just created, and giving that back could replace a
    // fourth's: two holders at once (a capture stress test saw one line twice in ~1,600).
    if (!current) continue;
    if (!isStale(current)) return undefined;
    // Take a stale lock over by renaming it away: of two processes racing here only one rename succeeds
    // for a given file, and the loser then finds the winner's fresh lock.
    const aside = `${path}.stale-${nonce}`;
    try {
      renameSync(path, aside);
      const moved = readLock(aside);
      if (moved && !isStale(moved)) {
        // We moved a fresh lock (someone took over between our read and our rename): give it back.
        renameSync(aside, path);
        return undefined;
      }
      unlinkSync(aside);
    } catch {
      // Someone else moved it first; try to create ours.
    }
  }
  return undefined;
}

function held(path: string, nonce: string): ProjectLock {
  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // The lock file is gone; release() will notice nothing to remove.
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    path,
    release() {
      clearInterval(heartbeat);
      try {
        if ((JSON.parse(readFileSync(path, "utf8")) as LockInfo).nonce === nonce) unlinkSync(path);
      } catch {
        // Already gone or taken over after we stalled: nothing of ours to remove.
      }
    },
  };
}

/** tryLock, retried every `pollMs` until `waitMs` has passed (a writer waiting for a running indexer). */
export async function waitForLock(
  path: string,
  purpose: string,
  waitMs = 15_000,
  pollMs = 100,
): Promise<ProjectLock | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const lock = tryLock(path, purpose);
    if (lock || Date.now() > deadline) return lock;
    await Bun.sleep(pollMs);
  }
}
