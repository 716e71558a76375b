/**
 * The 1 MB adversarial and dense inputs of `benchmark/privacy.ts`, built the same way here: what `redact()`
 * makes of them. The benchmark times them; this file pins their output, so a change made for speed (a
 * keyword scan, a PEM pairing, a cap on a value) cannot change what is redacted. No timing assertions.
 */
import { describe, expect, test } from "bun:test";
import { redact } from "../src/privacy/index.ts";

const MB = 1 << 20;
/** Whole repeats of `unit`, at least 1 MB. */
const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length));

describe("1 MB inputs built to make a backtracking engine go quadratic, without a secret in them", () => {
  const untouched: [string, string][] = [
    ["runs without @", fill("abcdefghijklmnopqrstuvwxyz0123456789._%+-")],
    ["one @ after a long local part", `${"a".repeat(MB)}@`],
    ["dotted domain chain", `a@${fill("a.")}a`],
    ["nested quotes", fill(`"'\`"'\``)],
    ["long base64-ish run", fill("QmFzZTY0aXNoK2RhdGEvd2l0aG91dCBlbmQ=")],
    ["eyJ repeated", fill("eyJ.")],
    ["digits and separators", fill("1234-5678 ")],
    ["hex and colons", fill("fe80:")],
    ["scheme://user: without @", fill("https://user:")],
    ["home paths without a name", fill("/Users/")],
    ["a trigger word and an open quote, repeated", fill("token: '")],
  ];
  for (const [name, text] of untouched)
    test(`${name}: kept as it is`, () => {
      const result = redact(text);
      expect(result.findings).toEqual([]);
      expect(result.text === text).toBe(true);
      expect(result.review).toBe(false);
    });
});

describe("1 MB inputs dense with constructs", () => {
  test("28k PEM BEGIN lines without END: the BEGIN lines and the body after each are one marker", () => {
    // A key cut short runs to the end of its body, which stops where the next BEGIN line starts, newline or
    // not (`MIIEow` is glued to it); a key that starts where the last one ended extends its marker.
    const result = redact(fill("-----BEGIN RSA PRIVATE KEY-----\nMIIEow"));
    expect(result.text).toBe("[REDACTED:private_key]");
    expect(result.findings).toEqual([{ kind: "private_key" }]);
  });

  test("40k `api_key=<secret>` pairs: every value redacted, every name kept", () => {
    const unit = "api_key=a1B2c3D4e5F6g7H8 ";
    const n = Math.ceil(MB / unit.length);
    const result = redact(unit.repeat(n));
    expect(result.text === "api_key=[REDACTED:secret] ".repeat(n)).toBe(true);
    expect(result.findings.length).toBe(n);
  });

  test("prose with 24k tokens and e-mail addresses: each one redacted, the prose kept", () => {
    const unit = "The deploy used ghp_0123456789abcdefghijABCDEFGHIJ012345 and mailed ops@example.com. ";
    const n = Math.ceil(MB / unit.length);
    const result = redact(unit.repeat(n));
    expect(result.text === "The deploy used [REDACTED:github] and mailed [REDACTED:email]. ".repeat(n)).toBe(
      true,
    );
    expect(result.findings.filter((f) => f.kind === "github").length).toBe(n);
    expect(result.findings.filter((f) => f.kind === "email").length).toBe(n);
  });

  test("`password=` repeated: the value after the first name, found again wherever it repeats, takes it all", () => {
    const result = redact(fill("password="));
    expect(result.text).toMatch(/^(?:\[REDACTED:password\])+$/);
    expect(result.findings.length).toBeGreaterThan(0);
    expect(result.findings.every((f) => f.kind === "password")).toBe(true);
  });
});
