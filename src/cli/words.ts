/** Counts in people's words: `1 session`, `2 sessions`, `49,077 facts`. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? singular : plural}`;
}
