/**
 * What was decided in a conversation, without an LLM: decisions are found by the shape of the exchange,
 * not by a decision word alone.
 *
 * - The user's instructions that fix a choice: an imperative naming a tool or carrying a constraint
 *   ("Create a standalone Rust library (no Python bindings needed)", "Let's go with signed cookies, no
 *   Redis"). The request that only names the work ("Implement the login page") is the topic instead.
 * - The assistant's commitments to an approach ("I'll use an enum to …", "I need to rewrite it with a
 *   SQLite-safe pattern") when they carry a reason, a contrast or a place, or answer a problem stated just
 *   before ("… doesn't render flash messages. I'll add a flash display inline in the template.").
 *   Narration of its process ("Let me run the tests", "Now I'll commit") is not a decision.
 * - A proposal the user accepted: the plan's rules and steps when the next user turn says yes to it
 *   ("Sounds good", "create the beads"); the assistant agreeing to the user's proposal.
 * Questions, deliberation ("we need to decide", "I think", "maybe") and acknowledgements never are.
 */

export type Speaker = "user" | "assistant";

export interface DecisionTurn {
  role: Speaker;
  text: string;
  /** `sentencesOf(text)`, when the caller has split it already. */
  sentences?: Sentence[];
  /** Anything the caller wants back with a decision (a turn id). */
  key?: string;
}

export interface Decision {
  text: string;
  /** The sentence as it was said (the text may drop an "Agreed:" before it). */
  sentence: string;
  /** The problem sentence it answers, when the decision came right after one. */
  reason?: string;
  role: Speaker;
  key?: string;
  /** Order in the conversation. */
  position: number;
  /** Higher is surer: a user's rule or an accepted plan beats an assistant's aside. */
  weight: number;
}

/** A sentence ends at . ! ? followed by space (so `4.1.5` and `a.yml` stay whole) or at a line break. */
const SENTENCE_BREAK = /(?<=[.!?])\s+(?=[^a-z\s])|\n+/;
/** Markdown around a line: quote markers, list markers, headings' hashes, bold. */
const LINE_MARKUP = /^(?:>\s*)*(?:[-*•+]\s+|\d+[.)]\s+)?/;
const HEADING = /^(?:>\s*)*#{1,6}\s/;

export interface Sentence {
  text: string;
  /** It was (the start of) a list item: a plan's scope rules are list items. */
  listItem: boolean;
}

/** The sentences of a turn, markup dropped, code blocks, tables and headings left out. */
export function sentencesOf(text: string): Sentence[] {
  const out: Sentence[] = [];
  let fenced = false;
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim();
    if (/^(?:>\s*)*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced || !line || HEADING.test(line) || /^(?:>\s*)*\|/.test(line) || /^-{3,}$/.test(line)) continue;
    const marker = LINE_MARKUP.exec(line)?.[0] ?? "";
    const listItem = /[-*•+\d]/.test(marker);
    const body = line.slice(marker.length).replace(/\*\*/g, "").trim();
    body.split(SENTENCE_BREAK).forEach((part, i) => {
      const sentence = part.trim();
      if (sentence) out.push({ text: sentence, listItem: listItem && i === 0 });
    });
  }
  return out;
}

// ---- what a sentence is not -------------------------------------------------------------------------

/** A question mark ending a clause (not `?` inside a URL such as `/login?next=/`). */
export const QUESTION_MARK = /\?(?=[\s"')\]]|$)/;
// "do" and "have" also open instructions ("Have the CI use Node 20", "Do the migration first"): only
// with a pronoun after them do they open a question ("Do we keep it?", "Have you tried …").
const QUESTION_OPENING =
  /^(?:(?:what|which|why|how|when|where|who)\s+)?(?:(?:should|shall|could|would|can|does|did|is|are|was|were|will|has)\s+(?:we|i|you|it|this|that|they|there|the|he|she|our|my|your)|(?:do|have)\s+(?:we|i|you|it|they|he|she))\b/i;
const INDIRECT_QUESTION = /\b(?:whether|wonder(?:ing)? if|not sure (?:if|about)|check (?:if|whether))\b/i;
/** Weighing options is not settling them. */
const DELIBERATION =
  /\b(?:need to (?:decide|figure out|think|choose|pick)|(?:i|we) (?:think|guess|wonder|feel|believe)|maybe|perhaps|might|could (?:also )?(?:use|try|go)|not sure|on the other hand|pros and cons|options? (?:are|is)|either .* or|which one|what about|how about)\b/i;
/** Interjections that open a reply ("Great,", "Thanks!", "Ok so"): what follows them is read alone. */
const ACKNOWLEDGEMENT =
  /^(?:(?:great|thanks?(?: you)?|thx|perfect|awesome|nice|cool|ok(?:ay)?|yes|yeah|yep|sure|good|hi|hello|hey|right|sounds good|got it|alright|excellent|wonderful|oh|ah|wow|so|well|done|expected|now|first|next|then|finally|also|and|please)\b[\s,!.:;—–-]*)+/i;

/**
 * Words that carry no content of their own: pronouns, function words and the decision verbs. A
 * decision naming nothing beyond them ("let's do that", "Let me add it") says nothing a later session
 * could use.
 */
const FILLER_WORDS = new Set(
  (
    "a an the this that these those it its it's i i'm i've i'll me my we we'll we've we're us our you you're your " +
    "he she they them their there here so then now just also too very really all both that's what's " +
    "is are was were be been being am do does did done doing have has had will would shall should could can " +
    "may might must not no yes to of in on at for with by from as and or but if up out again still " +
    "decided decide agreed agree let's lets let going go went chose choose switched switch settled plan " +
    "planned instead fix fixed fixes resolved resolve works work worked working rename renamed replace " +
    "replaced remove removed add added move moved don't never always one thing things way stuff ok okay " +
    "great thanks thank perfect awesome nice cool good fine sure right well use used using need needs keep"
  ).split(" "),
);
const MIN_CONTENT_WORDS = 2;

function contentWords(sentence: string): string[] {
  const words = sentence.toLowerCase().match(/[\p{L}\p{N}](?:[\p{L}\p{N}'._/:-]*[\p{L}\p{N}])?/gu) ?? [];
  return words.filter((word) => !FILLER_WORDS.has(word));
}

/** A question, deliberation, or too little content to be worth a line. */
function disqualified(sentence: string): boolean {
  if (sentence.length < 12 || QUESTION_MARK.test(sentence)) return true;
  const rest = sentence.replace(ACKNOWLEDGEMENT, "");
  if (QUESTION_OPENING.test(rest) || INDIRECT_QUESTION.test(rest) || DELIBERATION.test(rest)) return true;
  return contentWords(rest).length < MIN_CONTENT_WORDS;
}

// ---- what makes a statement a choice ------------------------------------------------------------------

/**
 * Verbs of the work itself, not of a choice: reading, checking, running, committing. A commitment to one
 * of these ("Let me run the tests", "I'll stage and commit") is narration. Not here, because what follows
 * them often is a choice: test, install, clean up, update, fix.
 */
const PROCESS_VERBS = new Set(
  (
    "run rerun check read look see verify confirm commit push pull stage wait compile build explore start begin " +
    "continue proceed mark close execute research draft analyze analyse understand investigate inspect review " +
    "help try find search open print show list create write make implement finish apply do get fetch load " +
    "decompose break clarify summarize summarise report ask answer respond debug " +
    "figure rebuild restart launch call examine study scan take"
  ).split(" "),
);

/** Opening of the assistant committing itself ("I'll", "I need to", "Let me", "We should"). */
const COMMITMENT =
  /^(?:(?:in|for|since|because|given|as|with|after|so)\b[^,]{0,80},\s*)?(?:(?:i|we)(?:'ll| will| need to| have to| must| should| am going to|'m going to|'re going to| are going to)|let(?:'s| me| us)|need(?:s)? )\s*(?:also |now |then |just |first |instead )*(\p{L}+)/iu;
/** Reported choices: "Used X instead of Y", "Switched to …", "Kept the Justfile". */
const REPORTED_CHOICE =
  /^(?:(?:we|i) )?(?:used|fixed|switched|replaced|kept|chose|picked|went with|dropped|moved|renamed|deleted|removed|settled on|decided|standardi[sz]ed on|pinned)\b/i;
/** An explicit statement of a decision in any voice ("We decided to …", "the plan is", "going with"). */
const EXPLICIT =
  /\b(?:(?:we|i|you) (?:decided|agreed|settled on|chose|went with)|decided to|going with|go with|stick with|settled on|the plan is|from now on|the (?:fix|root cause|cause) (?:is|was)|we(?:'ll| will) (?:use|go|keep|switch|store|move|drop|stay)|will be (?:stored|kept|done|handled|written)|is going to be)\b/i;
/** A reason, a contrast, or a place: what turns "I'll add a button" into a choice worth keeping. */
const SUBSTANCE =
  /\b(?:because|since|so that|in order to|(?<!(?:need|have|going|want|ought) )to (?:avoid|keep|ensure|make sure|work with|represent|support|handle|prevent|match)|instead(?: of)?|rather than|not the|\(not\b|no longer|without|only|never|always|over|following|via|using|next to|inline|as an? |in (?:the )?`|in \S+\.\w+|to `|into `|with `|with (?:an? )?(?:generic|proper)|(?:a|an|the) \S+-(?:safe|backed|based))/iu;
/** "with Postgres", "with HMAC": a named tool (case-sensitive, so "with the latest" is not one). */
const WITH_NAME = /\b(?:[Ww]ith|[Uu]sing|[Vv]ia) (?:an? )?\p{Lu}[\p{L}\p{N}]/u;
/** A reason stated inside the sentence, strong enough to make even a process step a choice. */
const STRONG_REASON = /\b(?:because|so that|instead of|rather than)\b/i;
/** A sentence that states a problem: the one after it may be the fix chosen for it. */
const PROBLEM =
  /\b(?:doesn't|don't|does not|do not|can't|cannot|can not|isn't|aren't|won't|wouldn't|not supported|unsupported|missing|fails?|failed|failing|broken|error|errors|no \S+ (?:module|support|file|config)|^no \p{L}|is stale|conflicts?|deprecated|too slow|leaks?)\b/iu;

/** Verbs a user instruction opens with. */
const IMPERATIVE =
  /^(?:please\s+|also\s+|and\s+|just\s+|then\s+)*(?:don't|do not|never|always|only|avoid|prefer|use|switch|keep|port|create|delete|remove|drop|replace|move|rename|add|make|stick|go|store|put|write|set|change|migrate|upgrade|downgrade|pin|limit|stop|install|build|implement|fall back|leave|run|skip|ignore|have|let's|lets)\b/i;
/** A constraint in an instruction: a negation, a contrast, a condition of done. */
const CONSTRAINT =
  /\b(?:no|not|don't|do not|never|always|only|instead|rather than|without|but keep|keep|until|must|at least|at most|standalone|100%)\b/i;
/** A user instruction names what to build with: "to Rust", "by Next.js", "with Postgres", "using pnpm". */
const WITH_TOOL = /\b(?:to|by|with|using|via|in|on)\s+([\p{Lu}`][\p{L}\p{N}.+#`-]*)/u;
/** A plan's scope rule, one list item: "No CI/CD integration yet", "Never call the API from tests". */
const SCOPE_RULE = /^(?:no|never|don't|do not|only|always)\s+\p{L}/iu;
/** A clause after a dash or a condition ("… — just document, don't optimize", "If X fails, fall back to …"). */
const LATER_CLAUSE = /(?:\s[—–-]\s|^if [^,]{2,80},\s*)(.+)$/i;

/** A short user reply that accepts what was proposed ("Sounds good", "Yes, do it", "create the beads"). */
const ACCEPTANCE =
  /^(?:(?:yes|yep|yeah|ok(?:ay)?|sure|sounds good|agreed|agree|lgtm|perfect|great|approved?|go ahead|do it|let's do (?:it|that|this)|ship it|proceed|fine)\b|(?:create|implement|do|build|make|write|go with|apply|start)\s+(?:it|that|this|them|those|the\s+\w+)\s*[.!]*$)/i;
/** An assistant turn that asks for a go-ahead: a plan, a proposal, a recommendation. */
const PROPOSAL =
  /\b(?:plan|propos\w*|approval|suggest\w*|recommend\w*|would you like|shall i|should i|want me to|option \w|i'd go with|i would go with)\b/i;
/** The assistant agreeing to what the user proposed. */
const AGREEMENT = /^(?:agreed|sounds good|good call|makes sense|yes|ok(?:ay)?|sure|done)\b[\s,:;!.—–-]*/i;
/** How the assistant proposes: "I suggest X", "I'd recommend X", "my recommendation is X". */
const PROPOSING =
  /\b(?:i(?:'d| would)? (?:suggest|recommend|propose|go with)|my recommendation|the best option is)\b/i;

function firstVerb(sentence: string): string | undefined {
  return COMMITMENT.exec(sentence)?.[1]?.toLowerCase();
}

/** An assistant sentence that commits to an approach, with something that makes it a choice. */
function assistantChoice(sentence: string, previous: string | undefined): { reason?: string } | undefined {
  const rest = sentence.replace(ACKNOWLEDGEMENT, "");
  if (EXPLICIT.test(rest) || PROPOSING.test(rest)) return {};
  if (REPORTED_CHOICE.test(rest)) return SUBSTANCE.test(rest) || /[(`/]/.test(rest) ? {} : undefined;
  const verb = firstVerb(rest);
  if (!verb) return undefined;
  // Reading a key from the environment "because it must not be committed" is a choice, not a process step.
  if (PROCESS_VERBS.has(verb)) return STRONG_REASON.test(rest) ? {} : undefined;
  const reason = previous && PROBLEM.test(previous) && !QUESTION_MARK.test(previous) ? previous : undefined;
  if (reason) return { reason };
  return SUBSTANCE.test(rest) || WITH_NAME.test(rest) ? {} : undefined;
}

/** A user sentence that sets a rule or picks a tool (the first request's bare task does not count). */
function userChoice(sentence: string, opening: boolean): boolean {
  const rest = sentence.replace(/^\/[\w:-]+\s+/, "").replace(ACKNOWLEDGEMENT, "");
  if (EXPLICIT.test(rest)) return true;
  // "Let's use signed cookies" settles something; "Let's look at the logs first" is a next step.
  const lets = /^let's\s+(?:also\s+|just\s+|now\s+|first\s+)*(\p{L}+)/iu.exec(rest)?.[1]?.toLowerCase();
  if (lets) return !PROCESS_VERBS.has(lets) || CONSTRAINT.test(rest);
  const imperative =
    IMPERATIVE.test(rest) || (LATER_CLAUSE.test(rest) && IMPERATIVE.test(LATER_CLAUSE.exec(rest)?.[1] ?? ""));
  if (!imperative) return false;
  if (CONSTRAINT.test(rest)) return true;
  const tool = WITH_TOOL.exec(rest)?.[1];
  // The opening request is the topic unless it fixes a tool ("Port this project to Rust").
  return tool !== undefined && (!opening || /^[\p{Lu}`]/u.test(tool));
}

/** A plan line the user accepted: an instruction, a scope rule (a list item), or a dash clause carrying one. */
function planChoice(sentence: string, listItem: boolean): boolean {
  if (listItem && SCOPE_RULE.test(sentence)) return true;
  const clause = LATER_CLAUSE.exec(sentence)?.[1];
  const candidates = clause ? [sentence, clause] : [sentence];
  return candidates.some((c) => {
    if (!IMPERATIVE.test(c)) return false;
    const verb = /^(?:please\s+|also\s+)*(\p{L}+)/iu.exec(c)?.[1]?.toLowerCase() ?? "";
    if (PROCESS_VERBS.has(verb) && !CONSTRAINT.test(c)) return false;
    return CONSTRAINT.test(c) || SUBSTANCE.test(c) || WITH_NAME.test(c) || /`/.test(c);
  });
}

/**
 * The decisions of a conversation in order. `turns` are the turns of one session (or one batch of it) as
 * they were said.
 */
export function findDecisions(turns: DecisionTurn[]): Decision[] {
  const decisions: Decision[] = [];
  let position = 0;
  let openingSeen = false;
  turns.forEach((turn, index) => {
    const sentences = turn.sentences ?? sentencesOf(turn.text);
    const next = turns.slice(index + 1).find((t) => t.role !== turn.role);
    const accepted =
      turn.role === "assistant" &&
      next !== undefined &&
      PROPOSAL.test(turn.text) &&
      next.text.trim().split(/\s+/).length <= 12 &&
      !QUESTION_MARK.test(next.text) &&
      ACCEPTANCE.test(
        next.text
          .trim()
          .replace(ACKNOWLEDGEMENT, (m) => (/^(?:yes|ok|okay|sure|great|perfect)/i.test(m) ? "yes " : "")),
      );
    const opening = turn.role === "user" && !openingSeen;
    if (turn.role === "user") openingSeen = true;
    sentences.forEach(({ text: sentence, listItem }, i) => {
      position++;
      if (disqualified(sentence) || /^\/(?:compact|clear|model|help|init)\b/.test(sentence)) return;
      const base = { role: turn.role, key: turn.key, position, sentence };
      if (turn.role === "user") {
        if (userChoice(sentence, opening && i === 0)) decisions.push({ ...base, text: sentence, weight: 3 });
        return;
      }
      if (accepted && planChoice(sentence, listItem)) {
        decisions.push({ ...base, text: sentence, weight: 3 });
        return;
      }
      const agreed = AGREEMENT.exec(sentence);
      const asked = turns[index - 1];
      if (
        agreed &&
        asked?.role === "user" &&
        !QUESTION_MARK.test(asked.text) &&
        contentWords(sentence.slice(agreed[0].length)).length >= 2
      ) {
        const text = sentence.slice(agreed[0].length);
        decisions.push({ ...base, text: text[0].toUpperCase() + text.slice(1), weight: 3 });
        return;
      }
      const choice = assistantChoice(sentence, sentences[i - 1]?.text);
      if (choice)
        decisions.push({ ...base, text: sentence, reason: choice.reason, weight: choice.reason ? 2 : 1 });
    });
  });
  return decisions;
}

/** Weighing options, hedging or a question: not something that was said as settled. */
export function isTentative(sentence: string): boolean {
  return QUESTION_MARK.test(sentence) || DELIBERATION.test(sentence.replace(ACKNOWLEDGEMENT, ""));
}

/** The assistant telling what it does next ("Let me check the config", "Now add the route:"). */
export function isNarration(sentence: string): boolean {
  const rest = sentence.replace(ACKNOWLEDGEMENT, "");
  const verb = firstVerb(rest);
  if (verb && PROCESS_VERBS.has(verb)) return true;
  return /^(?:now |next,? |then |first,? )?(?:let me|let's|i'll|i will)\b|^(?:now|next|then|first)\b.*:$|^(?:add|update|run|check|create|write|implement|apply|close|commit|push)\b/i.test(
    sentence.trim(),
  );
}

/**
 * Whether one sentence, read alone, states a decision ("We'll use SQLite for the store", "Decided to drop
 * Python 2"): as a user's instruction or as a commitment, not a question, deliberation or thanks.
 */
export function isDecision(sentence: string): boolean {
  if (disqualified(sentence)) return false;
  const rest = sentence.replace(ACKNOWLEDGEMENT, "");
  return userChoice(rest, false) || assistantChoice(rest, undefined) !== undefined || SCOPE_RULE.test(rest);
}

const overlap = (a: string[], b: string[]) => {
  const set = new Set(a);
  return b.filter((w) => set.has(w)).length / Math.max(1, Math.min(a.length, b.length));
};

/**
 * At most `max` decisions, surest first when there are more, shown in conversation order; a decision
 * restating an earlier one (most of its words) is left out.
 */
export function pickDecisions(decisions: Decision[], max: number): Decision[] {
  const kept: { d: Decision; words: string[] }[] = [];
  const ranked = [...decisions].sort((a, b) => b.weight - a.weight || a.position - b.position);
  for (const d of ranked) {
    const words = contentWords(d.text);
    const same = kept.find((k) => overlap(k.words, words) >= 0.6);
    // A restatement with more detail ("Agreed: sessions will be signed cookies in `src/auth/session.ts`")
    // takes the place of the shorter one.
    if (same) {
      if (words.length > same.words.length && d.weight >= same.d.weight) Object.assign(same, { d, words });
      continue;
    }
    if (kept.length < max) kept.push({ d, words });
  }
  return kept.map((k) => k.d).sort((a, b) => a.position - b.position);
}
