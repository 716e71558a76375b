/**
 * Identifier-aware lexical tokens for BM25: a code identifier is indexed whole AND as its parts, so
 * `getUserName` matches a query for "user name" and a query for `getUserName` ranks the exact symbol
 * first (it matches the whole token and every part). Words are lower-cased and lightly stemmed;
 * non-Latin words (Cyrillic…) are kept as they are, lower-cased.
 */

/** A word, or a compound joined by `. _ / - : @` (paths, dotted names, snake_case, dates), or C++ / C#. */
const WORD = /[\p{L}\p{N}_]+(?:[.\-/:@][\p{L}\p{N}_]+)*(?:\+\+|#)?/gu;
const CAMEL_PARTS = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\p{N}+|[\p{L}]+/gu;
const COMPOUND_SEPARATORS = /[.\-/:@_]+/;

/** Function words that carry no topic. Kept short: over-aggressive lists hurt identifier queries. */
export const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does doing done for from had has have having he her hers him his " +
    "how i if in into is it its itself just me my myself no nor not of off on once only or our ours out over own same she " +
    "should so some such than that the their theirs them then there these they this those through to too under until up " +
    "very was we were what when where which while who whom why will with would you your yours yourself yourselves " +
    "about above after again against all am any because before below between both during each few further here more most " +
    "other s t don shouldn now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan " +
    "wasn weren won wouldn also yeah oh hey hi ok okay really"
  ).split(" "),
);

/**
 * A light suffix stemmer (Porter step 1 in spirit): plural and -ed/-ing forms of Latin-script words
 * meet their stem, so "paintings"/"painted" match "painting"/"paint". Identifiers never pass here.
 */
export function stem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1);
  if (w.endsWith("ing") && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith("ed") && w.length > 4) w = undouble(w.slice(0, -2));
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  return n > 2 && w[n - 1] === w[n - 2] && !"lsz".includes(w[n - 1]) ? w.slice(0, -1) : w;
}

/** Pushes the lexical tokens of `text` onto `out` (duplicates kept: they are term frequencies). */
export function lexicalTokens(text: string, out: string[] = []): string[] {
  for (const match of text.matchAll(WORD)) {
    const raw = match[0];
    const lower = raw.toLowerCase();
    const parts = raw.split(COMPOUND_SEPARATORS).filter(Boolean);
    const isCompound = parts.length > 1 || raw.endsWith("+") || raw.endsWith("#");
    const camel = !isCompound && /[a-z][A-Z]|[A-Z]{2}[a-z]/.test(raw);
    if (isCompound || camel) {
      // The whole identifier, then its parts: an exact identifier query matches more tokens than a loose one.
      out.push(lower);
      for (const part of parts) {
        const pieces = part.match(CAMEL_PARTS) ?? [part];
        if (isCompound && pieces.length > 1) out.push(part.toLowerCase());
        for (const piece of pieces) {
          const p = piece.toLowerCase();
          if (!STOPWORDS.has(p)) out.push(stem(p));
        }
      }
    } else if (!STOPWORDS.has(lower)) {
      out.push(stem(lower));
    }
  }
  return out;
}
