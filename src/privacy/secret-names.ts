/**
 * The vocabulary of secrets' names: which identifiers and words name a password, a secret, a token, an
 * authorisation, a PIN, or only maybe a secret (`key`, `salt`: "weak", the value must look generated), in
 * English and in Russian, Chinese, Japanese, Korean, German, French, Spanish and Portuguese. The scanner
 * that reads names and values is `assignments.ts`; the trigger words that start it are `triggers.ts`.
 */

export type Family = "password" | "secret" | "token" | "auth" | "pin" | "weak";

const EXACT: Record<string, Family> = {
  password: "password",
  passwd: "password",
  pwd: "password",
  pw: "password",
  pass: "password",
  passw: "password",
  pswd: "password",
  pword: "password",
  passphrase: "password",
  passcode: "password",
  secret: "secret",
  secrete: "secret",
  token: "token",
  apikey: "secret",
  credential: "secret",
  credentials: "secret",
  cred: "secret",
  creds: "secret",
  privatekey: "secret",
  secretkey: "secret",
  accesskey: "secret",
  bearer: "auth",
  auth: "auth",
  authorization: "auth",
  authentication: "auth",
  authtoken: "token",
  api: "weak",
  key: "weak",
  salt: "weak",
  nonce: "weak",
  cookie: "weak",
  login: "weak",
  otp: "weak",
  seed: "weak",
  mnemonic: "weak",
  pin: "pin",
  pincode: "pin",
};
/** Compound words that end in a trigger: `userpwd`, `accesstoken`, `softlayerapikey`, `1passwordtoken`. */
const SUFFIXES: [string, Family][] = [
  ["password", "password"],
  ["passwd", "password"],
  ["passphrase", "password"],
  ["pwd", "password"],
  ["pswd", "password"],
  ["secret", "secret"],
  ["apikey", "secret"],
  ["credential", "secret"],
  ["token", "token"],
  ["passwort", "password"],
  ["kennwort", "password"],
  ["contraseña", "password"],
  ["senha", "password"],
];
/**
 * `rootpass`, `dbpass`, `smtppass`: "pass" ends a password's name only after one of these, because many
 * English words end in it too (`bypass`, `compass`, `surpass`, `overpass`, `trespass`).
 */
const PASS_OWNERS = new Set([
  "root",
  "admin",
  "user",
  "db",
  "sql",
  "mysql",
  "pg",
  "postgres",
  "redis",
  "mongo",
  "smtp",
  "mail",
  "imap",
  "pop",
  "ftp",
  "sftp",
  "ssh",
  "vnc",
  "rdp",
  "ldap",
  "proxy",
  "wifi",
  "wlan",
  "master",
  "sudo",
  "login",
  "account",
  "app",
  "api",
  "web",
  "server",
  "keystore",
  "truststore",
  "store",
  "key",
]);

/** `api key`, `private_key`, `access key`: a key that is a secret rather than a dictionary key. */
const KEY_QUALIFIERS = new Set([
  "api",
  "private",
  "access",
  "secret",
  "master",
  "encryption",
  "signing",
  "license",
  "app",
  "client",
  "account",
  "auth",
  "service",
  "storage",
  "subscription",
  "hmac",
  "shared",
  "consumer",
  "admin",
  "ingest",
  "write",
  "deploy",
  "ssh",
  "gpg",
  "pgp",
  "aes",
  "rsa",
  "root",
  "security",
  "session",
  "crypto",
  "cipher",
  "server",
  "iam",
  "cloud",
  "geheimer",
  "geheime",
  "geheimen",
  "privater",
  "секретный",
  "секретного",
  "секретным",
  "закрытый",
  "закрытого",
  "приватный",
  "api-ключ",
]);
/** The name describes a secret rather than holding one: `token_url`, `password_file`, `kms_key_id`. */
const DESCRIPTORS = new Set([
  "id",
  "ids",
  "name",
  "names",
  "type",
  "types",
  "kind",
  "file",
  "files",
  "filename",
  "path",
  "paths",
  "dir",
  "url",
  "uri",
  "urls",
  "endpoint",
  "host",
  "length",
  "len",
  "size",
  "count",
  "prompt",
  "label",
  "placeholder",
  "hint",
  "message",
  "msg",
  "field",
  "fields",
  "header",
  "headers",
  "format",
  "pattern",
  "regex",
  "policy",
  "rule",
  "rules",
  "mode",
  "version",
  "expiry",
  "expires",
  "expiration",
  "ttl",
  "timeout",
  "enabled",
  "required",
  "min",
  "max",
  "prefix",
  "suffix",
  "selector",
  "ref",
  "refs",
  "template",
  "error",
  "errors",
  "description",
  "desc",
  "help",
  "title",
  "column",
  "table",
  "param",
  "params",
  "index",
  "event",
  "action",
  "status",
  "state",
  "store",
  "manager",
  "provider",
  "service",
  "scope",
  "scopes",
  "algorithm",
  "alg",
  "chars",
  "charset",
  "location",
  "source",
  "var",
  "variable",
  "env",
  "method",
  "class",
  "schema",
  "hash",
  "hashed",
  "fn",
  "func",
  "callback",
  "handler",
  "validator",
  "input",
  "output",
  "button",
  "form",
  "page",
  "route",
  "check",
  "valid",
  "validation",
  "exists",
  "list",
  "map",
  "limit",
  "delay",
  "interval",
  "duration",
  "at",
  "date",
  "time",
  "timestamp",
  "created",
  "updated",
  "usage",
  "result",
  "results",
  "row",
  "rows",
  "record",
  "records",
  "entry",
  "secrets",
  "tokens",
  "keys",
  "passwords",
  "count",
  "counter",
  "metadata",
  "meta",
  "info",
  "data",
  "ids",
  "lookup",
  "reset",
  "strategy",
  "flow",
  "grant",
  "request",
  "response",
  "req",
  "res",
  "endpoint",
  "server",
  "dialog",
  "modal",
  "screen",
  "view",
  "component",
]);
/** A public key, by definition, is not a secret. */
const PUBLIC = new Set(["public", "pub", "pubkey", "publishable"]);

/** `ключ`, `clé`, `キー`: words for "key" that a qualifier before or after makes a secret (`API-ключ`, `clé API`). */
const KEY_WORDS = new Set([
  "key",
  "schlüssel",
  "schluessel",
  "clé",
  "clef",
  "cle",
  "clave",
  "llave",
  "chave",
  "ключ",
  "ключа",
  "ключу",
  "ключом",
  "ключе",
  "ключи",
  "ключей",
  "キー",
  "鍵",
  "키",
]);

/** Every form of a word: the stem with each ending (`парол` + `ь`, `я`, …). */
const forms = (stem: string, endings: string[]) => endings.map((e) => stem + e);
const RU_NOUN = ["", "а", "у", "ом", "е", "ы", "ов", "ам", "ами", "ах"];
const RU_SOFT = ["ь", "я", "ю", "ем", "е", "и", "ей", "ям", "ями", "ях"];
const RU_ADJ = ["ый", "ая", "ое", "ые", "ого", "ой", "ую", "ым", "ых", "ому"];

/**
 * Secrets' names in other languages, lower-cased, with their grammatical forms. Words of the Latin and
 * Cyrillic scripts are read as identifiers are (`ТОКЕН_ДОСТУПА`, `Datenbankpasswort` by its suffix);
 * Chinese, Japanese and Korean names are the word itself, since those scripts put no space around it.
 */
const FOREIGN: [Family, string[]][] = [
  [
    "password",
    [
      ...forms("парол", RU_SOFT),
      ...forms("парольн", RU_ADJ),
      "passwort",
      "passworts",
      "passwortes",
      "passwörter",
      "passwoerter",
      "kennwort",
      "kennworts",
      "kennwörter",
      "zugangscode",
      "passwortsatz",
      "contraseña",
      "contraseñas",
      "contrasena",
      "contrasenas",
      "senha",
      "senhas",
      "密码",
      "密碼",
      "口令",
      "パスワード",
      "パスフレーズ",
      "合言葉",
      "비밀번호",
      "암호",
      "패스워드",
    ],
  ],
  ["token", [...forms("токен", RU_NOUN), "jeton", "jetons", "令牌", "權杖", "トークン", "토큰"]],
  [
    "secret",
    [
      ...forms("секрет", RU_NOUN),
      ...forms("секретн", RU_ADJ),
      "учётные",
      "учетные",
      "geheimnis",
      "geheimschlüssel",
      "zugangsdaten",
      "zugangsschlüssel",
      "identifiants",
      "secreto",
      "secreta",
      "secretos",
      "credenciales",
      "segredo",
      "segredos",
      "credenciais",
      "密钥",
      "密鑰",
      "秘钥",
      "金鑰",
      "私钥",
      "私鑰",
      "凭证",
      "凭据",
      "憑證",
      "憑據",
      "秘密鍵",
      "シークレット",
      "認証情報",
      "비밀키",
      "비밀",
      "인증정보",
    ],
  ],
  ["pin", ["пин", "пинкод", "暗証番号", "핀"]],
  ["weak", [...KEY_WORDS].filter((w) => w !== "key")],
];
for (const [family, words] of FOREIGN) for (const word of words) EXACT[word] ??= family;

/**
 * The names above written in Chinese, Japanese or Korean, the words that start with neither a Latin nor
 * a Cyrillic letter: no space sets them apart, so each is a trigger word of its own (`triggers.ts`).
 */
export const cjkNames = (): string[] => [
  ...new Set(FOREIGN.flatMap(([, words]) => words).filter((w) => !/^[a-z\u0400-\u04ff]/.test(w))),
];

/** Continuation words that make a key a secret (`clé API`, `ключ доступа`, `chave secreta`). */
const SECRET_CONTINUATIONS = new Set([
  "api",
  "d'api",
  "d'accès",
  "d'acces",
  "accès",
  "acceso",
  "acesso",
  "secrète",
  "secrete",
  "privée",
  "secreta",
  "secreto",
  "privada",
  "privado",
  "geheim",
  "доступа",
]);
/**
 * Words between a name and its operator that belong to the name: `clé API :`, `jeton d'accès :`,
 * `парольная фраза:`, `учётные данные:`, `비밀 키:`, `PIN码`. A qualifier among them makes a key a secret.
 */
export const NAME_CONTINUATIONS = new Set([
  ...SECRET_CONTINUATIONS,
  "de",
  "фраза",
  "фразы",
  "данные",
  "api-ключ",
  "код",
  "码",
  "碼",
  "키",
  "번호",
  "정보",
]);

/** A key word with a qualifier after it names a secret: the family after the name's continuation words. */
export function continuedFamily(family: Family, name: string, words: string[]): Family {
  if (family !== "weak" || !words.some((w) => SECRET_CONTINUATIONS.has(w))) return family;
  return KEY_WORDS.has(segments(name).pop() ?? "") ? "secret" : family;
}

/**
 * `Is` in each language, between a name and its value in prose: `Passwort ist …`, `mot de passe est …`,
 * `contraseña es …`, `senha é …`, `пароль —`. Chinese, Japanese and Korean write theirs without a space
 * after the name (`密码是…`, `パスワードは…`, `비밀번호는…`): see `ATTACHED_COPULAS`.
 */
export const SPACED_COPULAS = new Set([
  "is",
  "was",
  "ist",
  "lautet",
  "heißt",
  "est",
  "es",
  "é",
  "это",
  "—",
  "-",
  "–",
]);
/** Attached copulas and particles, longest first: `密码是`, `パスワードは`, `비밀번호는`. */
export const ATTACHED_COPULAS = ["是", "为", "為", "は", "が", "는", "은", "이", "가"];

/**
 * A name's words, lower-cased: split at case changes, at anything that is not a letter or digit, and
 * where the script changes (`API密钥`: api, 密钥); a trailing number is dropped (`token2` is token).
 */
function segments(name: string): string[] {
  const split = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase();
  const words = /[^\x00-\x7f]/.test(split)
    ? (split.match(SCRIPT_WORD_RE) ?? [])
    : split.split(/[^a-z0-9]+/).filter(Boolean);
  return words.map((s) => s.replace(/^(\D+)\d+$/, "$1"));
}

/** Runs of one script: Latin letters and digits, Greek, Cyrillic, Chinese and Japanese, Korean. */
const SCRIPT_WORD_RE =
  /[a-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f']+|[\u0370-\u03ff]+|[\u0400-\u052f]+|[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+|[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]+/g;

// PERF: keyed by the previous word, then by the name: no key string is built per lookup. `null` is a
// name known not to be a secret's, so one lookup answers both ways.
const familyCache = new Map<string, Map<string, Family | null>>();
let familyCacheSize = 0;
/** Bounds the cache: names repeat within a text, but a long text may hold many different ones. */
const FAMILY_CACHE_SIZE = 2048;

/** The family of secret a name holds, or undefined when the name is not a secret's name. */
export function nameFamily(name: string, previousWord = ""): Family | undefined {
  let byName = familyCache.get(previousWord);
  const cached = byName?.get(name);
  if (cached !== undefined) return cached ?? undefined;
  const family = classifyName(name, previousWord);
  if (familyCacheSize >= FAMILY_CACHE_SIZE) {
    familyCache.clear();
    familyCacheSize = 0;
    byName = undefined;
  }
  if (!byName) familyCache.set(previousWord, (byName = new Map()));
  byName.set(name, family ?? null);
  familyCacheSize++;
  return family;
}

function classifyName(name: string, previousWord: string): Family | undefined {
  // Bundler keeps a gem server's `user:password` in BUNDLE_<HOST>, the host's dots written `__`.
  if (/^BUNDLE_[A-Z0-9_]*__[A-Z]{2,}$/.test(name)) return "password";
  const segs = segments(name);
  if (!segs.length || segs.some((s) => PUBLIC.has(s))) return undefined;
  if (DESCRIPTORS.has(segs[segs.length - 1]) && segs.length > 1) return undefined;
  let family: Family | undefined;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i];
    let f = EXACT[s];
    if (!f) for (const [suffix, fam] of SUFFIXES) if (s.length > suffix.length && s.endsWith(suffix)) f = fam;
    if (!f && s.endsWith("pass") && PASS_OWNERS.has(s.slice(0, -4))) f = "password";
    // `palavra-passe`; `mot de passe` is one word after another (see `previousWord`).
    if (!f && s === "passe" && segs[i - 1] === "palavra") f = "password";
    if (
      f === "weak" &&
      KEY_WORDS.has(s) &&
      (KEY_QUALIFIERS.has(segs[i - 1] ?? "") || EXACT[segs[i - 1] ?? ""])
    )
      f = "secret";
    if (f && (!family || family === "weak")) family = f;
  }
  const prev = previousWord && (segments(previousWord).pop() ?? "");
  if (!family && prev === "de" && (segs[0] === "passe" || segs[0] === "passes")) return "password";
  if (family === "weak" && prev) {
    if (KEY_QUALIFIERS.has(prev) || (EXACT[prev] && EXACT[prev] !== "weak" && EXACT[prev] !== "pin"))
      family = "secret";
  }
  return family;
}
