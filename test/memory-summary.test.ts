import { describe, expect, test } from "bun:test";
import { chunkRecords } from "../src/memory/chunking.ts";
import { extractiveSummary, isDecision, isFilePath } from "../src/memory/summary.ts";
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
    const user = `${"We need to decide where session auth lives and who owns it. ".repeat(3)}My email is [REDACTED:email] and more after it.`;
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
