/**
 * Phrase normalisation for knowledge-graph nodes. Unlike HippoRAG's `[^A-Za-z0-9 ]` scrub, it keeps
 * identifiers and non-Latin text intact: `foo_bar`, `C++`, `user.id`, `src/a.ts`, Cyrillic.
 * Natural-language phrases fold case ("Caroline" = "caroline"); code-like phrases keep it, because
 * `userId` and `UserId` are different symbols.
 */

/** Characters that make a phrase look like code, where case and punctuation carry meaning. */
const CODE_LIKE = /[_./\\:#+()<>[\]{}=@$]|\p{Ll}\p{Lu}/u;
/** Quotes and trailing sentence punctuation around a phrase, never part of it. */
const EDGE_PUNCTUATION = /^[\s"'`«»“”‘’([{<,;:!?.]+|[\s"'`«»“”‘’)\]}>,;:!?.]+$/gu;
/** A leading article adds nothing to a name: "the Journal" and "Journal" are one node. */
const LEADING_ARTICLE = /^(?:the|a|an)\s+/i;

export const MAX_PHRASE_LENGTH = 80;

/** The key a phrase node is stored under; empty when nothing meaningful is left. */
export function normalizePhrase(raw: string): string {
  let phrase = raw.normalize("NFKC").replace(/\s+/gu, " ");
  // `+` and `#` are not edge punctuation: `C++` and `C#` keep them.
  phrase = phrase.replace(EDGE_PUNCTUATION, "").trim();
  if (!CODE_LIKE.test(phrase)) phrase = phrase.replace(LEADING_ARTICLE, "").toLowerCase();
  if (phrase.length > MAX_PHRASE_LENGTH || !/[\p{L}\p{N}]/u.test(phrase)) return "";
  return phrase;
}

/** A readable label for a phrase node: the raw mention with whitespace tidied. */
export function phraseLabel(raw: string): string {
  return raw.normalize("NFKC").replace(/\s+/gu, " ").trim().slice(0, MAX_PHRASE_LENGTH);
}
