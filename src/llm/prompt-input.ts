/**
 * Longest chunk text sent in one prompt (~4k tokens). Coding replies can carry whole files; past this the
 * head (the question and the start of the answer) and the tail (the conclusion) carry what matters.
 */
export const MAX_PROMPT_CHARS = 16_000;

/** The text, or its head and tail with a marker between when it is longer than `max`. */
export function clipForPrompt(text: string, max = MAX_PROMPT_CHARS): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.7);
  const tail = max - head;
  return `${text.slice(0, head)}\n[… ${text.length - max} characters left out …]\n${text.slice(text.length - tail)}`;
}

/**
 * Wraps conversation text for a prompt. Tags rather than a code fence, because coding conversations are
 * full of fences; the closing tag is defused inside the text so the passage cannot end early.
 */
export function asPassage(text: string): string {
  return `<passage>\n${clipForPrompt(text).replaceAll("</passage>", "</ passage>")}\n</passage>`;
}
