/**
 * The MCP stdio transport, bounded. One message is one line; a line longer than MAX_MESSAGE_BYTES
 * is read past without being kept (only the few bytes that may hold its top-level `id`) and answered
 * with a JSON-RPC error, and a line that is not JSON or not JSON-RPC gets the error the
 * specification names. Nothing a client sends stops the reading: the SDK's own transport overflowed
 * its buffer on a message over 10 MB, paused stdin, spun at 100 % CPU and no longer saw stdin close.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * The longest message read. What a client sends us is a tool call with a query and a few paths, or
 * a list of roots: kilobytes. 4 MiB is a thousand times the longest query code search reads (4,000
 * characters) and keeps a hostile client's line from costing more than that in memory.
 */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

type RequestId = string | number | null;

export class BoundedStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  /** The pieces of the line read so far, and their size. */
  private parts: Uint8Array[] = [];
  private size = 0;
  /** Set while the rest of an oversized line is skipped: what it learns of the line's id. */
  private skipping: TopLevelId | undefined;
  private readonly decoder = new TextDecoder();
  /** Messages read and not yet handed to the server (see deliver). */
  private queue: JSONRPCMessage[] = [];

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    private readonly limit = MAX_MESSAGE_BYTES,
  ) {}

  /** Messages read and not yet handed to the server: a shutdown waits for them as for requests in flight. */
  get queued(): number {
    return this.queue.length;
  }

  async start(): Promise<void> {
    this.input.on("data", this.receive);
    this.input.on("error", this.fail);
  }

  async close(): Promise<void> {
    // stdin is not paused: the server still wants its "end" to know the client went.
    this.input.off("data", this.receive);
    this.input.off("error", this.fail);
    this.parts = [];
    this.size = 0;
    this.queue = [];
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((done) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) done();
      else this.output.once("drain", done);
    });
  }

  private readonly fail = (error: Error) => this.onerror?.(error);

  private readonly receive = (chunk: Uint8Array | string) => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (;;) {
      const newline = bytes.indexOf(10, from);
      this.take(bytes.subarray(from, newline < 0 ? bytes.length : newline));
      if (newline < 0) return;
      this.endOfLine();
      from = newline + 1;
    }
  };

  private take(piece: Uint8Array): void {
    if (!piece.length) return;
    if (this.skipping) this.skipping.scan(piece);
    else if (this.size + piece.length <= this.limit) {
      this.parts.push(piece);
      this.size += piece.length;
    } else this.startSkipping(piece);
  }

  /** The line grew past the limit: from here on only its id is looked for. */
  private startSkipping(piece: Uint8Array): void {
    this.skipping = new TopLevelId();
    for (const part of this.parts) this.skipping.scan(part);
    this.skipping.scan(piece);
    this.parts = [];
    this.size = 0;
  }

  private endOfLine(): void {
    if (this.skipping) {
      const { id } = this.skipping;
      this.skipping = undefined;
      this.reject(
        id,
        ErrorCode.InvalidRequest,
        `Invalid Request: a message may be at most ${this.limit} bytes; this one was longer and was not read`,
      );
      return;
    }
    const line = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    const text = this.decoder.decode(line).replace(/\r$/, "");
    if (!text.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.reject(null, ErrorCode.ParseError, "Parse error: the message is not valid JSON");
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (!message.success) {
      this.reject(
        idOf(value),
        ErrorCode.InvalidRequest,
        "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
      );
      return;
    }
    this.queue.push(message.data);
    if (this.queue.length === 1) setImmediate(this.deliver);
  }

  /**
   * Hands the oldest message read to the server, one per turn of the event loop: a client that
   * writes 2,000 requests at once still lets timers run between them, so the server can leave on
   * time when stdin closes (it dispatched them all in one go before, and outlived its client by
   * seconds under load).
   */
  private readonly deliver = () => {
    const message = this.queue.shift();
    if (this.queue.length) setImmediate(this.deliver);
    if (!message) return;
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)));
    }
  };

  private reject(id: RequestId, code: number, message: string): void {
    this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage).catch(this.fail);
  }
}

function idOf(value: unknown): RequestId {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** Ids longer than this are not kept: no client numbers its requests with kilobytes. */
const MAX_ID_BYTES = 256;
/** Only the key `id` matters; longer keys are not kept. */
const MAX_KEY_BYTES = 8;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The top-level `"id"` of a JSON object read in pieces, keeping only the bytes of the id itself: an
 * oversized request still gets its error under its own id, so the client's call fails at once instead
 * of waiting for a reply that never comes. The SDK's client writes `id` last, after the parameters.
 * Bytes are scanned as bytes: every byte of a multi-byte UTF-8 character is ≥ 0x80, so it is never
 * taken for a quote, a brace or a comma.
 */
export class TopLevelId {
  id: RequestId = null;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private key: number[] | undefined;
  private lastKey = "";
  /** The id's bytes while its value is read (undefined otherwise). */
  private value: number[] | undefined;
  private valueIsString = false;
  private found = false;

  scan(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) {
          this.inString = false;
          this.endOfString();
          continue;
        }
        if (this.key) {
          if (this.key.length <= MAX_KEY_BYTES) this.key.push(byte);
        } else if (this.value && this.valueIsString) this.keepIdByte(byte);
        continue;
      }
      switch (byte) {
        case QUOTE:
          this.inString = true;
          if (this.depth === 1 && this.expectKey) this.key = [];
          else if (this.value && !this.value.length) this.valueIsString = true;
          break;
        case 0x7b: // {
        case 0x5b: // [
          this.endOfValue(true);
          this.depth++;
          this.expectKey = this.depth === 1 && byte === 0x7b;
          break;
        case 0x7d: // }
        case 0x5d: // ]
          if (this.depth === 1) this.endOfValue(false);
          this.depth--;
          break;
        case 0x3a: // :
          if (this.depth === 1 && this.lastKey === "id" && !this.found) this.value = [];
          break;
        case 0x2c: // ,
          if (this.depth === 1) {
            this.endOfValue(false);
            this.expectKey = true;
          }
          break;
        default:
          if (this.value && byte > 0x20) this.keepIdByte(byte);
      }
    }
  }

  private keepIdByte(byte: number): void {
    this.value!.push(byte);
    if (this.value!.length > MAX_ID_BYTES) this.endOfValue(true);
  }

  private endOfString(): void {
    if (this.key) {
      this.lastKey = this.key.length <= MAX_KEY_BYTES ? String.fromCharCode(...this.key) : "";
      this.key = undefined;
      this.expectKey = false;
    } else if (this.value && this.valueIsString) this.settle(`"${Buffer.from(this.value).toString("utf8")}"`);
  }

  /** A number (or null) ends at `,` or `}`; `invalid`: the value is an object, an array or too long. */
  private endOfValue(invalid: boolean): void {
    if (!this.value) return;
    if (invalid) {
      this.value = undefined;
      this.valueIsString = false;
      this.found = true;
      return;
    }
    this.settle(Buffer.from(this.value).toString("latin1"));
  }

  private settle(json: string): void {
    this.value = undefined;
    this.valueIsString = false;
    this.found = true;
    try {
      const id = JSON.parse(json);
      if (typeof id === "string" || typeof id === "number") this.id = id;
    } catch {
      // Not a well-formed id: the error goes out with id null, as JSON-RPC says.
    }
  }
}
