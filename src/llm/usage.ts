/** One completed LLM call, as billed by the provider. */
export interface LlmUsage {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Where every call's token counts go. The memory store implements it (so `triforge status` can show the
 * spend); `InMemoryUsageSink` serves tests, benchmarks and one-off runs.
 */
export interface UsageSink {
  record(usage: LlmUsage): void;
}

export interface UsageTotals {
  provider: string;
  model: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
}

export class InMemoryUsageSink implements UsageSink {
  readonly records: LlmUsage[] = [];

  record(usage: LlmUsage): void {
    this.records.push({ ...usage });
  }

  /** Calls and tokens per provider/model, in first-seen order. */
  totals(): UsageTotals[] {
    const byKey = new Map<string, UsageTotals>();
    for (const r of this.records) {
      const key = `${r.provider}\u0000${r.model}`;
      let t = byKey.get(key);
      if (!t)
        byKey.set(
          key,
          (t = { provider: r.provider, model: r.model, calls: 0, inputTokens: 0, outputTokens: 0 }),
        );
      t.calls++;
      t.inputTokens += r.inputTokens;
      t.outputTokens += r.outputTokens;
    }
    return [...byKey.values()];
  }
}
