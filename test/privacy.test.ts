import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { loadProjectRules, maskCandidates, redact, strictEntropyPass } from "../src/privacy/index.ts";
import { decodesToPlaceholder, isDominatedByOneChar, isPlaceholderWord } from "../src/privacy/text.ts";
import { runBinary, tempDir } from "./support/helpers.ts";
import { seededRandom } from "./support/random.ts";

// Every secret below is generated here from a seeded generator: realistic in shape, owned by no one.
const random = seededRandom(0x5eed);
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = "0123456789abcdef";
const B64 = `${ALNUM}+/`;
function pick(chars: string, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += chars[Math.floor(random() * chars.length)];
  return s;
}
const b64url = (s: string) => Buffer.from(s).toString("base64url");

/** One generated token per provider family, with the kind its rule reports. */
function providerTokens(): [string, string][] {
  return [
    ["aws", `AKIA${pick(UPPER + DIGITS, 16)}`],
    ["gcp", `AIzaSy${pick(`${ALNUM}_-`, 33)}`],
    ["azure", `${pick(ALNUM, 3)}8Q~${pick(`${ALNUM}_~.-`, 34)}`],
    ["github", `ghp_${pick(ALNUM, 36)}`],
    ["github", `github_pat_11${pick(UPPER + DIGITS, 20)}_${pick(ALNUM, 59)}`],
    ["gitlab", `glpat-${pick(`${ALNUM}_-`, 20)}`],
    ["slack", `xoxb-${pick(DIGITS, 12)}-${pick(DIGITS, 13)}-${pick(ALNUM, 24)}`],
    [
      "slack",
      `https://hooks.slack.com/services/T${pick(UPPER + DIGITS, 8)}/B${pick(UPPER + DIGITS, 10)}/${pick(ALNUM, 24)}`,
    ],
    ["stripe", `sk_live_${pick(ALNUM, 24)}`],
    ["openai", `sk-proj-${pick(`${ALNUM}_-`, 60)}T3BlbkFJ${pick(`${ALNUM}_-`, 60)}`],
    ["anthropic", `sk-ant-api03-${pick(`${ALNUM}_-`, 93)}AA`],
    ["npm", `npm_${pick(ALNUM, 36)}`],
    ["pypi", `pypi-AgEIcHlwaS5vcmc${pick(`${ALNUM}_-`, 70)}`],
    ["twilio", `SK${pick(HEX, 32)}`],
    ["sendgrid", `SG.${pick(`${ALNUM}_-`, 22)}.${pick(`${ALNUM}_-`, 43)}`],
    ["shopify", `shpat_${pick(HEX, 32)}`],
    ["huggingface", `hf_${pick(UPPER + LOWER, 34)}`],
    ["telegram", `${pick(DIGITS, 10)}:AA${pick(`${ALNUM}_-`, 33)}`],
    ["discord", `${b64url(pick(DIGITS, 18))}.${pick(`${ALNUM}_-`, 6)}.${pick(`${ALNUM}_-`, 38)}`],
    [
      "jwt",
      `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${pick(DIGITS, 8)}","iat":1700000000}`)}.${pick(`${ALNUM}_-`, 43)}`,
    ],
    ["vault", `hvs.${pick(`${ALNUM}_-`, 90)}`],
    ["databricks", `dapi${pick(HEX, 32)}`],
    ["digitalocean", `dop_v1_${pick(HEX, 64)}`],
  ];
}

/** A valid IBAN for a country, its check digits computed (ISO 13616). */
function iban(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const d of numeric) remainder = (remainder * 10 + Number(d)) % 97;
  return `${country}${String(98 - remainder).padStart(2, "0")}${bban}`;
}

/** A Visa number with a valid Luhn check digit. */
function visa(): string {
  const body = `4${pick(DIGITS, 14)}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}

describe("provider tokens", () => {
  for (const [kind, token] of providerTokens()) {
    test(`${kind} token ${token.slice(0, 12)}… is redacted in prose and in an assignment`, () => {
      const prose = redact(`I pasted ${token} into the terminal by mistake.`);
      expect(prose.text).not.toContain(token);
      expect(prose.text).toContain(`[REDACTED:${kind}]`);
      expect(prose.text.startsWith("I pasted ")).toBe(true);
      expect(prose.text.endsWith(" into the terminal by mistake.")).toBe(true);
      const assigned = redact(`export SERVICE_CREDENTIAL="${token}"`);
      expect(assigned.text).not.toContain(token);
    });
  }

  test("documentation placeholders are left alone", () => {
    const placeholders = [
      "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "AKIAXXXXXXXXXXXXXXXX",
      "AKIAIOSFODNN7EXAMPLE",
      "sk_live_AAAAAAAAAAAAAAAAAAAAAAAA",
      "xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx",
      "glpat-XXXXXXXXXXXXXXXXXXXX",
      "hf_FakeFakeFakeFakeFakeFakeFakeFakeFa",
      "Authorization: Bearer <your-token-here>",
      "Authorization: Bearer $API_TOKEN",
      // Template syntax is the point of these three strings, not a mistaken template literal.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: placeholder syntax under test
      "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
      'password = "changeme"',
      'api_key = ""',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: placeholder syntax under test
      "token: ${NPM_TOKEN}",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: placeholder syntax under test
      "postgres://user:${DB_PASSWORD}@db:5432/app",
      "https://username:password@example.com",
      "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    ];
    for (const text of placeholders) expect(redact(text).text).toBe(text);
  });

  test("a token found once is redacted wherever it appears again", () => {
    const value = pick(ALNUM, 20);
    const out = redact(`api_key=${value}\nlater I echoed ${value} to check`);
    expect(out.text).not.toContain(value);
    expect(out.findings.length).toBe(2);
  });
});

describe("benign look-alikes are kept", () => {
  const benign = [
    `3c7f3f0e08c5b84a0cd3da69dbfd7ac9931cea63 feat(git): include link in report (#1698)`,
    `commit ${pick(HEX, 40)}\nAuthor: CI`,
    `"kms_key_id": "555ea4a3-d53a-4412-9c66-3a7cb667b0d6",`,
    `sessionId: ${crypto.randomUUID()}`,
    `    resolution: {integrity: sha512-${pick(B64, 86)}==}`,
    `github.com/spf13/cast v1.7.1/go.mod h1:${pick(B64, 43)}=`,
    "git clone git@github.com:acme/widgets.git",
    "the server listens on 192.168.1.20:8080 and 10.0.0.5",
    "std::cout << value; MyClass::toString(); a[::2]",
    '@app.route("/login", methods=["POST"])',
    "Version 1.2.3 released; see /usr/local/bin/tool and ~/.config/tool/settings.json",
    "export function decodeJwtExpMs(token: string): number | undefined {",
    "const key = CreateApiKeySchema.parse(input);",
    "  token: envToken,",
    "password = os.environ['DB_PASSWORD']",
    "the password is incorrect",
    '"SecretApiKey": "string"',
    'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
    "Ratio 1:2:3:4 at 12:34:56, MAC aa:bb:cc:dd:ee:ff",
    "order #4012-8888-8888-1882 shipped", // fails the Luhn check
    "Pass `projectRoot` to `resolveLlm` so the project's rules apply.",
    'const files = { "pkg/secret.py": "print(42)", "secret.ts": "export {}" };',
    'writeFileSync(file, "# Rules\\n\\n@AGENTS.md\\n");',
    "nav-home-link and a --users-only flag",
  ];
  for (const text of benign) {
    test(JSON.stringify(text.slice(0, 60)), () => {
      expect(redact(text).text).toBe(text);
    });
  }
});

describe("private keys across lines", () => {
  const body = Array.from({ length: 6 }, () => pick(B64, 64)).join("\n");
  const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`;

  test("a whole PEM block becomes one marker", () => {
    const out = redact(`key file:\n${pem}\nthat's it`);
    expect(out.text).toBe("key file:\n[REDACTED:private_key]\nthat's it");
  });

  test("a JSON-escaped key inside a service-account file is redacted", () => {
    const json = JSON.stringify({
      type: "service_account",
      private_key: `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`,
    });
    const out = redact(json);
    expect(out.text).not.toContain(body.split("\n")[2]);
    expect(out.text).toContain("[REDACTED:private_key]");
    expect(out.text).toContain('"type":"service_account"');
  });

  test("a key cut short (no END line) is redacted through its body", () => {
    const out = redact(`-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\nnext paragraph`);
    expect(out.text).toBe("[REDACTED:private_key]\nnext paragraph");
  });
});

describe("private keys back to back", () => {
  const labels = ["RSA ", "", "EC ", "OPENSSH "];
  /** Body lines of one fake key: 64 random base64 characters each, then a shorter last line if `tail`. */
  const fakeBody = (tail: number) => [
    ...Array.from({ length: 3 }, () => pick(B64, 64)),
    ...(tail ? [`${pick(B64, tail)}==`] : []),
  ];
  /** Every 12-character stretch of `line` (a shorter line whole) that is still in `out`. */
  const leaks = (out: string, lines: string[]) =>
    lines.flatMap((line) =>
      Array.from({ length: Math.max(1, line.length - 11) }, (_, i) => line.slice(i, i + 12)).filter((s) =>
        out.includes(s),
      ),
    );

  // Between one key and the next BEGIN: nothing, a newline, a blank line. END lines: none, every other
  // key, all. The last body line: a full one, or a shorter one ending `==`.
  for (const gap of ["", "\n", "\n\n"])
    for (const ends of ["none", "alternate", "all"] as const)
      for (const tail of [0, 4, 10, 40])
        for (const escaped of [false, true]) {
          const name = `gap ${JSON.stringify(gap)}, END lines: ${ends}, last line ${tail ? tail + 2 : 64} chars${escaped ? ", JSON-escaped" : ""}`;
          test(name, () => {
            const bodies = labels.map(() => fakeBody(tail));
            const keys = bodies.map((lines, i) => {
              const label = `${labels[i]}PRIVATE KEY`;
              const withEnd = ends === "all" || (ends === "alternate" && i % 2 === 1);
              return `-----BEGIN ${label}-----\n${lines.join("\n")}${withEnd ? `\n-----END ${label}-----` : ""}`;
            });
            const plain = `keys:\n${keys.join(gap)}`;
            const text = escaped ? JSON.stringify({ keys: plain }) : plain;
            const out = redact(text).text;
            expect(leaks(out, bodies.flat())).toEqual([]);
            expect(out).not.toContain("PRIVATE KEY");
            expect(out).not.toContain("-----");
            expect(out).toStartWith(
              escaped ? '{"keys":"keys:\\n[REDACTED:private_key]' : "keys:\n[REDACTED:private_key]",
            );
          });
        }

  test("the benchmark's adversarial unit, a few times over: the BEGIN lines and bodies are one marker", () => {
    const unit = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow";
    for (const n of [1, 2, 3, 7]) {
      const out = redact(unit.repeat(n));
      expect(out.text).toBe("[REDACTED:private_key]");
      expect(out.findings).toEqual([{ kind: "private_key" }]);
    }
  });

  test("keys apart stay apart: the text between them is kept", () => {
    const [a, b] = [fakeBody(6), fakeBody(0)];
    const out = redact(
      `-----BEGIN PRIVATE KEY-----\n${a.join("\n")}\nand the other one:\n-----BEGIN EC PRIVATE KEY-----\n${b.join("\n")}`,
    );
    expect(out.text).toBe("[REDACTED:private_key]\nand the other one:\n[REDACTED:private_key]");
  });

  test("prose after a key cut short is kept", () => {
    const lines = fakeBody(6);
    const out = redact(`-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n\nThanks, that is the key.`);
    expect(out.text).toBe("[REDACTED:private_key]\n\nThanks, that is the key.");
  });
});

describe("a password runs to the end of its token", () => {
  // Punctuation a password manager or a person puts inside a password; none of it ends the value.
  const inner = ["&", "#", "!", "%", "@", "&amp;"];
  const passwords = inner.map((c) => `${pick(ALNUM, 6)}${c}${pick(ALNUM, 2)}${pick(DIGITS, 2)}`);
  const forms: [string, (pw: string) => string, (marker: string) => string][] = [
    ["password: x", (pw) => `password: ${pw}`, (m) => `password: ${m}`],
    ["pass=x", (pw) => `pass=${pw}`, (m) => `pass=${m}`],
    ["passwd=x then a sentence", (pw) => `passwd=${pw} then restart`, (m) => `passwd=${m} then restart`],
    ["pwd: x", (pw) => `pwd: ${pw}`, (m) => `pwd: ${m}`],
    ["DB_PASS=x && cmd", (pw) => `DB_PASS=${pw} && ./run`, (m) => `DB_PASS=${m} && ./run`],
    ["rootpass=x", (pw) => `rootpass=${pw}`, (m) => `rootpass=${m}`],
    ["<password>x</password>", (pw) => `<password>${pw}</password>`, (m) => `<password>${m}</password>`],
  ];
  for (const [name, write, expected] of forms) {
    test(name, () => {
      for (const pw of passwords) expect(redact(write(pw)).text).toBe(expected("[REDACTED:password]"));
    });
  }

  test("the audit's examples", () => {
    expect(redact("password: Tr0ub4dor&3xyz").text).toBe("password: [REDACTED:password]");
    expect(redact("pass=Xy7&kL9#mN2").text).toBe("pass=[REDACTED:password]");
  });

  test("a URL query or form body still ends the value at the next parameter", () => {
    const pw = `${pick(ALNUM, 10)}${pick(DIGITS, 2)}`;
    expect(redact(`/login?user=me&password=${pw}&next=/home`).text).toBe(
      "/login?user=me&password=[REDACTED:password]&next=/home",
    );
    expect(redact(`pass=${pw}&next=/home`).text).toBe("pass=[REDACTED:password]&next=/home");
    expect(redact(`"password=${pw}" and more`).text).toBe('"password=[REDACTED:password]" and more');
  });

  const benign = [
    "pass=true",
    "pass=true&next=/home",
    "pass: 12 fail: 0",
    "bypass=Xy7kL9mN2q",
    "compass=Xy7kL9mN2q",
    "surpass=Xy7&kL9#mN2",
    "$ pwd\n/srv/app",
    'cd "$(pwd)/build" && make',
    "PWD=$(pwd)",
    "pwd: command not found",
    "Pass the token to the client, then pwd to check the folder.",
  ];
  for (const text of benign) {
    test(`kept: ${JSON.stringify(text)}`, () => {
      expect(redact(text).text).toBe(text);
    });
  }
});

describe("credentials in URLs, commands and assignments", () => {
  const password = `${pick(ALNUM, 10)}!${pick(DIGITS, 2)}`;
  const cases: [string, string][] = [
    [`DATABASE_URL=postgres://app:${password}@db.internal:5432/prod`, "connection_string"],
    [`mongodb+srv://svc:${password}@cluster0.example.net/db`, "connection_string"],
    [`curl -u deploy:${password} https://ci.example.org/api`, "password"],
    [`DB_PASSWORD=${password}`, "password"],
    [`{"client_secret": "${password}"}`, "secret"],
    [`mysql --user=root --password ${password} shop`, "password"],
    [`ALTER USER 'app'@'%' IDENTIFIED BY '${password}';`, "password"],
    [`if ("${password}" == password) { grant(); }`, "password"],
    [`<add key="ClearTextPassword" value="${password}" />`, "password"],
    [`and the secret is ${password} for staging`, "secret"],
    [`SECRET := getenv("APP_SECRET", "${password}")`, "secret"],
    [`ConvertTo-SecureString -String "${password}" -AsPlainText -Force`, "password"],
  ];
  for (const [text, kind] of cases) {
    test(text.replace(password, "<generated>"), () => {
      const out = redact(text);
      expect(out.text).not.toContain(password);
      expect(out.findings.map((f) => f.kind)).toContain(kind);
    });
  }

  test("Authorization headers lose the credential, keep the scheme", () => {
    const token = pick(`${ALNUM}._-`, 40);
    expect(redact(`curl -H "Authorization: Bearer ${token}" https://api.example.org`).text).toBe(
      'curl -H "Authorization: Bearer [REDACTED:auth]" https://api.example.org',
    );
    const basic = Buffer.from(`ci:${pick(ALNUM, 16)}`).toString("base64");
    expect(redact(`Authorization: Basic ${basic}`).text).toBe("Authorization: Basic [REDACTED:auth]");
  });

  test("generic *_KEY / *_TOKEN / *_SECRET assignments need an entropy to be taken", () => {
    const generated = pick(ALNUM, 32);
    expect(redact(`WEBHOOK_SECRET=${generated}`).text).toBe("WEBHOOK_SECRET=[REDACTED:secret]");
    expect(redact(`SIGNING_KEY: "${generated}"`).text).toBe('SIGNING_KEY: "[REDACTED:secret]"');
    expect(redact("CACHE_KEY=user_profile_v2").text).toBe("CACHE_KEY=user_profile_v2");
    expect(redact('sort_key = "created_at"').text).toBe('sort_key = "created_at"');
  });

  test("a Kubernetes Secret's data values are redacted, another kind's are not", () => {
    const value = Buffer.from(pick(ALNUM, 12)).toString("base64");
    const secret = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  username: YWRtaW4=\n  extra: ${value}\n`;
    expect(redact(secret).text).not.toContain(value);
    const configMap = secret.replace("kind: Secret", "kind: ConfigMap");
    expect(redact(configMap).text).toBe(configMap);
  });
});

describe("personal data", () => {
  test("e-mail addresses, including punycode domains", () => {
    expect(redact("mail jane.doe+ci@corp.example.com or a@xn--d1acufc.xn--p1ai").text).toBe(
      "mail [REDACTED:email] or [REDACTED:email]",
    );
    expect(redact("reach me at info@presidio.").text).toBe("reach me at info@presidio.");
  });

  test("home directories on every OS, also JSON-escaped, keep the rest of the path", () => {
    expect(redact("open /Users/jane/projects/app/src/index.ts").text).toBe(
      "open [REDACTED:home]/projects/app/src/index.ts",
    );
    expect(redact("cwd: /home/jdoe/work").text).toBe("cwd: [REDACTED:home]/work");
    expect(redact(String.raw`C:\Users\Jane Doe\AppData\Local`).text).toBe(
      String.raw`[REDACTED:home]\AppData\Local`,
    );
    expect(redact(String.raw`"C:\\Users\\jane\\.claude\\settings.json"`).text).toBe(
      String.raw`"[REDACTED:home]\\.claude\\settings.json"`,
    );
    expect(redact("see ~/.claude/settings.json and /usr/share/doc").text).toBe(
      "see ~/.claude/settings.json and /usr/share/doc",
    );
  });

  test("Claude Code's dashed project folders lose the user's name", () => {
    expect(redact("read ~/.claude/projects/-home-jdoe-work-app/s1.jsonl").text).toBe(
      "read ~/.claude/projects/[REDACTED:home]-work-app/s1.jsonl",
    );
  });

  test("an escape before an address stays outside the marker", () => {
    expect(redact('"line\\nbob@corp.example.io"').text).toBe('"line\\n[REDACTED:email]"');
  });

  test("this machine's home directory is redacted wherever it appears", () => {
    const home = homedir();
    if (home.length < 2) return;
    expect(redact(`logs are in ${home}/.cache/app.log`).text).toBe(
      "logs are in [REDACTED:home]/.cache/app.log",
    );
  });

  test("public IP addresses and IPv6, not private ranges", () => {
    expect(redact("client 203.120.17.9 via 10.1.2.3 and 2001:db8:85a3::8a2e:370:7334").text).toBe(
      "client [REDACTED:ip] via 10.1.2.3 and [REDACTED:ip]",
    );
  });

  test("IBANs and card numbers only when their check digits hold", () => {
    const good = iban("DE", pick(DIGITS, 18));
    const bad = good.slice(0, -1) + ((Number(good.at(-1)) + 1) % 10);
    expect(redact(`pay to ${good}`).text).toBe("pay to [REDACTED:iban]");
    expect(redact(`pay to ${bad}`).text).toBe(`pay to ${bad}`);
    const card = visa();
    expect(redact(`card ${card} exp 12/29`).text).toBe("card [REDACTED:credit_card] exp 12/29");
  });

  test("phone numbers and US social security numbers", () => {
    expect(redact("call +1 415 555 0132 or (415) 555-0199").text).toBe(
      "call [REDACTED:phone] or [REDACTED:phone]",
    );
    expect(redact("SSN 078-05-1123, not 000-12-3456").text).toBe("SSN [REDACTED:ssn], not 000-12-3456");
  });
});

describe("user rules", () => {
  test("extra rules: literals match any case, /regex/ with flags", () => {
    expect(
      redact("Project ACME-Falcon ships to acme-falcon users", { extraRules: ["acme-falcon"] }).text,
    ).toBe("Project [REDACTED:custom] ships to [REDACTED:custom] users");
    expect(redact("ticket INC-20931 and inc-7", { extraRules: ["/INC-\\d{3,}/"] }).text).toBe(
      "ticket [REDACTED:custom] and inc-7",
    );
    expect(redact("ticket INC-20931 and inc-700", { extraRules: ["/inc-\\d{3,}/i"] }).text).toBe(
      "ticket [REDACTED:custom] and [REDACTED:custom]",
    );
  });

  test("project rules come from .triforge/exclude.txt and config exclude, re-read when they change", () => {
    const root = tempDir();
    mkdirSync(join(root, ".triforge"));
    writeFileSync(join(root, ".triforge", "exclude.txt"), "# client names\nGlobex\n\n/order-\\d+/\n");
    writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify({ exclude: ["Initech"] }));
    expect(loadProjectRules(root)).toEqual(["Globex", "/order-\\d+/", "Initech"]);
    expect(redact("Globex and Initech, order-991", { projectRoot: root }).text).toBe(
      "[REDACTED:custom] and [REDACTED:custom], [REDACTED:custom]",
    );
    writeFileSync(
      join(root, ".triforge", "exclude.txt"),
      "Umbrella Corp\n# a much longer file than before\n",
    );
    expect(loadProjectRules(root)).toEqual(["Umbrella Corp", "Initech"]);
  });

  test("a project without rule files has none", () => {
    expect(loadProjectRules(tempDir())).toEqual([]);
  });

  test("a malformed regex is an error that names the rule", () => {
    expect(() => redact("text", { extraRules: ["/unclosed(/"] })).toThrow("/unclosed(/");
    const root = tempDir();
    mkdirSync(join(root, ".triforge"));
    writeFileSync(join(root, ".triforge", "config.json"), JSON.stringify({ exclude: "Initech" }));
    expect(() => loadProjectRules(root)).toThrow('"exclude" must be a list of strings');
  });
});

describe("review, masked candidates and the strict pass", () => {
  const leftover = `${pick(ALNUM, 12)}${pick(DIGITS, 4)}${pick(ALNUM, 8)}`;
  const flagged = `the staging auth thing, in case you need it, is ${leftover} for now`;

  test("a trigger word near a generated-looking string no rule took sets review", () => {
    const out = redact(flagged);
    expect(out.text).toContain(leftover);
    expect(out.review).toBe(true);
    expect(redact("the auth flow redirects to the login page").review).toBe(false);
    expect(redact(`the session id is ${crypto.randomUUID()}`).review).toBe(false);
  });

  test("masked candidates never carry the whole value, in the mask or the context", () => {
    const candidates = maskCandidates(flagged);
    expect(candidates).toHaveLength(1);
    const [c] = candidates;
    expect(flagged.slice(c.start, c.end)).toBe(leftover);
    expect(c.masked).not.toContain(leftover.slice(2, -2));
    expect(c.context).not.toContain(leftover);
    expect(c.context).toContain("auth thing");
  });

  test("the strict pass redacts what review flagged", () => {
    const out = strictEntropyPass(flagged);
    expect(out.text).not.toContain(leftover);
    expect(out.findings).toEqual([{ kind: "entropy" }]);
  });
});

describe("idempotence", () => {
  test("redact(redact(x)) == redact(x) on everything above", () => {
    const body = Array.from({ length: 3 }, () => pick(B64, 64)).join("\n");
    const samples = [
      ...providerTokens().map(([, token]) => `token=${token} and "${token}"`),
      `-----BEGIN EC PRIVATE KEY-----\n${body}\n-----END EC PRIVATE KEY-----`,
      `postgres://app:${pick(ALNUM, 14)}@db/prod and jane@corp.io from /Users/jane/x`,
      `Authorization: Bearer ${pick(ALNUM, 30)}; password: "${pick(ALNUM, 12)}"`,
      `pay ${iban("FR", pick(DIGITS, 23))} with ${visa()} from 8.8.4.4`,
      `SECRET_KEY = '${pick(ALNUM, 40)}'  # do not commit`,
    ];
    for (const text of samples) {
      const once = redact(text);
      expect(once.findings.length).toBeGreaterThan(0);
      expect(redact(once.text).text).toBe(once.text);
      expect(redact(once.text).findings).toEqual([]);
    }
  });
});

describe("triforge redact (compiled binary)", () => {
  const home = tempDir();

  test("stdin to stdout, a summary on stderr", async () => {
    const token = `ghp_${pick(ALNUM, 36)}`;
    const { code, stdout, stderr } = await runBinary(["redact"], {
      home,
      cwd: home,
      stdin: `push with ${token}\nmail ops@corp.example.com\n`,
    });
    expect(code).toBe(0);
    expect(stdout).toBe("push with [REDACTED:github]\nmail [REDACTED:email]\n");
    expect(stderr).toContain("2 redacted (github, email)");
  });

  test("--project applies that project's exclude rules; --quiet drops the summary", async () => {
    const project = tempDir();
    mkdirSync(join(project, ".triforge"));
    writeFileSync(join(project, ".triforge", "exclude.txt"), "Project Nightjar\n");
    const { code, stdout, stderr } = await runBinary(["redact", "--project", project, "--quiet"], {
      home,
      stdin: "status of project nightjar: green",
    });
    expect(code).toBe(0);
    expect(stdout).toBe("status of [REDACTED:custom]: green");
    expect(stderr).toBe("");
  });

  test("a malformed rule is a clear error and nothing is printed", async () => {
    const project = tempDir();
    mkdirSync(join(project, ".triforge"));
    writeFileSync(join(project, ".triforge", "exclude.txt"), "/broken[/\n");
    const { code, stdout, stderr } = await runBinary(["redact", "--project", project], {
      home,
      stdin: "secret text",
    });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("/broken[/");
  });

  test("a missing --project folder is a clear error", async () => {
    const { code, stderr } = await runBinary(["redact", "--project", join(home, "nope")], {
      home,
      stdin: "x",
    });
    expect(code).toBe(1);
    expect(stderr).toContain("no such folder");
  });
});

describe("value predicates rewritten for speed", () => {
  test("one character filling half a value, ASCII or not, and counts do not leak between calls", () => {
    expect(isDominatedByOneChar("aaaaBcDe")).toBe(true);
    expect(isDominatedByOneChar("aaaBcDeF")).toBe(false);
    expect(isDominatedByOneChar("éééé1234")).toBe(true);
    expect(isDominatedByOneChar("ééé12345")).toBe(false);
    // Counted after a value full of `a`: a table left dirty would count these too.
    expect(isDominatedByOneChar("abcdefgh")).toBe(false);
  });

  test("a base64 value that decodes to placeholder text, and one that does not", () => {
    expect(decodesToPlaceholder("ZHVtbXkgdGV4dA==")).toBe(true); // "dummy text"
    expect(decodesToPlaceholder("ZHVtbXkgdGV4dA")).toBe(false); // not a multiple of 4
    expect(decodesToPlaceholder("a1B2c3D4e5F6g7H8")).toBe(false); // decodes to bytes, not text
  });

  test("placeholder words in any case, including letters that lower-case to ASCII", () => {
    expect(isPlaceholderWord("token")).toBe(true);
    expect(isPlaceholderWord("Token")).toBe(true);
    expect(isPlaceholderWord("\u212Aey")).toBe(true); // KELVIN SIGN lower-cases to "k"
    expect(isPlaceholderWord("tokens")).toBe(false);
  });
});
