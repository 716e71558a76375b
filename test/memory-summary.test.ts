import { describe, expect, test } from "bun:test";
import type { ChatRecord } from "../src/memory/chatlog.ts";
import { chunkRecords } from "../src/memory/chunking.ts";
import { decidedLines, extractiveSummary, isDecision, isFilePath } from "../src/memory/summary.ts";
import { exchange } from "./support/memory-helpers.ts";

describe("the extractive summary's Files: line", () => {
  test("paths and file names are files; brands, versions, word pairs and URLs are not", () => {
    const files = [
      "src/memory/summary.ts",
      "config.json",
      "README.md",
      "app.js",
      "Button.js",
      "db/migrations/0042.sql",
      "./build",
      "~/notes",
      "/etc/hosts",
      "src/memory/",
      "src/a/b",
      "proto/api.proto",
      "C:\\work\\main.rs",
    ];
    const notFiles = [
      "Next.js",
      "Node.js",
      "UI/UX",
      "items/lists",
      "and/or",
      "v1.2.0",
      "1.2/1.3",
      "e.g",
      "user.id",
      "src/my file.ts",
      "https://example.com/a/b",
      "2025/03/01",
    ];
    for (const f of files) expect({ f, file: isFilePath(f) }).toEqual({ f, file: true });
    for (const f of notFiles) expect({ f, file: isFilePath(f) }).toEqual({ f, file: false });
  });

  test("a conversation naming Next.js, UI/UX and items/lists lists only real files, one bullet per decision", () => {
    const chunks = chunkRecords(
      exchange(
        "sum",
        "Should the UI/UX of the items/lists page move to Next.js 14.2?",
        "- Used the app router in src/app/page.tsx and decided to keep Tailwind.\n* We will switch to server actions in lib/actions.ts.\n1. Removed the old pages/index.js file.",
      ),
    );
    const summary = extractiveSummary(chunks);
    const files = summary.match(/^Files: (.*)$/m)?.[1].split(", ") ?? [];
    expect(files.sort()).toEqual(["lib/actions.ts", "pages/index.js", "src/app/page.tsx"]);
    expect(summary).not.toMatch(/^- [-*•]/m);
    expect(summary).not.toMatch(/^- \d+\. /m);
    expect(summary).toContain("- Used the app router in src/app/page.tsx");
  });
});

describe("the extractive summary's Discussed: line", () => {
  test("clipped, it never ends in half a redaction marker", () => {
    // One long sentence (the topic is the first sentence of the request) with a marker near the cut.
    const user = `${"we need to decide where session auth lives and who owns it, ".repeat(3)}my email is [REDACTED:email] and more after it.`;
    const cut = user.indexOf("[REDACTED:email]") + 2; // the 200-character clip would fall inside the marker
    const padded = `${"x".repeat(Math.max(0, 199 - cut))}${user}`;
    const summary = extractiveSummary(chunkRecords(exchange("clip", padded, "Agreed.")));
    const discussed = summary.match(/^Discussed: (.*)$/m)?.[1] ?? "";
    expect(discussed.endsWith("…")).toBe(true);
    expect(discussed).not.toMatch(/\[[A-Z:a-z_]*…$/);
    expect(discussed).toMatch(/is…$/);
  });
});

describe("the extractive summary's Decided: lines", () => {
  const decidedLines = (user: string, assistant: string) => {
    const summary = extractiveSummary(chunkRecords(exchange("decided", user, assistant)));
    return (
      summary
        .match(/^Decided:\n((?:- .*\n?)*)/m)?.[1]
        .trim()
        .split("\n") ?? []
    );
  };

  test("statements of a decision are listed", () => {
    for (const sentence of [
      "We'll use SQLite for the store.",
      "Decided to drop Python 2 support.",
      "Let's keep the retry limit at three attempts.",
      "The fix was a missing await in the session loader.",
      "Do not commit the generated bundle to git.",
      "Great, we'll switch the queue to Redis streams.",
      // An instruction opening with "have" or "do" is no question.
      "Have the CI use Node 20 instead of 18.",
    ]) {
      expect({ sentence, decision: isDecision(sentence) }).toEqual({ sentence, decision: true });
    }
    expect(
      decidedLines(
        "How should the store work?",
        "We'll use SQLite for the store. Decided to drop Python 2 support.",
      ),
    ).toEqual(["- We'll use SQLite for the store.", "- Decided to drop Python 2 support."]);
  });

  test("questions, acknowledgements and greetings are not decisions", () => {
    for (const sentence of [
      "Great, that fixed it.",
      "Should we use Redis for the cache?",
      "Should we use Redis for the cache",
      "How do we switch the build to esbuild",
      "Have you switched the build to esbuild",
      "Do we still need to support Windows 7?",
      "I'm not sure whether we should move to Postgres.",
      "Thanks, that should do it!",
      "Yes, let's do that!",
      "Perfect, it's fixed now.",
      "Hi! Hope that fixed it for you.",
      "Now let me check if the hooks directory should move to src/hooks.",
      "Let me read the current config and then replace it:",
      "Let's look at the failing test logs first.",
    ]) {
      expect({ sentence, decision: isDecision(sentence) }).toEqual({ sentence, decision: false });
    }
    const lines = decidedLines(
      "Should we use Redis for the cache? Great, that fixed it. Thanks, that should do it!",
      "Yes, let's do that! We decided to keep the cache in memory for now.",
    );
    expect(lines).toEqual(["- We decided to keep the cache in memory for now."]);
  });

  test("a question mark inside a URL does not make a statement a question", () => {
    expect(isDecision("We fixed the redirect for /login?next=/home in the router.")).toBe(true);
  });
});

/** Records of one session from alternating [role, text] pairs. */
function session(id: string, turns: [role: "user" | "assistant", text: string][]): ChatRecord[] {
  return turns.map(([role, text], i) => ({
    ts: `2025-03-01T10:${String(i).padStart(2, "0")}:00.000Z`,
    session_id: id,
    role,
    text,
    uuid: `${id}-${i}`,
  }));
}

const decided = (summary: string) => decidedLines(summary).join("\n");

describe("decisions found by the shape of the exchange", () => {
  test("the settled choice is kept; the question, deliberation and secrets are not", () => {
    const summary = extractiveSummary(
      chunkRecords(
        session("cookies", [
          [
            "user",
            "We need to decide how sessions are stored. Redis or signed cookies? The staging key is [REDACTED:stripe-key] and the old one was 9fQx7Lm2Vb8Kp4Rt6Wz1Yc3Nd5Hg0Js.",
          ],
          [
            "assistant",
            "Both work. Redis gives server-side revocation but adds a service to run. I think Redis is overkill for a single server. Maybe we could use JWTs too.",
          ],
          ["user", "Let's go with signed cookies (HMAC), no Redis."],
          [
            "assistant",
            "Agreed: sessions will be signed cookies (HMAC-SHA256) in `src/auth/session.ts`, no Redis. I'll read the signing key from SESSION_SECRET in `.env` because it must not be committed.",
          ],
          ["user", "Great, thanks!"],
        ]),
      ),
    );
    const lines = decidedLines(summary);
    expect(lines.some((l) => /signed cookies \(HMAC/.test(l) && /no Redis/.test(l))).toBe(true);
    expect(decided(summary)).not.toMatch(/need to decide|I think|Maybe|JWT/);
    expect(decided(summary)).toContain("SESSION_SECRET");
    const files = summary.match(/^Files: (.*)$/m)?.[1].split(", ") ?? [];
    expect(files.sort()).toEqual([".env", "src/auth/session.ts"]);
    expect(summary).not.toContain("REDACTED");
    expect(summary).not.toContain("9fQx7Lm2");
  });

  test("an assistant narrating its steps decides nothing; a commitment with its reason does", () => {
    const summary = extractiveSummary(
      chunkRecords(
        session("steps", [
          ["user", "Implement the review page."],
          [
            "assistant",
            "Let me read the router first. Now let me run the tests. I need to commit the changes before finishing. " +
              "The root layout doesn't render flash messages. I'll add a flash display inline in the ReviewLive template.",
          ],
        ]),
      ),
    );
    expect(decidedLines(summary)).toEqual([
      "I'll add a flash display inline in the ReviewLive template. (why: The root layout doesn't render flash messages.)",
    ]);
  });

  test("a plan's rules are decisions once the user accepts it, not before", () => {
    const plan =
      "Here is the plan for your approval.\n\n## Solution\n- Add Credo as a dev dependency via `mix igniter.install`.\n\n## No-gos\n- No CI integration yet (separate task)\n- No custom checks";
    const accepted = extractiveSummary(
      chunkRecords(
        session("plan", [
          ["user", "Draft the quality tooling tasks."],
          ["assistant", plan],
          ["user", "create the beads"],
        ]),
      ),
    );
    expect(decidedLines(accepted)).toEqual([
      "Add Credo as a dev dependency via `mix igniter.install`.",
      "No CI integration yet (separate task)",
      "No custom checks",
    ]);
    const refused = extractiveSummary(
      chunkRecords(
        session("plan2", [
          ["user", "Draft the quality tooling tasks."],
          ["assistant", plan],
          ["user", "Hmm, why Credo? What else is there?"],
        ]),
      ),
    );
    expect(decidedLines(refused).filter((l) => l.startsWith("No "))).toEqual([]);
  });

  test("the opening request is the topic, unless it fixes a tool or a constraint", () => {
    const plain = extractiveSummary(
      chunkRecords(
        session("t1", [
          ["user", "Implement the billing export."],
          ["assistant", "Done."],
        ]),
      ),
    );
    expect(plain).toMatch(/^Discussed: Implement the billing export\./);
    expect(decidedLines(plain)).toEqual([]);
    const constrained = extractiveSummary(
      chunkRecords(
        session("t2", [
          ["user", "Port this project to Rust. Create a standalone library (no Python bindings needed)."],
          ["assistant", "Done."],
        ]),
      ),
    );
    expect(decidedLines(constrained)).toEqual([
      "Port this project to Rust.",
      "Create a standalone library (no Python bindings needed).",
    ]);
  });

  test("Files: takes a bare name the project holds (Makefile), not one it does not", () => {
    const chunks = chunkRecords(
      session("make", [
        ["user", "Add a lint target to the Makefile and the Justfile."],
        ["assistant", "Added `lint` to the Makefile; there is no Justfile here."],
      ]),
    );
    const files = (summary: string) => summary.match(/^Files: (.*)$/m)?.[1].split(", ") ?? [];
    expect(files(extractiveSummary(chunks))).toEqual([]);
    expect(files(extractiveSummary(chunks, undefined, (name) => name === "Makefile"))).toEqual(["Makefile"]);
  });

  test("in a dialogue that names its speakers, the notes say who said what", () => {
    const summary = extractiveSummary(
      chunkRecords(
        session("names", [
          ["user", "Hey Mel! I went to the pottery class yesterday and made a blue bowl for the kitchen."],
          [
            "assistant",
            "Thanks, Caroline! The pottery class sounds fun. I painted a lake sunrise for the kitchen last week.",
          ],
          [
            "user",
            "Thanks, Mel. The lake sunrise painting would look lovely next to the blue bowl in the kitchen.",
          ],
          ["assistant", "Hey Caroline, the kitchen will have a pottery corner and a painting corner then."],
        ]),
      ),
    );
    expect(summary).toMatch(/^ {2}Caroline: /m);
    expect(summary).toMatch(/^ {2}Mel: /m);
  });
});
