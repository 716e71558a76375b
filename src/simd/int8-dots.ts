/**
 * A WebAssembly SIMD kernel for the dense scan: the dot product of every int8 row with an int16
 * query, 16 dimensions a step (`i16x8.extend_*_i8x16_s` then `i32x4.dot_i16x8_s`), each row's
 * integer sum times its scale and the query's, stored as float32; and a select of the scores at or
 * above a threshold. Its bytes (1,340 for 64 dimensions) are assembled here from the instructions
 * below (no toolchain at build time). Where WebAssembly or its SIMD is absent, `int8DotKernel()` is
 * undefined and the scan stays in JavaScript.
 */
import {
  advance,
  compiledKernel,
  F32,
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

/** The exported function: scan(rows, vectors, query, scales, out, queryScale), byte addresses. */
export type Int8DotsFunction = (
  rows: number,
  vectors: number,
  query: number,
  scales: number,
  out: number,
  queryScale: number,
) => void;

/**
 * select(groups, scores, threshold, ids): the indexes of the scores (float32, `groups` × 4 of them)
 * at or above `threshold`, written as int32 at `ids`, ascending; returns how many.
 */
export type SelectFunction = (groups: number, scores: number, threshold: number, ids: number) => number;

export interface Int8DotKernel {
  memory: WebAssembly.Memory;
  scan: Int8DotsFunction;
  select: SelectFunction;
}

// Parameters and locals of scan, by index.
const ROWS = 0;
const VECTORS = 1;
const QUERY = 2;
const SCALES = 3;
const OUT = 4;
const QUERY_SCALE = 5;
const GROUPS_LEFT = 6;
const SUM = 7;
const PAIR_SUM = 8;
const FIRST_PAIR = 9;
const SECOND_PAIR = 10;
const QUERY_SCALES = 11;
const QUERY_HALVES = 12;

/**
 * Up to this many blocks (64 dimensions, the static model's) the query's halves are held in locals
 * rather than loaded for every row: 8 registers of the 16 x86-64 has, leaving the rest for the
 * sums. With the dots summed as a tree, the scan ran 1.17–1.27× as fast (same process, alternating).
 */
const QUERY_IN_LOCALS_UP_TO = 4;

/** `parts` (each leaving one v128 on the stack) summed as a balanced tree of i32x4.add. */
function sumTree(parts: number[][]): number[] {
  if (parts.length === 1) return parts[0];
  const middle = parts.length >> 1;
  return [...sumTree(parts.slice(0, middle)), ...sumTree(parts.slice(middle)), ...simd.i32x4Add];
}

/**
 * The body of scan for rows of `blocks` × 16 int8 values: per row, every block unrolled (16 int8
 * values widened to two i16x8 halves, each dotted with the query's 16 int16 values) and the dots
 * summed as a tree, so no add waits on the one before. Four rows a step: their four lane sums
 * are added across by two rounds of shuffles (a row's lanes into one lane of one vector), converted,
 * scaled and stored as one f32x4 each — where one row a step took four lane extractions and
 * scalar work per row. The integer sums are exact in any order and the conversion and the two
 * multiplications are float32's either way, so both give the same bits. The rows past the last
 * multiple of four go one at a time.
 */
function scanBody(blocks: number): number[] {
  const inLocals = blocks <= QUERY_IN_LOCALS_UP_TO;
  const queryHalf = (h: number) =>
    inLocals ? get(QUERY_HALVES + h) : [...get(QUERY), ...simd.v128Load, ...memarg(4, h * 16)];
  const rowBytes = 16 * blocks;
  const dot = (row: number, h: number) => [
    ...[...get(VECTORS), ...simd.v128Load, ...memarg(0, row * rowBytes + (h >> 1) * 16)],
    ...(h % 2 ? simd.i16x8ExtendHighI8x16S : simd.i16x8ExtendLowI8x16S),
    ...queryHalf(h),
    ...simd.i32x4DotI16x8S,
  ];
  const halves = Array.from({ length: 2 * blocks }, (_, h) => h);
  const rowSum = (row: number) => sumTree(halves.map((h) => dot(row, h)));
  // [a0+a1, b0+b1, a2+a3, b2+b3] of the vectors in `a` and `b`.
  const pairSum = (a: number, b: number) => [
    ...[...get(a), ...get(b), ...shuffleLanes([0, 4, 2, 6])],
    ...[...get(a), ...get(b), ...shuffleLanes([1, 5, 3, 7])],
    ...simd.i32x4Add,
  ];
  const lane = (n: number) => [...get(SUM), ...simd.i32x4ExtractLane, n];
  const code = [
    ...(inLocals
      ? halves.flatMap((h) => [
          ...get(QUERY),
          ...simd.v128Load,
          ...memarg(4, h * 16),
          ...set(QUERY_HALVES + h),
        ])
      : []),
    ...[...get(QUERY_SCALE), ...simd.f32x4Splat, ...set(QUERY_SCALES)],
    ...[...get(ROWS), op.i32Const, 2, op.i32ShrU, ...set(GROUPS_LEFT)],
    ...[op.block, 0x40],
    ...[...get(GROUPS_LEFT), op.i32Eqz, op.brIf, 0],
    ...[op.loop, 0x40],
    ...[
      ...rowSum(0),
      ...set(SUM),
      ...rowSum(1),
      ...set(PAIR_SUM),
      ...pairSum(SUM, PAIR_SUM),
      ...set(FIRST_PAIR),
    ],
    ...[
      ...rowSum(2),
      ...set(SUM),
      ...rowSum(3),
      ...set(PAIR_SUM),
      ...pairSum(SUM, PAIR_SUM),
      ...set(SECOND_PAIR),
    ],
    // out[row .. row + 3] = f32(the four rows' sums) × scales[row .. row + 3] × queryScale
    ...get(OUT),
    ...[...get(FIRST_PAIR), ...get(SECOND_PAIR), ...shuffleLanes([0, 1, 4, 5])],
    ...[...get(FIRST_PAIR), ...get(SECOND_PAIR), ...shuffleLanes([2, 3, 6, 7])],
    ...simd.i32x4Add,
    ...simd.f32x4ConvertI32x4S,
    ...[...get(SCALES), ...simd.v128Load, ...memarg(2, 0), ...simd.f32x4Mul],
    ...[...get(QUERY_SCALES), ...simd.f32x4Mul],
    ...[...simd.v128Store, ...memarg(2, 0)],
    ...advance(VECTORS, 4 * rowBytes),
    ...advance(OUT, 16),
    ...advance(SCALES, 16),
    ...[...get(GROUPS_LEFT), op.i32Const, 1, op.i32Sub, op.localTee, GROUPS_LEFT, op.brIf, 0],
    op.end,
    op.end,
    ...[...get(ROWS), op.i32Const, 3, op.i32And, ...set(ROWS)],
    ...[op.block, 0x40],
    ...[...get(ROWS), op.i32Eqz, op.brIf, 0],
    ...[op.loop, 0x40],
    ...rowSum(0),
    ...set(SUM),
    ...advance(VECTORS, rowBytes),
    // out[row] = f32(sum of the four lanes) × scales[row] × queryScale
    ...get(OUT),
    ...[...lane(0), ...lane(1), op.i32Add, ...lane(2), ...lane(3), op.i32Add, op.i32Add],
    op.f32ConvertI32S,
    ...[...get(SCALES), op.f32Load, ...memarg(2, 0), op.f32Mul],
    ...[...get(QUERY_SCALE), op.f32Mul],
    ...[op.f32Store, ...memarg(2, 0)],
    ...advance(OUT, 4),
    ...advance(SCALES, 4),
    ...[...get(ROWS), op.i32Const, 1, op.i32Sub, op.localTee, ROWS, op.brIf, 0],
    op.end,
    op.end,
    op.end,
  ];
  // Locals after the 6 parameters: the groups left (i32); the sums and the query's scale (v128), then
  // the query's halves when held.
  return functionBody(
    [
      [1, I32],
      [5 + (inLocals ? 2 * blocks : 0), V128],
    ],
    code,
  );
}

// Parameters and locals of select, by index.
const GROUPS = 0;
const SCORES = 1;
const THRESHOLD = 2;
const IDS = 3;
const FOUND = 4;
const AT = 5;
const MASK = 6;
const SPLAT = 7;
const COMPARE = 8;

/**
 * The body of select: four scores a step, compared with the threshold at once; only a step with one
 * at or above it (a few in a hundred, for the dense scan's candidates) looks at its lanes.
 */
function selectBody(): number[] {
  const lane = (n: number) => [
    ...[...get(MASK), op.i32Const, 1 << n, op.i32And, op.if, 0x40],
    ...[...get(IDS), ...get(FOUND), op.i32Const, 2, op.i32Shl, op.i32Add],
    ...[...get(AT), op.i32Const, n, op.i32Add, op.i32Store, ...memarg(2, 0)],
    ...advance(FOUND, 1),
    op.end,
  ];
  const code = [
    ...[...get(THRESHOLD), ...simd.f32x4Splat, ...set(SPLAT)],
    ...[op.block, 0x40, op.loop, 0x40],
    ...[...get(AT), ...get(GROUPS), op.i32Const, 2, op.i32Shl, op.i32GeU, op.brIf, 1],
    ...[
      ...get(SCORES),
      ...simd.v128Load,
      ...memarg(4, 0),
      ...get(SPLAT),
      ...simd.f32x4Ge,
      op.localTee,
      COMPARE,
    ],
    ...[...simd.v128AnyTrue, op.if, 0x40],
    ...[...get(COMPARE), ...simd.i32x4Bitmask, ...set(MASK)],
    ...[0, 1, 2, 3].flatMap(lane),
    op.end,
    ...advance(SCORES, 16),
    ...advance(AT, 4),
    ...[op.br, 0],
    ...[op.end, op.end],
    ...get(FOUND),
    op.end,
  ];
  // Locals after the 4 parameters: found, at, mask (i32); the splat threshold and the compare (v128).
  return functionBody(
    [
      [3, I32],
      [2, V128],
    ],
    code,
  );
}

/**
 * The module's bytes for rows of `blocks` × 16 dimensions: one imported memory ("m"."memory") and two
 * exported functions, "scan" and "select".
 */
export function int8DotsModule(blocks: number): Uint8Array {
  return kernelModule([
    { name: "scan", params: [I32, I32, I32, I32, I32, F32], results: [], body: scanBody(blocks) },
    { name: "select", params: [I32, I32, F32, I32], results: [I32], body: selectBody() },
  ]);
}

/**
 * A kernel for rows of `blocks` × 16 int8 values with its own memory of at least `bytes`; undefined
 * where WebAssembly SIMD is unavailable or that memory cannot be had.
 */
export function int8DotKernel(blocks: number, bytes: number): Int8DotKernel | undefined {
  const module = compiledKernel(`int8:${blocks}`, () => int8DotsModule(blocks));
  if (!module) return undefined;
  // Past WebAssembly's 4 GiB (a million 1,536-dimension rows would be 1.5 GB, within it) or out of
  // memory: the JavaScript scan needs none of this.
  const memory = kernelMemory(bytes);
  if (!memory) return undefined;
  const instance = new WebAssembly.Instance(module, { m: { memory } });
  return {
    memory,
    scan: instance.exports.scan as Int8DotsFunction,
    select: instance.exports.select as SelectFunction,
  };
}
