/**
 * The patterns that run only at candidate starts (`src/privacy/scan.ts`) must find exactly what a global
 * search finds: each pair is run both ways over random text built from the characters its pattern reads,
 * and over the cases at the edges of its candidate rule.
 */
import { describe, expect, test } from "bun:test";
import { redact } from "../src/privacy/index.ts";
import { personalScans } from "../src/privacy/personal.ts";
import { providerScans } from "../src/privacy/providers.ts";
import { type CandidateScan, matchFrom, sticky } from "../src/privacy/scan.ts";
import { structuredScans } from "../src/privacy/structured.ts";
import { seededRandom } from "./support/random.ts";

function globalMatches(pattern: RegExp, text: string): [number, string][] {
  const re = new RegExp(pattern.source, pattern.flags);
  const found: [number, string][] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) found.push([m.index, m[0]]);
  return found;
}

function candidateMatches({ pattern, nextStart }: CandidateScan, text: string): [number, string][] {
  const re = sticky(pattern);
  const found: [number, string][] = [];
  for (
    let m = matchFrom(text, re, nextStart, 0);
    m;
    m = matchFrom(text, re, nextStart, m.index + m[0].length)
  )
    found.push([m.index, m[0]]);
  return found;
}

/** Text from `pieces` (characters or whole words), so that the pattern's parts meet often. */
function texts(pieces: string[], count: number, seed: number): string[] {
  const next = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = "";
    const length = Math.floor(next() * 300);
    while (text.length < length) text += pieces[Math.floor(next() * pieces.length)];
    out.push(text);
  }
  return out;
}

const chars = (s: string) => [...s];
const ALPHABETS: Record<string, string[]> = {
  email: [...chars("ab_.%+-@@ \n9:/Z"), "x.com", "mail", "git@", "a".repeat(70), `${"l".repeat(62)}@x.com`],
  ipv4: [...chars("0123456789....  a:_\n"), "255", "256.", "1.2.3.4", "10.0.0.1", "v", "1234"],
  ipv6: [...chars("0123456789abcdefABCDEF:::..%  g_\n"), "fe80", "::1", "2001:db8", "12345"],
  phoneContext: [
    ...chars("0123456789  +-_a\n"),
    "phone",
    "Tel",
    "call me",
    "NUMBER",
    "whatsapp",
    ": ",
    "4155550132",
    "13912345678",
    "x".repeat(18),
  ],
  home: [
    ...chars("/\\¥:Cc _.-\nab"),
    "/Users/",
    "/home/",
    "Users",
    "home",
    "C:\\\\Users\\",
    "jdoe",
    "John Doe",
    "Shared",
    "\\n",
  ],
  dashedHome: [...chars("-_aZ9 /\n"), "-Users-", "-home-", "Shared-", "jdoe", "-home-jdoe-app"],
  urlCredentials: [...chars("ab+.-9:/@ \n#"), "://", "https", "user", ":pw@", "x".repeat(30), "h.io"],
  keyBodyLine: [...chars("Ab9+/=  \t\n"), "QmFzZTY0aXNoK2RhdGEvd2l0aG91dCBlbmQ", "\n", "x".repeat(40)],
  twilio: [
    ...chars("SKAC09af_+ "),
    "SK",
    "AC",
    "0123456789abcdef",
    "0123456789ABCDEF",
    "SK0123456789abcdef0123456789ABCDEF",
  ],
  mailgun: [
    ...chars("0af-9x "),
    "0123456789abcdef",
    "-01234567-",
    "01234567",
    "0123456789abcdef0123456789abcdef-01234567-89abcdef",
  ],
  mailchimp: [...chars("aZ9-_ "), "-us1", "-us12", "0123456789abcdefABCDEF0123456789"],
  vault: [...chars("sS.aZ9_ "), "s.", "Ab1Cd2Ef3Gh4", "xyz", "s.Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8"],
  yandex: [...chars("YCaZ9_- "), "YC", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7", "xyz"],
  discord: [
    ...chars("aZ9_-.+ \n"),
    "\x1b[93m",
    "MTk4NjIyNDgzNDcxOTI1MjQ4",
    ".Cl2FMQ.",
    "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
  ],
};

const SCANS: Record<string, CandidateScan> = { ...personalScans, ...structuredScans, ...providerScans() };

describe("a pattern run at candidate starts finds what a global search finds", () => {
  for (const [name, scan] of Object.entries(SCANS)) {
    test(name, () => {
      const alphabet = ALPHABETS[name];
      expect(alphabet).toBeDefined();
      let matched = 0;
      for (const text of texts(alphabet, 3000, name.length)) {
        const expected = globalMatches(scan.pattern, text);
        matched += expected.length;
        expect(candidateMatches(scan, text)).toEqual(expected);
        // Scanners remember where their literals are: the same text scanned again finds the same.
        expect(candidateMatches(scan, text)).toEqual(expected);
      }
      // The random texts must exercise the pattern, or the comparison proves nothing.
      expect(matched).toBeGreaterThan(20);
    });
  }
});

test("the same text redacted twice in one process is redacted both times", () => {
  // Two identical turns in one capture, or two identical files in one code index.
  const text =
    "see /Users/bobsmith/project/x and -Users-bobsmith-proj and SK0123456789abcdef0123456789abcdef ok";
  const first = redact(text).text;
  expect(first).not.toContain("bobsmith");
  expect(first).not.toContain("SK0123456789abcdef");
  expect(redact(text).text).toBe(first);
  expect(redact(`${text} `).text).toBe(`${first} `);
  expect(redact(text).text).toBe(first);
});
