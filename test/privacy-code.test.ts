import { describe, expect, test } from "bun:test";
import { redact } from "../src/privacy/index.ts";

// Values here are made up in this file: shaped like real secrets, owned by no one.
const code = (text: string) => redact(text, { mode: "code" }).text;

describe("code mode keeps source code intact", () => {
  test("a version number after @since, version or section- is not an IPv4 address", () => {
    for (const line of [
      " * @since 2.1.2.0\n",
      "see https://example.org/rfc#section-7.2.3.1 for details\n",
      "Per §4.3.2.1 of the spec\n",
      'version = "3.2.1.8"\n',
      "# Changed in version 2: the 5.1.4.2 release of the wire format\n",
      "const ORDER = [1.2.3.456];\n",
      "-- didn't have an Ord instance until template-haskell-2.10.0.0\n",
      "/* See RFC 7231 section 3.1.2.2. */\n",
      "// per RFC6265 5.2.3.4 the Domain Attribute says\n",
    ])
      expect(code(line)).toBe(line);
  });

  test("addresses, e-mail addresses and home paths in a file are kept: it is on the user's disk already", () => {
    const text = [
      'url = "http://8.8.4.4:8080/x"',
      'HOST = "93.184.216.34"',
      "-- Maintainer:  Jane Roe <jane.roe@gmail.com>",
      "COPY . /home/user/app",
      'ping("2001:db8:85a3::8a2e:370:7334")',
      "",
    ].join("\n");
    expect(code(text)).toBe(text);
  });

  test("code syntax that conversation rules read as secrets or addresses is kept", () => {
    const text = [
      "    this@WebSockets.maxFrameSize = frameSize",
      "  ss@W.StackSet{ W.current = cur } -> f ss",
      "    public JToken this[object key] => IList<JToken>.this[int index];",
      "    field: str = Field(when_used='json')",
      "// the key is the second argument, the password is hashed before",
      '          components += queryComponents(fromKey: "\\(key)[\\(nestedKey)]", value: value)',
      '  auth_headers = curl_maprintf("Authorization: %.*s4-HMAC-SHA256 "',
      '          .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")',
      "  where(query, [{dest, final_bind}], field(dest, ^dest_out_key) == ^single_value)",
      '        url: "ecto://postgres:postgres@localhost/ecto_simple"',
      '    {:ok, "77617265-686f-7573-6520-776f726b6572"}',
      "",
    ].join("\n");
    expect(code(text)).toBe(text);
  });

  test("a type named passwd is not a password's name, nor is a member access after one", () => {
    const line =
      "struct passwd *decc_getpwuid(uid_t uid);\nconn->passwd = ssl_config->key_passwd;\nif(ssl_config->key) x();\n";
    expect(code(line)).toBe(line);
  });

  test("a list element after 'password' is not its value, and is not erased elsewhere", () => {
    const text =
      '__all__ = ["login", "password", "encoding"]\n\ndef get(encoding):\n    return x.encoding or encoding\n';
    expect(code(text)).toBe(text);
  });

  test("an identifier after a key constant is not a secret, nor are its other occurrences", () => {
    const text = "from .helpers import WS_KEY, HttpVersion\nv = HttpVersion(1, 1)\nHttpVersion.x\n";
    expect(code(text)).toBe(text);
  });

  test("a type annotation, an enum member or a function name is not a secret's value", () => {
    const text = [
      "var credential: URLCredential?",
      "public let keyEncoding: KeyEncoding = .useDefaultKeys",
      "case .useDefaultKeys: key",
      "  withXSRFToken: defaultToConfig2,",
      "  cancelToken: defaultToConfig2,",
      "function defaultToConfig2(a, b) {}",
      "",
    ].join("\n");
    expect(code(text)).toBe(text);
  });

  test("names with numbers, patterns and PEM literals after a secret's name are code", () => {
    const text = [
      "  credential?: X509Credential | undefined;",
      "export declare function pbkdf2(password: Uint8Array, salt: Uint8Array): Uint8Array;",
      "  /** JWK (Private Key): base64url-encoded private key */",
      'const TOKEN_STRINGS = "[A-Za-z0-9._~+/-]+=*";',
      'if (pem.indexOf("-----BEGIN PRIVATE KEY-----") !== 0 || !pem.includes("-----END PRIVATE KEY-----")) fail();',
      'url.parse("https://anonymous:flabada@developer.mozilla.org/en-US/docs");',
      "  href: 'https://a:b@example.com/?abc#foo',",
      "",
    ].join("\n");
    expect(code(text)).toBe(text);
  });

  test("a generated password in a connection string is still a credential", () => {
    expect(code('db = "postgres://app:Zx9vQ2mL7w@db.internal:5432/app"\n')).toBe(
      'db = "postgres://app:[REDACTED:connection_string]@db.internal:5432/app"\n',
    );
  });

  test("a word assigned to a secret's name is no generated credential, nor are its other occurrences", () => {
    const text =
      'DB_PASSWORD = "connectionTimeout"\nconfig.connectionTimeout = 5\n        password: "postgres",\naccount = %Account{password: "letmein"}\n';
    expect(code(text)).toBe(text);
  });
});

describe("code mode still catches real secrets", () => {
  test("a provider-shaped key assigned to a constant", () => {
    const out = code('const API_KEY = "sk-live-9fQ2xLr7Wb3Kt8Zp1Vm4Hc6Ny0Da5Js";\n');
    expect(out).not.toContain("9fQ2xLr7Wb3Kt8Zp1Vm4Hc6Ny0Da5Js");
    expect(out).toContain("[REDACTED:");
  });

  test("a generated value assigned to a secret's name", () => {
    expect(code('password = "hK9mQ2vXp7Lw"\n')).toBe('password = "[REDACTED:password]"\n');
    const base = "8f3a9c2b7d6e5f4a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1";
    expect(code(`production:\n  secret_key_base: "${base}"\n`)).toBe(
      'production:\n  secret_key_base: "[REDACTED:secret]"\n',
    );
  });

  test("a PEM private key", () => {
    const body = "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0";
    const out = code(`key = """-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----"""\n`);
    expect(out).not.toContain(body);
    expect(out).toContain("[REDACTED:private_key]");
  });

  test("an AWS key pair in YAML", () => {
    const id = "AKIAZ3MSJK4QWERTY7XQ";
    const secret = "h7Kq2Lm9Xv4Rt8Wn3Bc6Zp1Jd5Fg0Ys2Ua7Qe9Tx";
    const out = code(`aws:\n  access_key_id: ${id}\n  secret_access_key: ${secret}\n`);
    expect(out).not.toContain(id);
    expect(out).not.toContain(secret);
  });

  test("a credential in a URL and a propagated generated secret", () => {
    const token = "q8Zr4Lk2Vx9Nw3Tb7Hm1";
    const out = code(
      `db = "postgres://app:Zx9vQ2mL7w@db.internal:5432/app"\nTOKEN = "${token}"\nheaders = {"X": "${token}"}\n`,
    );
    expect(out).not.toContain("Zx9vQ2mL7w");
    expect(out).not.toContain(token);
  });
});

describe("conversation mode is unchanged", () => {
  test("personal data and prose after 'password is' are still redacted there", () => {
    const out = redact("mail jane.roe@gmail.com, server 93.184.216.34, the password is Tr0ub4dor&3xyz").text;
    expect(out).toBe("mail [REDACTED:email], server [REDACTED:ip], the password is [REDACTED:password]");
  });

  test("without the option the old readings hold", () => {
    expect(redact(" * @since 2.1.2.0\n").text).toContain("[REDACTED:ip]");
    expect(redact("from .helpers import WS_KEY, HttpVersion\nv = HttpVersion(1, 1)\n").text).not.toContain(
      "HttpVersion(1",
    );
  });
});
