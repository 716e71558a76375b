/** One span of the input that must not be stored, and what it is (`aws`, `email`, `password`…). */
export interface Finding {
  start: number;
  end: number;
  kind: string;
}
