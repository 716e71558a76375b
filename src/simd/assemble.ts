/**
 * What the WebAssembly kernels here are assembled with (no toolchain at build time): value types,
 * the opcodes they use, LEB128 and the module's sections. The opcodes are the WebAssembly core and
 * fixed-width SIMD specifications' numbers.
 */

export const I32 = 0x7f;
export const F32 = 0x7d;
export const V128 = 0x7b;

export const op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  f32Load: 0x2a,
  f32Store: 0x38,
  f64Store: 0x39,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32And: 0x71,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i32Store: 0x36,
  f32Mul: 0x94,
  f64Add: 0xa0,
  f32ConvertI32S: 0xb2,
};
/** SIMD instructions: the 0xfd prefix and the opcode as unsigned LEB128. */
export const simd = {
  v128Load: [0xfd, 0x00],
  v128Const: [0xfd, 0x0c],
  v128Store: [0xfd, 0x0b],
  i8x16Shuffle: [0xfd, 0x0d],
  i32x4ExtractLane: [0xfd, 0x1b],
  f32x4Splat: [0xfd, 0x13],
  f64x2ExtractLane: [0xfd, 0x21],
  f32x4Ge: [0xfd, 0x46],
  v128AnyTrue: [0xfd, 0x53],
  f64x2PromoteLowF32x4: [0xfd, 0x5f],
  i32x4Bitmask: [0xfd, 0xa4, 0x01],
  i16x8ExtendLowI8x16S: [0xfd, 0x87, 0x01],
  i16x8ExtendHighI8x16S: [0xfd, 0x88, 0x01],
  i32x4Add: [0xfd, 0xae, 0x01],
  i32x4DotI16x8S: [0xfd, 0xba, 0x01],
  f32x4Mul: [0xfd, 0xe6, 0x01],
  f64x2Add: [0xfd, 0xf0, 0x01],
  f64x2Mul: [0xfd, 0xf2, 0x01],
  f32x4ConvertI32x4S: [0xfd, 0xfa, 0x01],
};

export function leb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value) byte |= 0x80;
    bytes.push(byte);
  } while (value);
  return bytes;
}

/** A signed LEB128 (i32.const's immediate): 64 needs two bytes, as its bit 6 would read as the sign. */
export function sleb(value: number): number[] {
  const bytes: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && !(byte & 0x40)) || (value === -1 && byte & 0x40)) return [...bytes, byte];
    bytes.push(byte | 0x80);
  }
}

/** A memory access's alignment (log2) and offset. */
export const memarg = (align: number, offset: number) => [align, ...leb(offset)];
export const vector = (items: number[][]) => [...leb(items.length), ...items.flat()];
export const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
export const name = (text: string) => vector([...text].map((c) => [c.charCodeAt(0)]));
export const get = (local: number) => [op.localGet, local];
export const set = (local: number) => [op.localSet, local];
/** local += step (i32). */
export const advance = (local: number, step: number) => [
  ...get(local),
  op.i32Const,
  ...sleb(step),
  op.i32Add,
  ...set(local),
];

/**
 * i8x16.shuffle of two operands by 32-bit lanes: lanes 0–3 are the first operand's, 4–7 the second's.
 */
export const shuffleLanes = (lanes: number[]) => [
  ...simd.i8x16Shuffle,
  ...lanes.flatMap((l) => [0, 1, 2, 3].map((b) => 4 * l + b)),
];

/** A function body: its locals (count, type) and code, length-prefixed. */
export function functionBody(locals: [number, number][], code: number[]): number[] {
  const body = [...vector(locals.map(([count, type]) => [count, type])), ...code];
  return [...leb(body.length), ...body];
}

/** A kernel's exported function: its name, its type (parameters and results) and its body. */
export interface KernelFunction {
  name: string;
  params: number[];
  results: number[];
  body: number[];
}

/** A module of `functions`, exported by name, over one imported memory ("m"."memory"). */
export function kernelModule(functions: KernelFunction[]): Uint8Array {
  const types = functions.map((f) => [
    0x60,
    ...vector(f.params.map((t) => [t])),
    ...vector(f.results.map((t) => [t])),
  ]);
  const memoryImport = [...name("m"), ...name("memory"), 0x02, 0x00, 1];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector(types)),
    ...section(2, vector([memoryImport])),
    ...section(3, vector(functions.map((_, i) => [i]))),
    ...section(7, vector(functions.map((f, i) => [...name(f.name), 0x00, i]))),
    ...section(10, vector(functions.map((f) => f.body))),
  ]);
}

/** Compiled modules by the kernel and shape they were made for, once per process. */
const compiled = new Map<string, WebAssembly.Module | null>();

/**
 * The module `bytes()` makes, compiled once per process under `key`; null where WebAssembly or the
 * SIMD it uses is missing (the callers' scans stay in JavaScript then).
 */
export function compiledKernel(key: string, bytes: () => Uint8Array): WebAssembly.Module | null {
  let module = compiled.get(key);
  if (module === undefined) {
    try {
      const made = bytes();
      module =
        typeof WebAssembly === "object" && WebAssembly.validate(made) ? new WebAssembly.Module(made) : null;
    } catch {
      module = null;
    }
    compiled.set(key, module);
  }
  return module;
}

/** A memory of at least `bytes`, or undefined past WebAssembly's 4 GiB or when it cannot be had. */
export function kernelMemory(bytes: number): WebAssembly.Memory | undefined {
  try {
    return new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / 65536)) });
  } catch {
    return undefined;
  }
}
