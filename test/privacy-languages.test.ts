/**
 * Secrets named in other languages and secrets written to slip past the rules (a zero-width character, a
 * line break, base64, spaced-out characters), with the sentences that only mention them. The values are
 * made up here: shaped like secrets, owned by no one. `benchmark/privacy.ts` reports recall and false
 * positives per language over `benchmark/privacy-languages.jsonl`; these cases are separate from it.
 */
import { describe, expect, test } from "bun:test";
import { extractiveSummary } from "../src/memory/summary.ts";
import { redact } from "../src/privacy/index.ts";
import { runBinary, tempDir } from "./support/helpers.ts";

const GENERATED = "Kx91xLJjBict";
const API_KEY = "sk9Fq2xLr7Wb3Kt8Zp1Vm4Hc";
const AWS = "AKIAZ3MSJK4QWERTY7XQ";
const GITHUB = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

const redacted = (text: string) => redact(text).text;

describe("a secret's name in another language", () => {
  const named: [string, string, string][] = [
    ["Russian", `Мой пароль: ${GENERATED}`, `Мой пароль: [REDACTED:password]`],
    ["Russian, an identifier", "ТОКЕН_ДОСТУПА=dJp62hDiZDQHJMu8W5CN7", "ТОКЕН_ДОСТУПА=[REDACTED:token]"],
    [
      "Russian, a complement",
      `пароль администратора: ${GENERATED}`,
      "пароль администратора: [REDACTED:password]",
    ],
    ["Chinese", "我的密码是 Mv7x57Y3c5wnR", "我的密码是 [REDACTED:password]"],
    ["Chinese, full-width colon", `API密钥：${API_KEY}`, "API密钥：[REDACTED:secret]"],
    ["Japanese", "パスワード：Pw4pQgwXJ43AN", "パスワード：[REDACTED:password]"],
    ["Japanese, quoted", "パスワードは「Rt5nB9xM2qWz」です", "パスワードは「[REDACTED:password]」です"],
    ["Korean, a particle", `비밀번호는 ${GENERATED}입니다`, "비밀번호는 [REDACTED:password]입니다"],
    ["Korean, a key", `API 키: ${API_KEY}`, "API 키: [REDACTED:secret]"],
    ["German", `Das Passwort lautet: ${GENERATED}`, "Das Passwort lautet: [REDACTED:password]"],
    ["German, a compound", `Datenbankpasswort=${GENERATED}`, "Datenbankpasswort=[REDACTED:password]"],
    ["French", `Le mot de passe est ${GENERATED}`, "Le mot de passe est [REDACTED:password]"],
    ["French, a qualified key", `clé API : ${API_KEY}`, "clé API : [REDACTED:secret]"],
    ["Spanish", `La contraseña es ${GENERATED}`, "La contraseña es [REDACTED:password]"],
    ["Portuguese", `A senha é ${GENERATED}`, "A senha é [REDACTED:password]"],
    ["a PIN", "PIN-код: 4821", "PIN-код: [REDACTED:pin]"],
  ];
  for (const [language, text, expected] of named)
    test(`${language}: ${text}`, () => {
      expect(redacted(text)).toBe(expected);
      expect(redacted(expected)).toBe(expected);
    });

  test("sentences that mention a password, a token or a key with no secret in them are kept", () => {
    for (const text of [
      "Я забыл пароль от почты, помоги его сбросить",
      "Пароль: надёжный и длинный, как требует политика",
      "我忘记了密码，怎么重置？",
      "密码长度至少为 12 位",
      "パスワードは12文字以上にしてください",
      "キーボードのキーが反応しません",
      "비밀번호는 12자 이상이어야 합니다",
      "암호화 키를 환경 변수에 넣으세요",
      "Das Passwort ist zu kurz",
      "Le mot de passe est incorrect",
      "Il passe le test sans problème",
      "La palabra clave de la búsqueda es importante",
      "A senha é muito curta",
    ])
      expect(redacted(text)).toBe(text);
  });

  test("a generated string near a name in another language, with no operator, is flagged for review", () => {
    for (const text of [
      "Мой новый ПАРОЛЬ, кажется, Kx91xLJjBict",
      "密码我记得是 xQ7mW2vL9kTz 吧",
      "Das Kennwort? Vielleicht hT4mQ9zLx2Vb",
    ])
      expect(redact(text).review).toBe(true);
    expect(redact("Я забыл пароль от почты, помоги его сбросить").review).toBe(false);
  });

  test("code mode reads the names too, and takes generated values only", () => {
    expect(redact(`ТОКЕН_ДОСТУПА = "dJp62hDiZDQHJMu8W5CN7"`, { mode: "code" }).text).toBe(
      'ТОКЕН_ДОСТУПА = "[REDACTED:token]"',
    );
    const prose = "// Пароль: надёжный\n# パスワードは「hunter」です\nPIN: 4821\n";
    expect(redact(prose, { mode: "code" }).text).toBe(prose);
  });
});

describe("evasions", () => {
  test("a zero-width character inside a key", () => {
    expect(redacted(`api_key = ${AWS.slice(0, 4)}\u200b${AWS.slice(4)}`)).toBe("api_key = [REDACTED:aws]");
    expect(redacted(`token ${GITHUB.slice(0, 14)}\u200d${GITHUB.slice(14)} ok`)).toBe(
      "token [REDACTED:github] ok",
    );
  });

  test("zero-width characters outside a secret are kept where they are", () => {
    const text = "Zero\u200bwidth\u200bjoiners and \ufeffmarks";
    expect(redacted(text)).toBe(text);
    expect(redact(`\ufeffconst x = 1;\n`, { mode: "code" }).text).toBe("\ufeffconst x = 1;\n");
  });

  test("a key split across lines, with a word on the line after it", () => {
    expect(redacted(`aws key:\n${AWS.slice(0, 10)}\n${AWS.slice(10)}\nthanks`)).toBe(
      "aws key:\n[REDACTED:aws]\nthanks",
    );
    expect(redacted(`use ${GITHUB.slice(0, 20)}\r\n${GITHUB.slice(20)} for the push`)).toBe(
      "use [REDACTED:github] for the push",
    );
  });

  test("lines that only look like halves of a key are kept", () => {
    const text = "The build log wraps long lines:\nCompilingModuleNumber12\nFinishedModuleNumber13\n";
    expect(redacted(text)).toBe(text);
  });

  test("a base64 run that decodes to a key of a known format", () => {
    expect(redacted(`echo ${btoa(AWS)} | base64 -d`)).toBe("echo [REDACTED:aws] | base64 -d");
    const urlSafe = btoa(GITHUB).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(redacted(`token: ${urlSafe}`)).toBe("token: [REDACTED:github]");
    expect(redact(`const blob = "${btoa(AWS)}";\n`, { mode: "code" }).text).toBe(
      'const blob = "[REDACTED:aws]";\n',
    );
  });

  test("base64 of ordinary text, and hex digests, are kept", () => {
    for (const text of [
      `The image is ${btoa("hello world this is just text")} in base64`,
      "commit 4f2a9c81d7e6b5a40392f8e1c7d6b5a4f3e2d1c0 fixed it",
    ])
      expect(redacted(text)).toBe(text);
  });

  test("a key spelled out with spaces, with or without its name", () => {
    expect(redacted([...AWS].join(" "))).toBe("[REDACTED:aws]");
    expect(redacted(`password: ${[...GENERATED].join(" ")}`)).toBe("password: [REDACTED:password]");
  });

  test("spaced-out words and alphabets are kept", () => {
    for (const text of [
      "The alphabet: a b c d e f g h i j k l m n o p q r s t u v w x y z",
      "Name: J o h n   D o e",
    ])
      expect(redacted(text)).toBe(text);
  });

  test("code mode does not join lines or read spaced characters: a file's layout is not an evasion", () => {
    const text = `const parts = [\n  "${AWS.slice(0, 10)}",\n  "${AWS.slice(10)}",\n];\nconst s = "a b c d e f g h i j k l";\n`;
    expect(redact(text, { mode: "code" }).text).toBe(text);
  });
});

describe("triforge redact (compiled binary)", () => {
  test("the four sentences of the attack run and the four evasions come out redacted", async () => {
    const home = tempDir();
    const lines = [
      "Мой пароль: Kx91xLJjBict",
      "我的密码是 Mv7x57Y3c5wnR",
      "パスワード：Pw4pQgwXJ43AN",
      "ТОКЕН_ДОСТУПА=dJp62hDiZDQHJMu8W5CN7",
      `api_key = ${AWS.slice(0, 4)}\u200b${AWS.slice(4)}`,
      `aws key:\n${AWS.slice(0, 10)}\n${AWS.slice(10)}`,
      `echo ${btoa(AWS)} | base64 -d`,
      [...AWS].join(" "),
    ];
    const { code, stdout } = await runBinary(["redact", "--quiet"], {
      home,
      cwd: home,
      stdin: `${lines.join("\n")}\n`,
    });
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        "Мой пароль: [REDACTED:password]",
        "我的密码是 [REDACTED:password]",
        "パスワード：[REDACTED:password]",
        "ТОКЕН_ДОСТУПА=[REDACTED:token]",
        "api_key = [REDACTED:aws]",
        "aws key:\n[REDACTED:aws]",
        "echo [REDACTED:aws] | base64 -d",
        "[REDACTED:aws]",
        "",
      ].join("\n"),
    );
  });
});

describe("the summary's Identifiers line", () => {
  test("lists no password from any language: summaries are built from redacted text", () => {
    const texts = [
      `Мой пароль: ${GENERATED}, сохрани его в AuthConfig`,
      "我的密码是 Mv7x57Y3c5wnR，配置在 db_config 里",
      `The Passwort is ${GENERATED} for the user_service`,
    ].map(redacted);
    const summary = extractiveSummary(
      texts.map((text) => ({ text, turns: [{ start: 0, end: text.length }] }) as never),
    );
    expect(summary).not.toContain(GENERATED);
    expect(summary).not.toContain("Mv7x57Y3c5wnR");
  });
});

describe("1 MB inputs of the new rules' constructs (linear time; output pinned, no timing)", () => {
  const MB = 1 << 20;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length));
  const kept: [string, string][] = [
    ["short token lines", fill("aB1cdefg\n")],
    ["spaced single letters", fill("a ")],
    ["zero-width every third character", fill("ab\u200b")],
    ["Russian names without values", fill("Мой пароль: надёжный, ключ ")],
    ["Chinese names without values", fill("我的密码是很长的密钥令牌")],
    ["continuation words without an operator", fill("clé de de de ")],
    ["a name and an unclosed typographic quote, repeated", fill("パスワード：「")],
    ["a name and an unclosed curly quote, repeated", fill("password: “")],
  ];
  for (const [name, text] of kept)
    test(`${name}: kept as it is`, () => {
      const result = redact(text);
      expect(result.findings).toEqual([]);
      expect(result.text === text).toBe(true);
    });

  test("base64-wrapped keys, 36k of them: each run redacted", () => {
    const unit = `${btoa(AWS)} `;
    const n = Math.ceil(MB / unit.length);
    const result = redact(unit.repeat(n));
    expect(result.text === "[REDACTED:aws] ".repeat(n)).toBe(true);
  });
});
