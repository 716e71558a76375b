/** A provider call that failed for good: after its retries, or at once when retrying cannot help. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly provider: string,
    readonly model: string,
    /** HTTP status of the last answer; undefined for timeouts and connection failures. */
    readonly status: number | undefined,
    /** Requests made, the first one included. */
    readonly attempts: number,
  ) {
    super(message);
    this.name = "LlmError";
  }
}

/** The model answered, but not with what the prompt asked for (e.g. no valid JSON). */
export class LlmOutputError extends Error {
  constructor(
    message: string,
    /** The start of the model's reply, for the log; it holds only what the (redacted) prompt held. */
    readonly excerpt: string,
  ) {
    super(message);
    this.name = "LlmOutputError";
  }
}
