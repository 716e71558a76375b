/**
 * This thread's CPU time, which other processes on a shared machine barely disturb (wall time there
 * is the load's): benchmarks that time one phase or one query read it around the work.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";

/** This thread's CPU time in ms (clock_gettime(CLOCK_THREAD_CPUTIME_ID)), or undefined off Linux. */
export function threadCpuClock(): (() => number) | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const libc = dlopen("libc.so.6", {
      clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    });
    const CLOCK_THREAD_CPUTIME_ID = 3;
    const time = new BigInt64Array(2);
    const at = ptr(time);
    return () => {
      libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, at);
      return Number(time[0]) * 1000 + Number(time[1]) / 1e6;
    };
  } catch {
    return undefined;
  }
}
