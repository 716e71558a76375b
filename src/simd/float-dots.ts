/**
 * A WebAssembly SIMD kernel for a scan that needs every row's score exactly as JavaScript computes it
 * (memory recall's dense scores, which min-max normalisation and fusion read whole): each float32
 * row's dot product with the query in doubles, bit for bit the sums of `dotAll` in
 * memory/recall/snapshot.ts. JavaScript there keeps four running sums, one per dimension modulo 4, of
 * products of float32 values widened to doubles (exact: 24 × 24 bits fit a double's 53), and adds them
 * as ((a + b) + c) + d; here the same four sums are the lanes of two f64x2 vectors, each product
 * `f64x2.promote_low_f32x4` of the row times the query held as doubles, each sum one `f64x2.add`
 * (WebAssembly rounds every operation and fuses none), and the last additions are done in the same
 * order. Four rows a step, so the additions of one row do not wait on each other's latency.
 */
import {
  advance,
  compiledKernel,
  functionBody,
  get,
  I32,
  kernelMemory,
  kernelModule,
  memarg,
  op,
  set,
  shuffleLanes,
  simd,
  V128,
} from "./assemble.ts";

/** scan(rows, vectors, query, out): byte addresses of the float32 rows, the float64 query, the float64 scores. */
type ScanFunction = (rows: number, vectors: number, query: number, out: number) => void;

/** Rows scanned a step (the rest one at a time). */
const ROWS_A_STEP = 4;

// Parameters and locals of scan, by index.
const ROWS = 0;
const VECTORS = 1;
const QUERY = 2;
const OUT = 3;
const STEPS_LEFT = 4;
const QUERY_LOW = 5;
const QUERY_HIGH = 6;
const ROW = 7;
/** Each row's two sums of a step: [a, b] and [c, d], at SUMS + 2 × row and SUMS + 2 × row + 1. */
const SUMS = 8;

/** The body of scan for rows of `dim` values (a multiple of 4), every block of 4 unrolled. */
function scanBody(dim: number): number[] {
  const blocks = dim / 4;
  const rowBytes = dim * 4;
  const zero = [...simd.v128Const, ...new Array(16).fill(0)];
  /** `rows` rows from VECTORS: their sums set to 0, then every block added, then each stored at OUT. */
  const rowsCode = (rows: number) => {
    const code: number[] = [];
    for (let r = 0; r < rows; r++)
      code.push(...zero, ...set(SUMS + 2 * r), ...zero, ...set(SUMS + 2 * r + 1));
    for (let b = 0; b < blocks; b++) {
      // The query's four values of this block, as doubles: [q0, q1] and [q2, q3].
      code.push(...get(QUERY), ...simd.v128Load, ...memarg(4, 32 * b), ...set(QUERY_LOW));
      code.push(...get(QUERY), ...simd.v128Load, ...memarg(4, 32 * b + 16), ...set(QUERY_HIGH));
      for (let r = 0; r < rows; r++) {
        const low = SUMS + 2 * r;
        const high = low + 1;
        code.push(...get(VECTORS), ...simd.v128Load, ...memarg(2, r * rowBytes + 16 * b), op.localTee, ROW);
        code.push(...simd.f64x2PromoteLowF32x4, ...get(QUERY_LOW), ...simd.f64x2Mul);
        code.push(...get(low), ...simd.f64x2Add, ...set(low));
        code.push(...get(ROW), ...get(ROW), ...shuffleLanes([2, 3, 2, 3]), ...simd.f64x2PromoteLowF32x4);
        code.push(...get(QUERY_HIGH), ...simd.f64x2Mul, ...get(high), ...simd.f64x2Add, ...set(high));
      }
    }
    for (let r = 0; r < rows; r++) {
      const lane = (local: number, n: number) => [...get(local), ...simd.f64x2ExtractLane, n];
      const low = SUMS + 2 * r;
      const high = low + 1;
      // out[row] = ((a + b) + c) + d, as dotAll adds them.
      code.push(...get(OUT), ...lane(low, 0), ...lane(low, 1), op.f64Add, ...lane(high, 0), op.f64Add);
      code.push(...lane(high, 1), op.f64Add, op.f64Store, ...memarg(3, 8 * r));
    }
    code.push(...advance(VECTORS, rows * rowBytes), ...advance(OUT, 8 * rows));
    return code;
  };
  /** A loop running `body` while the i32 local `counter` (decremented each time) is above 0. */
  const counted = (counter: number, body: number[]) => [
    ...[op.block, 0x40, ...get(counter), op.i32Eqz, op.brIf, 0, op.loop, 0x40],
    ...body,
    ...[...get(counter), op.i32Const, 1, op.i32Sub, op.localTee, counter, op.brIf, 0, op.end, op.end],
  ];
  const code = [
    ...[...get(ROWS), op.i32Const, 2, op.i32ShrU, ...set(STEPS_LEFT)],
    ...counted(STEPS_LEFT, rowsCode(ROWS_A_STEP)),
    ...[...get(ROWS), op.i32Const, ROWS_A_STEP - 1, op.i32And, ...set(ROWS)],
    ...counted(ROWS, rowsCode(1)),
    op.end,
  ];
  // Locals after the 4 parameters: the steps left (i32); the query's halves, the row, the sums (v128).
  return functionBody(
    [
      [1, I32],
      [3 + 2 * ROWS_A_STEP, V128],
    ],
    code,
  );
}

/** The module's bytes for rows of `dim` values: one imported memory ("m"."memory"), "scan" exported. */
export function floatDotsModule(dim: number): Uint8Array {
  return kernelModule([{ name: "scan", params: [I32, I32, I32, I32], results: [], body: scanBody(dim) }]);
}

/** Rows copied into a kernel's memory, with room for a query and every row's score. */
export interface FloatRows {
  /** Every row's dot product with `query` (float32 values, `dim` of them), as dotAll gives them. */
  dots(query: Float32Array): Float64Array;
}

/** Above this many dimensions the unrolled scan would be too long a function; JavaScript scans them. */
const MAX_DIM = 1024;

/**
 * The first `count` rows of `vectors` (`dim` wide) in a kernel's memory; undefined where the kernel
 * cannot run them (WebAssembly SIMD missing, `dim` not a multiple of 4 or above MAX_DIM, no memory).
 */
export function floatRows(vectors: Float32Array, count: number, dim: number): FloatRows | undefined {
  if (dim <= 0 || dim % 4 !== 0 || dim > MAX_DIM || count * dim > vectors.length) return undefined;
  const module = compiledKernel(`float:${dim}`, () => floatDotsModule(dim));
  if (!module) return undefined;
  const queryAt = Math.ceil((count * dim * 4) / 16) * 16;
  const outAt = queryAt + dim * 8;
  const memory = kernelMemory(outAt + count * 8);
  if (!memory) return undefined;
  new Float32Array(memory.buffer, 0, count * dim).set(vectors.subarray(0, count * dim));
  const { scan } = new WebAssembly.Instance(module, { m: { memory } }).exports as { scan: ScanFunction };
  const query = new Float64Array(memory.buffer, queryAt, dim);
  const out = new Float64Array(memory.buffer, outAt, count);
  return {
    dots(vector) {
      query.set(vector.subarray(0, dim));
      scan(count, 0, queryAt, outAt);
      return out.slice();
    },
  };
}
