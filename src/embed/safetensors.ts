/**
 * A minimal safetensors reader: an 8-byte little-endian header length, a JSON header naming each
 * tensor's dtype, shape and byte range, then the raw data. Tensors are returned as typed-array
 * views over the given bytes whenever alignment allows, so a memory-mapped file is never copied.
 */
export type DType = "F64" | "F32" | "F16" | "I64" | "I32" | "I8" | "U8";

export interface Tensor {
  dtype: DType;
  shape: number[];
  data: Float64Array | Float32Array | Uint16Array | BigInt64Array | Int32Array | Int8Array | Uint8Array;
}

const BYTES: Record<DType, number> = { F64: 8, F32: 4, F16: 2, I64: 8, I32: 4, I8: 1, U8: 1 };

export class SafetensorsError extends Error {}

export function readSafetensors(bytes: Uint8Array, file = "model.safetensors"): Map<string, Tensor> {
  if (bytes.byteLength < 8) throw new SafetensorsError(`${file}: too short to be a safetensors file`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength <= 0 || 8 + headerLength > bytes.byteLength) {
    throw new SafetensorsError(`${file}: header length ${headerLength} does not fit in ${bytes.byteLength} bytes`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  } catch {
    throw new SafetensorsError(`${file}: header is not valid JSON`);
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    throw new SafetensorsError(`${file}: header is not a JSON object of tensors`);
  }
  const dataStart = 8 + headerLength;
  const tensors = new Map<string, Tensor>();
  for (const [name, info] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") continue;
    const { dtype, shape, data_offsets: offsets } = (info ?? {}) as Record<string, unknown>;
    // Object.hasOwn, not `in`: a dtype such as "toString" must not match the prototype.
    if (typeof dtype !== "string" || !Object.hasOwn(BYTES, dtype)) {
      throw new SafetensorsError(`${file}: tensor '${name}' has unsupported dtype ${String(dtype)}`);
    }
    if (!isCountList(shape) || !isCountList(offsets) || offsets.length !== 2) {
      throw new SafetensorsError(`${file}: tensor '${name}' needs a 'shape' and two 'data_offsets' of non-negative integers`);
    }
    const [start, end] = offsets;
    const count = shape.reduce((a, b) => a * b, 1);
    const type = dtype as DType;
    if (end - start !== count * BYTES[type] || dataStart + end > bytes.byteLength) {
      throw new SafetensorsError(`${file}: tensor '${name}' (${dtype} ${JSON.stringify(shape)}) does not match its byte range`);
    }
    tensors.set(name, { dtype: type, shape, data: typedView(bytes, dataStart + start, count, type) });
  }
  return tensors;
}

function isCountList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((n) => Number.isSafeInteger(n) && n >= 0);
}

function typedView(bytes: Uint8Array, offset: number, count: number, dtype: DType): Tensor["data"] {
  const absolute = bytes.byteOffset + offset;
  const width = BYTES[dtype];
  // Views need aligned offsets; an unaligned tensor (legal in the format) is copied once.
  const source = absolute % width === 0 ? bytes.buffer : bytes.slice(offset, offset + count * width).buffer;
  const at = absolute % width === 0 ? absolute : 0;
  switch (dtype) {
    case "F64": return new Float64Array(source, at, count);
    case "F32": return new Float32Array(source, at, count);
    case "F16": return new Uint16Array(source, at, count);
    case "I64": return new BigInt64Array(source, at, count);
    case "I32": return new Int32Array(source, at, count);
    case "I8": return new Int8Array(source, at, count);
    case "U8": return new Uint8Array(source, at, count);
  }
}

let halfTable: Float32Array | undefined;
/** Lookup table from IEEE half-precision bits to float32, so F16 rows are read without converting the tensor. */
export function halfToFloatTable(): Float32Array {
  if (halfTable) return halfTable;
  halfTable = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x3ff;
    halfTable[h] =
      exponent === 0 ? sign * 2 ** -14 * (fraction / 1024)
      : exponent === 31 ? (fraction ? Number.NaN : sign * Number.POSITIVE_INFINITY)
      : sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
  }
  return halfTable;
}
