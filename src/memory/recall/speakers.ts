/**
 * Speaker linking: which role a person's name stands for, learned from how the conversation addresses
 * each side. Captured turns carry a role (`user`, `assistant`), never a name, yet people address each
 * other by name ("Hey Caroline!", "Thanks, Mel."): a name used vocatively in one role's turns names the
 * OTHER role. A question that names a person ("What did Melanie paint?", "what did Claude suggest?") is
 * then a question about that role's turns.
 */

export type Role = "user" | "assistant";

/** A turn as the learner needs it: its role and its text. */
export interface SpokenTurn {
  role: Role;
  text: string;
}

/**
 * Vocative forms: a greeting, thanks or reply word followed by a capitalised word that ends the clause
 * ("Hey Caroline!", "Thanks, Mel.", "Yes, Evan,"), or a capitalised word closing a clause after a comma
 * ("That's great, Caroline!"). Case-sensitive on the name, so "thanks, good luck." finds nothing.
 */
const AFTER_GREETING =
  /\b(?:[Hh]ey|[Hh]i|[Hh]ello|[Tt]hanks|[Tt]hank you|[Cc]ongrats|[Cc]ongratulations|[Bb]ye|[Ss]orry|[Yy]es|[Yy]eah|[Yy]ep|[Oo]h|[Dd]ear|[Cc]heers|[Mm]orning|[Nn]ight),?\s+(\p{Lu}\p{Ll}+)\b(?=\s*[!,.?])/gu;
const CLAUSE_END = /,\s+(\p{Lu}\p{Ll}+)(?=[!?.])/gu;

/**
 * A name is linked when it is used vocatively at least MIN_VOCATIVES times, at least once after a
 * greeting or thanks, and at least MIN_ROLE_SHARE of those uses sit in one role's turns: a place named
 * at a clause's end ("my home country, Sweden.") is rare and so not linked; the last word of lists
 * ("builds for macOS, Linux.") is never greeted; a name both sides use for a third person is not linked.
 * On LoCoMo's ten conversations every speaker's name and nickname (Mel, Deb, Cal, Jo, Ev) is linked to
 * the right role and nothing else is. Names are learned only from a dialogue, where each role speaks at
 * least `minTurnShare` of the turns: in a store of documents captured as one role (MuSiQue's passages)
 * every clause-final capitalised word would otherwise "name" the silent role.
 */
export const SPEAKER_LINKING = { minVocatives: 2, minRoleShare: 0.8, minTurnShare: 0.1 } as const;

const OTHER: Record<Role, Role> = { user: "assistant", assistant: "user" };

/**
 * How often each capitalised word is used vocatively in each role's turns, and how many turns each role
 * spoke: what names are learned from. Counts add up, so a store's counts grow with each indexed batch.
 */
export interface VocativeCounts {
  spoken: { user: number; assistant: number };
  /** Lower-cased name → [uses in user turns, uses in assistant turns, greeted or thanked at least once (1/0)]. */
  uses: Record<string, [number, number, number]>;
}

export function emptyVocativeCounts(): VocativeCounts {
  return { spoken: { user: 0, assistant: 0 }, uses: {} };
}

/** Adds the turns' vocative uses to `counts` (in place). */
export function countVocatives(counts: VocativeCounts, turns: Iterable<SpokenTurn>): VocativeCounts {
  for (const { role, text } of turns) {
    counts.spoken[role]++;
    const found = new Set<number>();
    for (const pattern of [AFTER_GREETING, CLAUSE_END]) {
      for (const match of text.matchAll(pattern)) {
        const start = (match.index ?? 0) + match[0].lastIndexOf(match[1]);
        if (found.has(start)) continue;
        found.add(start);
        const name = match[1].toLowerCase();
        let count = Object.hasOwn(counts.uses, name) ? counts.uses[name] : undefined;
        if (!count) counts.uses[name] = count = [0, 0, 0];
        count[role === "user" ? 0 : 1]++;
        if (pattern === AFTER_GREETING) count[2] = 1;
      }
    }
  }
  return counts;
}

/** Lower-cased name → the role it names. */
export function learnSpeakerNames(turns: Iterable<SpokenTurn>): Map<string, Role> {
  return speakerNames(countVocatives(emptyVocativeCounts(), turns));
}

/** The names the counts link to a role (see SPEAKER_LINKING). */
export function speakerNames({ spoken, uses }: VocativeCounts): Map<string, Role> {
  const names = new Map<string, Role>();
  const turnCount = spoken.user + spoken.assistant;
  if (Math.min(spoken.user, spoken.assistant) < SPEAKER_LINKING.minTurnShare * turnCount) return names;
  for (const [name, [user, assistant, greeted]] of Object.entries(uses)) {
    const total = user + assistant;
    // Greeted or thanked at least once: a word closing a list ("builds for macOS, Linux.") is
    // clause-final like a name, but nobody writes "Thanks, Linux".
    if (total < SPEAKER_LINKING.minVocatives || !greeted) continue;
    const speaker: Role = user >= assistant ? "user" : "assistant";
    if ((speaker === "user" ? user : assistant) / total >= SPEAKER_LINKING.minRoleShare)
      names.set(name, OTHER[speaker]);
  }
  return names;
}

const QUERY_WORD = /[\p{L}\p{N}]+/gu;

/**
 * The role a query asks about: the one role its linked names point to, or undefined when it names no
 * linked person or names both sides ("What do Jon and Gina have in common?").
 */
export function queryRole(query: string, names: Map<string, Role>): Role | undefined {
  if (names.size === 0) return undefined;
  const roles = new Set<Role>();
  for (const match of query.matchAll(QUERY_WORD)) {
    const role = namedRole(query, match[0], match.index ?? 0, names);
    if (role) roles.add(role);
  }
  return roles.size === 1 ? [...roles][0] : undefined;
}

/** The query with its linked names (and their possessive 's) blanked out. */
export function withoutNames(query: string, names: Map<string, Role>): string {
  return query.replace(/[\p{L}\p{N}]+(?:['’]s\b)?/gu, (word, at: number) => {
    const name = word.replace(/['’]s$/, "");
    return namedRole(query, name, at, names) ? " " : word;
  });
}

/**
 * The role a word of the query names, when it is used as a person's name: not in capitals, a file
 * name or the first word of a longer proper name. A user who thanks "Claude" still asks about
 * `CLAUDE.md` and "Claude Code" as things, not about the assistant's turns.
 */
function namedRole(query: string, word: string, at: number, names: Map<string, Role>): Role | undefined {
  const role = names.get(word.toLowerCase());
  if (!role) return undefined;
  if (word.length > 1 && word === word.toUpperCase()) return undefined;
  const after = query.slice(at + word.length);
  if (/^\.\p{L}/u.test(after) || /^\s+\p{Lu}\p{Ll}/u.test(after)) return undefined;
  return role;
}
