import { type CandidateScan, literalsAt, matchFrom, type NextStart } from "./scan.ts";
import { entropy, isPlaceholder, isRepeatedUnit, isWordLike } from "./text.ts";
import {
  mayStartForeign,
  mayStartTrigger,
  pushForeignTrigger,
  pushTrigger,
  triggerPairs,
} from "./triggers.ts";
import type { Finding } from "./types.ts";

/**
 * Provider token formats: a fixed prefix or shape that the issuer documents (the same families gitleaks,
 * detect-secrets, trufflehog and CredSweeper cover). A prefix match is strong evidence, so these rules
 * only drop documentation placeholders (`ghp_xxxx…`, a body of one repeated character or unit).
 *
 * Linear time: every pattern starts with a literal prefix or with the left boundary `B`, so in a long run
 * of token characters it is tried once, at the start of the run; every quantifier is bounded.
 */
interface ProviderRule {
  kind: string;
  /** Lower-case substrings, at least one of which must occur in the text for the rule to run. */
  keywords?: string[];
  pattern: string;
  flags?: string;
  /** Extra test on the secret (after the placeholder tests). */
  check?: (secret: string) => boolean;
  /** PERF: where a match can start (see scan.ts), for a pattern the engine would try at every position. */
  nextStart?: NextStart;
}

/**
 * Left boundary: not preceded by a letter, a digit or `+` (inside a base64 blob), except the `m` that ends
 * an ANSI colour sequence (`\x1b[93msk-…` in coloured terminal output).
 */
const B = String.raw`(?<!\+|[A-Za-z0-9](?<!\x1b\[[0-9;]{0,8}m))`;
/** Right boundary for tokens made of `[A-Za-z0-9_-]`. */
const E = `(?![A-Za-z0-9_-])`;

const isTokenCode = (c: number) =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 45;

/** Whether a token may start after character `c`: the boundary `B`, less its colour-sequence test. */
const mayFollow = (c: number) =>
  c !== 43 && (c === 109 || !((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57)));

/** A Discord bot token starts 23–28 token characters before a `.`, all of them in one run. */
const discordStart: NextStart = (text, from) => {
  for (let dot = text.indexOf(".", from + 23); dot >= 0; dot = text.indexOf(".", dot + 1)) {
    // PERF: most dots follow a short name (or a dotted chain: `a.b.c.…`); three characters of the run
    // tell without reading it.
    if (
      !isTokenCode(text.charCodeAt(dot - 23)) ||
      !isTokenCode(text.charCodeAt(dot - 12)) ||
      !isTokenCode(text.charCodeAt(dot - 1))
    )
      continue;
    let s = dot;
    while (s > 0 && dot - s < 28 && isTokenCode(text.charCodeAt(s - 1))) s--;
    // The left boundary, tested here: after a letter or digit only the `m` of a colour sequence may start.
    for (let t = Math.max(s, from); t <= dot - 23; t++) if (mayFollow(text.charCodeAt(t - 1))) return t;
  }
  return -1;
};

/** A literal every match starts with, `offset` characters after the match's start. */
const literalAt =
  (literal: string, offset = 0): NextStart =>
  (text, from) => {
    const p = text.indexOf(literal, from + offset);
    return p < 0 ? -1 : p - offset;
  };

/** A Mailgun key has its dashes 32 and 41 characters after its start. */
const mailgunStart: NextStart = (text, from) => {
  for (let dash = text.indexOf("-", from + 32); dash >= 0; dash = text.indexOf("-", dash + 1))
    if (text.charCodeAt(dash + 9) === 45) return dash - 32;
  return -1;
};

const mixed = (s: string) => !isWordLike(s) && entropy(s) >= 3;

/** Slack tokens: a run of 8+ digits (team/user ids) or a 10+ character segment mixing letters and digits. */
function slackCheck(token: string): boolean {
  const groups = token.replace(/^(?:xoxe\.)?xox[a-z]-/, "").split("-");
  const numeric = groups.filter((g) => /^\d{8,}$/.test(g)).length;
  if (numeric >= 2) return true;
  return groups.some((g) => g.length >= 10 && /\d/.test(g) && /[A-Za-z]/.test(g));
}

/** A JWT: the header decodes to a JSON object. */
function jwtCheck(token: string): boolean {
  const header = token.slice(0, token.indexOf("."));
  const decoded = decodeBase64(header).trim();
  return decoded.startsWith('{"') && decoded.endsWith("}") && /"(?:alg|typ|kid)"/.test(decoded);
}

function decodeBase64(value: string): string {
  try {
    return Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("latin1");
  } catch {
    return "";
  }
}

const RULES: ProviderRule[] = [
  // Cloud: AWS, GCP, Azure, Alibaba.
  {
    kind: "aws",
    keywords: ["akia", "asia", "abia", "acca", "a3t"],
    pattern: `${B}(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])(?<body>[A-Z0-9]{16})(?![A-Za-z0-9])`,
  },
  { kind: "aws", keywords: ["absk"], pattern: `${B}ABSK[A-Za-z0-9+/]{100,300}={0,2}` },
  {
    kind: "aws",
    keywords: ["bedrock-api-key-"],
    pattern: `bedrock-api-key-(?<body>[A-Za-z0-9+/=_-]{20,4000})`,
    check: mixed,
  },
  { kind: "aws", keywords: ["da2-"], pattern: `${B}da2-[a-z0-9]{26}${E}` },
  {
    kind: "aws",
    keywords: ["amzn.mws."],
    pattern: String.raw`amzn\.mws\.[0-9a-z]{8}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{12}`,
  },
  { kind: "gcp", keywords: ["aiza"], pattern: `${B}AIza(?<body>[0-9A-Za-z_-]{35})${E}` },
  { kind: "gcp", keywords: ["gocspx-"], pattern: `GOCSPX-[A-Za-z0-9_-]{28}${E}` },
  { kind: "gcp", keywords: ["ya29."], pattern: String.raw`${B}ya29\.[0-9A-Za-z_-]{30,2000}` },
  { kind: "gcp", keywords: ["1//0"], pattern: `${B}1//0[0-9A-Za-z_-]{40,512}` },
  {
    kind: "gcp",
    keywords: ["googleusercontent"],
    pattern: String.raw`${B}\d{10,14}-[a-z0-9]{32}\.apps\.googleusercontent\.com`,
  },
  {
    kind: "azure",
    keywords: ["q~"],
    pattern: String.raw`(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])`,
  },
  {
    kind: "azure",
    keywords: ["accountkey="],
    pattern: `AccountKey=(?<secret>[A-Za-z0-9+/]{80,100}={0,2})`,
  },
  {
    kind: "azure",
    keywords: ["jqqj9"],
    pattern: `${B}[A-Za-z0-9]{40,60}JQQJ9[9DH][A-Za-z0-9]{6}A{6,}[A-Za-z0-9+/]{0,40}={0,2}`,
  },
  {
    kind: "alibaba",
    keywords: ["ltai"],
    pattern: `${B}LTAI[A-Za-z0-9]{12,20}(?![A-Za-z0-9])`,
    check: mixed,
  },
  // The secret written right after its access key id (`LTAI…, <30 characters>`).
  {
    kind: "alibaba",
    keywords: ["ltai"],
    pattern: String.raw`${B}LTAI[A-Za-z0-9]{12,20}[\s,;:'"=()]{1,10}(?<secret>[A-Za-z0-9]{30})(?![A-Za-z0-9])`,
    check: mixed,
  },
  { kind: "adobe", keywords: ["p8e-"], pattern: `${B}p8e-[A-Za-z0-9_-]{32}${E}`, check: mixed },
  {
    kind: "definednetworking",
    keywords: ["dnkey-"],
    pattern: `${B}dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}`,
  },
  // Source hosting and CI.
  {
    kind: "github",
    keywords: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
    pattern: `${B}gh[pousr]_(?<body>[A-Za-z0-9]{36,251})(?![A-Za-z0-9_])`,
  },
  { kind: "github", keywords: ["ghs_"], pattern: String.raw`${B}ghs_\d{1,12}_[A-Za-z0-9_.-]{20,4000}` },
  { kind: "github", keywords: ["github_pat_"], pattern: `${B}github_pat_[A-Za-z0-9_]{22,255}` },
  {
    kind: "gitlab",
    keywords: [
      "glpat-",
      "glptt-",
      "gldt-",
      "glrt-",
      "glrtr-",
      "glcbt-",
      "glimt-",
      "glft-",
      "gloas-",
      "glsoat-",
      "glffct-",
      "glagent-",
      "glwt-",
    ],
    pattern: `${B}gl(?:pat|ptt|dt|rtr|rt|cbt|imt|ft|oas|soat|ffct|agent|wt)-(?<body>[A-Za-z0-9_.-]{20,300})`,
  },
  {
    kind: "gitlab",
    keywords: ["gr1348941"],
    pattern: `${B}GR1348941(?<body>[A-Za-z0-9_-]{20,64})${E}`,
  },
  { kind: "gitlab", keywords: ["_gitlab_session="], pattern: `_gitlab_session=[a-z0-9]{32}` },
  { kind: "bitbucket", keywords: ["atbb"], pattern: `${B}ATBB[A-Za-z0-9_=.-]{28,100}` },
  { kind: "bitbucket", keywords: ["bbdc-"], pattern: `${B}BBDC-[A-Za-z0-9+/]{40,60}` },
  // Jira / Confluence Data Center tokens: base64 of "<12-digit id>:<random bytes>".
  {
    kind: "atlassian",
    pattern: `${B}[MNO][A-Za-z0-9]{43}(?![A-Za-z0-9])`,
    check: (s) => /^\d{12}:/.test(decodeBase64(s)),
  },
  {
    kind: "atlassian",
    keywords: ["atatt3", "atctt3"],
    pattern: `${B}AT[AC]TT3[A-Za-z0-9_=-]{100,300}`,
  },
  { kind: "npm", keywords: ["npm_"], pattern: `${B}npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])` },
  { kind: "pypi", keywords: ["pypi-age"], pattern: `${B}pypi-AgE[A-Za-z0-9_-]{50,1000}` },
  { kind: "rubygems", keywords: ["rubygems_"], pattern: `${B}rubygems_[a-f0-9]{48}` },
  { kind: "clojars", keywords: ["clojars_"], pattern: `${B}CLOJARS_[a-z0-9]{60}` },
  { kind: "nuget", keywords: ["oy2"], pattern: `${B}oy2[a-z0-9]{43}(?![A-Za-z0-9])` },
  { kind: "docker", keywords: ["dckr_"], pattern: `${B}dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,100}` },
  {
    kind: "docker",
    keywords: ["swmtkn-", "swmkey-"],
    pattern: `SWM(?:TKN-1-[a-z0-9]{40,60}-[a-z0-9]{20,30}|KEY-1-[A-Za-z0-9+/]{40,50})`,
  },
  { kind: "jfrog", keywords: ["akcp"], pattern: `${B}AKCp[A-Za-z0-9]{69}` },
  { kind: "jfrog", keywords: ["cmvmdgtu"], pattern: `${B}cmVmdGtu[A-Za-z0-9]{40,80}` },
  {
    kind: "sonar",
    keywords: ["squ_", "sqp_", "sqa_"],
    pattern: `${B}sq[upa]_[A-Za-z0-9]{40}(?![A-Za-z0-9])`,
  },
  // Chat and messaging.
  {
    kind: "slack",
    keywords: ["xox"],
    pattern: String.raw`${B}(?:xoxe\.)?xox[a-z]-[A-Za-z0-9-]{6,250}(?![A-Za-z0-9-])`,
    check: slackCheck,
  },
  {
    kind: "slack",
    keywords: ["xapp-"],
    pattern: String.raw`${B}xapp-\d-[A-Za-z0-9]{8,}-\d{8,}-[A-Za-z0-9]{16,100}`,
  },
  {
    kind: "slack",
    keywords: ["hooks.slack.com"],
    pattern: String.raw`(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,200}`,
  },
  {
    kind: "telegram",
    keywords: [":a"],
    pattern: String.raw`(?<![A-Za-z0-9_])\d{5,16}:A[A-Za-z0-9_-]{34}${E}`,
  },
  {
    kind: "discord",
    // PERF: the pattern needs a dot; text without one skips a pattern tried at every token character.
    keywords: ["."],
    pattern: String.raw`${B}[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}${E}`,
    nextStart: discordStart,
    // The user id and the HMAC are generated; the 6-character timestamp in the middle may read as a word.
    check: (s) =>
      !isWordLike(s.slice(0, s.indexOf("."))) && !isWordLike(s.slice(s.lastIndexOf(".") + 1)) && mixed(s),
  },
  {
    kind: "discord",
    keywords: ["discord"],
    pattern: String.raw`(?:https?://)?(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/[A-Za-z0-9_-]{30,100}`,
  },
  {
    kind: "teams",
    keywords: ["webhook.office.com"],
    pattern: String.raw`[a-z0-9-]{1,60}\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{60,300}`,
  },
  {
    kind: "twilio",
    pattern: `${B}(?:SK|AC)[0-9a-fA-F]{32}(?![A-Za-z0-9])`,
    nextStart: literalsAt(["SK", "AC"]),
  },
  {
    kind: "sendgrid",
    keywords: ["sg."],
    pattern: String.raw`${B}SG\.[A-Za-z0-9_=-]{16,32}\.[A-Za-z0-9_=-]{16,64}(?![A-Za-z0-9_=-])`,
  },
  {
    kind: "sendinblue",
    keywords: ["xkeysib-"],
    pattern: `${B}xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`,
  },
  { kind: "mailgun", keywords: ["key-"], pattern: `${B}(?:pub)?key-[a-f0-9]{32}(?![A-Za-z0-9])` },
  {
    kind: "mailgun",
    pattern: `${B}[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}(?![A-Za-z0-9])`,
    nextStart: mailgunStart,
  },
  {
    kind: "mailchimp",
    keywords: ["-us"],
    pattern: String.raw`${B}[A-Za-z0-9]{32}-us\d{1,2}(?![A-Za-z0-9])`,
    nextStart: literalAt("-us", 32),
    check: mixed,
  },
  { kind: "wechat", keywords: ["wx"], pattern: `${B}wx[a-f0-9]{16}(?![A-Za-z0-9])` },
  // Payments and commerce.
  {
    kind: "stripe",
    keywords: ["_live_", "_test_", "_prod_"],
    pattern: `${B}(?:sk|rk|pk)_(?:live|test|prod)_(?<body>[A-Za-z0-9]{20,250})(?![A-Za-z0-9])`,
  },
  { kind: "stripe", keywords: ["whsec_"], pattern: `${B}whsec_[A-Za-z0-9+/=]{24,100}` },
  {
    kind: "square",
    keywords: ["sq0atp-", "sq0csp-"],
    pattern: `${B}sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}`,
  },
  { kind: "square", keywords: ["eaaa"], pattern: `${B}EAAA[A-Za-z0-9_-]{60}${E}` },
  { kind: "facebook", keywords: ["eaa"], pattern: `${B}EAA[A-Za-z0-9]{90,400}(?![A-Za-z0-9])` },
  { kind: "facebook", keywords: ["|"], pattern: String.raw`(?<![0-9])\d{15,16}\|[A-Za-z0-9_-]{27}${E}` },
  {
    kind: "paypal",
    keywords: ["access_token$production$"],
    pattern: String.raw`access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32}`,
  },
  {
    kind: "shopify",
    keywords: ["shp"],
    pattern: `${B}shp(?:at|ca|pa|ss)_[A-Za-z0-9]{32,64}(?![A-Za-z0-9])`,
  },
  {
    kind: "flutterwave",
    keywords: ["flw"],
    pattern: `${B}FLW(?:PUBK|SECK)_TEST-[a-f0-9]{12,32}(?:-X)?`,
  },
  { kind: "easypost", keywords: ["ezak", "eztk"], pattern: `${B}EZ[AT]K[A-Za-z0-9]{54}` },
  { kind: "shippo", keywords: ["shippo_"], pattern: `${B}shippo_(?:live|test)_[a-f0-9]{40}` },
  // AI providers.
  {
    kind: "openai",
    keywords: ["t3blbkfj"],
    pattern: `${B}sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{16,200}T3BlbkFJ[A-Za-z0-9_-]{16,200}`,
  },
  { kind: "deepseek", keywords: ["sk-"], pattern: `${B}sk-[a-f0-9]{32}(?![A-Za-z0-9])` },
  {
    kind: "anthropic",
    keywords: ["sk-ant-"],
    pattern: String.raw`${B}sk-ant-[a-z]{2,6}\d{2}-[A-Za-z0-9_-]{80,300}`,
  },
  {
    kind: "huggingface",
    keywords: ["hf_", "api_org_"],
    pattern: `${B}(?:hf_|api_org_)(?<body>[A-Za-z]{34})(?![A-Za-z0-9])`,
    check: mixed,
  },
  { kind: "groq", keywords: ["gsk_"], pattern: `${B}gsk_[A-Za-z0-9]{52}(?![A-Za-z0-9_-])` },
  { kind: "perplexity", keywords: ["pplx-"], pattern: `${B}pplx-[A-Za-z0-9]{48}` },
  { kind: "xai", keywords: ["xai-"], pattern: `${B}xai-[A-Za-z0-9]{70,90}` },
  { kind: "together", keywords: ["tgp_v1_"], pattern: `${B}tgp_v1_[A-Za-z0-9_-]{40,50}` },
  { kind: "tavily", keywords: ["tvly-"], pattern: `${B}tvly-[A-Za-z0-9]{32}` },
  { kind: "llamacloud", keywords: ["llx-"], pattern: `${B}llx-[A-Za-z0-9_-]{40,60}` },
  // Infrastructure, observability and SaaS.
  {
    kind: "vault",
    keywords: ["hvs.", "hvb.", "hvr."],
    pattern: String.raw`${B}hv[sbr]\.[A-Za-z0-9_-]{24,500}`,
  },
  {
    kind: "vault",
    keywords: ["s."],
    pattern: String.raw`(?<![A-Za-z0-9_.])s\.[A-Za-z0-9]{24}(?![A-Za-z0-9_.])`,
    nextStart: literalAt("s."),
    check: (s) => /\d/.test(s) && /[a-z]/.test(s.slice(2)) && /[A-Z]/.test(s),
  },
  {
    kind: "terraform",
    keywords: ["atlasv1"],
    pattern: String.raw`${B}[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,120}`,
  },
  { kind: "heroku", keywords: ["hrku-"], pattern: `${B}HRKU-[A-Za-z0-9_-]{30,80}` },
  {
    kind: "cloudflare",
    keywords: ["cfat_", "cfut_", "cfk_"],
    pattern: `${B}(?:cfat|cfut|cfk)_[A-Za-z0-9]{40,60}`,
  },
  { kind: "cloudflare", keywords: ["v1.0-"], pattern: String.raw`${B}v1\.0-[a-f0-9]{24}-[a-f0-9]{146}` },
  {
    kind: "databricks",
    keywords: ["dapi"],
    pattern: String.raw`${B}dapi[a-fA-F0-9]{32}(?:-\d)?(?![A-Za-z0-9])`,
  },
  { kind: "digitalocean", keywords: ["_v1_"], pattern: `${B}do[opr]_v1_[a-f0-9]{64}` },
  {
    kind: "doppler",
    keywords: ["dp."],
    pattern: String.raw`${B}dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,50}`,
  },
  { kind: "dropbox", keywords: ["sl."], pattern: String.raw`${B}sl\.[A-Za-z0-9_=-]{130,200}` },
  {
    kind: "dropbox",
    keywords: ["aaaaaaaaaa"],
    pattern: `${B}[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}(?![A-Za-z0-9_=-])`,
  },
  {
    kind: "dynatrace",
    keywords: ["dt0c01."],
    pattern: String.raw`${B}dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`,
  },
  { kind: "fly", keywords: ["fo1_"], pattern: `${B}fo1_[A-Za-z0-9_-]{43}` },
  {
    kind: "fly",
    keywords: ["fm1", "fm2"],
    pattern: `${B}fm[12][ar]?_[A-Za-z0-9+/]{100,2000}={0,3}`,
  },
  { kind: "frameio", keywords: ["fio-u-"], pattern: `${B}fio-u-[A-Za-z0-9_=-]{64}` },
  { kind: "figma", keywords: ["figd_"], pattern: `${B}figd_[A-Za-z0-9_-]{40}` },
  { kind: "grafana", keywords: ["glc_"], pattern: `${B}glc_(?<body>[A-Za-z0-9+/]{32,400})={0,2}` },
  { kind: "grafana", keywords: ["glsa_"], pattern: `${B}glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}` },
  { kind: "grafana", keywords: ["eyjrijoi"], pattern: `${B}eyJrIjoi[A-Za-z0-9+/]{40,400}={0,2}` },
  {
    kind: "harness",
    keywords: ["pat.", "sat."],
    pattern: String.raw`${B}(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}`,
  },
  {
    kind: "infracost",
    keywords: ["ico-"],
    pattern: `(?<![A-Za-z0-9_./-])ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])`,
    check: mixed,
  },
  { kind: "intra42", keywords: ["s-s4t2"], pattern: `s-s4t2(?:ud|af)-[a-f0-9]{64}` },
  { kind: "akamai", keywords: ["akab-"], pattern: `${B}akab-[a-z0-9]{16}-[a-z0-9]{16}` },
  { kind: "age", keywords: ["age-secret-key-1"], pattern: `AGE-SECRET-KEY-1(?<body>[A-Z0-9]{58})` },
  { kind: "onepassword", keywords: ["ops_eyj"], pattern: `${B}ops_eyJ[A-Za-z0-9+/=_-]{100,5000}` },
  {
    kind: "onepassword",
    keywords: ["a3-"],
    pattern: `${B}A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}`,
  },
  { kind: "linear", keywords: ["lin_api_"], pattern: `${B}lin_api_[A-Za-z0-9]{40}` },
  { kind: "netlify", keywords: ["nfp_"], pattern: `${B}nfp_[A-Za-z0-9]{36}` },
  {
    kind: "newrelic",
    keywords: ["nrak-", "nrjs-", "nrii-", "nrbr-", "nraa-"],
    pattern: `${B}NR(?:AK|JS|II|BR|AA)-[A-Za-z0-9_-]{19,40}`,
  },
  { kind: "newrelic", keywords: ["nral"], pattern: `${B}[a-z0-9]{36}NRAL(?![A-Za-z0-9])` },
  { kind: "notion", keywords: ["ntn_"], pattern: String.raw`${B}ntn_\d{11}[A-Za-z0-9]{35}(?![A-Za-z0-9])` },
  {
    kind: "notion",
    keywords: ["secret_"],
    pattern: `${B}secret_[A-Za-z0-9]{43}(?![A-Za-z0-9])`,
    check: mixed,
  },
  { kind: "openshift", keywords: ["sha256~"], pattern: `sha256~[A-Za-z0-9_-]{43}` },
  {
    kind: "planetscale",
    keywords: ["pscale_"],
    pattern: `${B}pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_.=-]{32,64}`,
  },
  {
    kind: "postman",
    keywords: ["pmak-", "pmat-"],
    pattern: `${B}PMA(?:K-[a-f0-9]{24}-[a-f0-9]{34}|T-[A-Z0-9]{26})`,
  },
  {
    kind: "posthog",
    keywords: ["phc_", "phx_", "phs_", "phr_", "pha_"],
    pattern: `${B}ph[cxsra]_[A-Za-z0-9]{39,70}(?![A-Za-z0-9])`,
  },
  { kind: "prefect", keywords: ["pnu_"], pattern: `${B}pnu_[A-Za-z0-9]{36}` },
  { kind: "pulumi", keywords: ["pul-"], pattern: `${B}pul-[a-f0-9]{40}` },
  { kind: "readme", keywords: ["rdme_"], pattern: `${B}rdme_[a-z0-9]{70}` },
  { kind: "scalingo", keywords: ["tk-us-"], pattern: `${B}tk-us-[A-Za-z0-9_-]{48}` },
  {
    kind: "sentry",
    keywords: ["sntrys_", "sntryu_"],
    pattern: `${B}sntry(?:s_eyJ[A-Za-z0-9+/=_-]{50,1000}|u_[a-f0-9]{64})`,
  },
  { kind: "settlemint", keywords: ["sm_"], pattern: `${B}sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}` },
  {
    kind: "sourcegraph",
    keywords: ["sgp_"],
    pattern: `${B}sgp_(?:local_|[A-Fa-f0-9]{16}_)?[A-Fa-f0-9]{40}`,
  },
  { kind: "supabase", keywords: ["sbp_"], pattern: `${B}sbp_(?:v0_)?[a-f0-9]{40}` },
  {
    kind: "tailscale",
    keywords: ["tskey-"],
    pattern: `tskey-[a-z]+-(?<body>[A-Za-z0-9]{6,20}-[A-Za-z0-9]{16,40})`,
  },
  { kind: "typeform", keywords: ["tfp_"], pattern: `${B}tfp_[A-Za-z0-9_=-]{55,65}` },
  {
    kind: "vercel",
    keywords: ["vcp_", "vci_", "vca_", "vcr_", "vck_"],
    pattern: `${B}vc[pikar]_[A-Za-z0-9]{24,60}(?![A-Za-z0-9])`,
  },
  { kind: "wundergraph", keywords: ["cosmo_"], pattern: `${B}cosmo_[a-f0-9]{32}` },
  {
    kind: "yandex",
    keywords: ["t1."],
    pattern: String.raw`${B}t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}`,
  },
  { kind: "yandex", keywords: ["aqvn"], pattern: `${B}AQVN[A-Za-z0-9_-]{35,38}${E}` },
  {
    kind: "yandex",
    keywords: ["yc"],
    pattern: `${B}YC[A-Za-z0-9_-]{38}${E}`,
    check: mixed,
    nextStart: literalAt("YC"),
  },
  {
    kind: "salesforce",
    keywords: ["00d"],
    pattern: `${B}00D[A-Za-z0-9]{12}![A-Za-z0-9._]{80,200}`,
  },
  { kind: "salesforce", keywords: ["3mvg"], pattern: `${B}3MVG[A-Za-z0-9._]{70,120}` },
  {
    kind: "twitter",
    keywords: ["aaaaaaaaaaaaaaaaaaaa"],
    pattern: `${B}A{20,24}[A-Za-z0-9%]{60,140}`,
  },
  { kind: "instagram", keywords: ["igqv"], pattern: `${B}IGQV[A-Za-z0-9_-]{100,400}` },
  { kind: "nats", pattern: `${B}S[ACNOPUX]A[A-Z2-7]{55}(?![A-Za-z0-9])` },
  { kind: "ntlm", keywords: ["tlrmtvntuaa"], pattern: `TlRMTVNTUAA[A-Za-z0-9+/]{20,2000}={0,2}` },
  // JSON Web Tokens, and a JWT that was base64-encoded once more.
  {
    kind: "jwt",
    keywords: ["eyj"],
    pattern: String.raw`${B}eyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{2,8000}(?:\.[A-Za-z0-9_-]{0,4000})?`,
    check: jwtCheck,
  },
  {
    kind: "jwt",
    keywords: ["zxlk"],
    pattern: `${B}ZXlK[A-Za-z0-9+/]{60,4000}={0,2}`,
    check: (s) => /^eyJ[\w-]+\.eyJ/.test(decodeBase64(s)),
  },
];

/** The rules run at candidate starts only, for the test that compares them with a global search. */
export function providerScans(): Record<string, CandidateScan> {
  const scans: Record<string, CandidateScan> = {};
  for (const rule of RULES)
    if (rule.nextStart)
      scans[rule.kind] = {
        pattern: new RegExp(rule.pattern, `gd${rule.flags ?? ""}`),
        nextStart: rule.nextStart,
      };
  return scans;
}

const compiled = new Map<ProviderRule, RegExp>();

/** PERF: each pattern is compiled the first time its keywords occur, not at import (the hook path). */
function pattern(rule: ProviderRule): RegExp {
  let re = compiled.get(rule);
  if (!re)
    compiled.set(rule, (re = new RegExp(rule.pattern, `${rule.nextStart ? "y" : "g"}d${rule.flags ?? ""}`)));
  return re;
}

/** The rule's next match from `from`: a global search, or a sticky one at the rule's candidate starts. */
function nextMatch(rule: ProviderRule, re: RegExp, text: string, from: number): RegExpExecArray | null {
  if (rule.nextStart) return matchFrom(text, re, rule.nextStart, from);
  re.lastIndex = from;
  return re.exec(text);
}

/**
 * The keywords of three characters or more indexed by their first two (ASCII, so `c0 << 7 | c1`), with
 * the trigger words of named values (triggers.ts) in the same table: `pairCode` holds, for each pair,
 * `(bucket + 1) << 5 | (trigger word + 1)`, 0 when neither starts there (PERF: one lookup a position).
 * `thirdChars` is a 128-bit set per bucket of the characters that come third, `buckets` the keywords.
 * Shorter keywords are searched on their own.
 */
interface KeywordIndex {
  pairCode: Int16Array;
  thirdChars: Int32Array;
  buckets: string[][];
  bucketSizes: Int16Array;
  short: string[];
  count: number;
}
let keywordIndex: KeywordIndex | undefined;

function buildKeywordIndex(): KeywordIndex {
  const all = [...new Set(RULES.flatMap((r) => r.keywords ?? []))];
  const pairBucket = new Int16Array(128 * 128).fill(-1);
  const buckets: string[][] = [];
  const short: string[] = [];
  for (const k of all) {
    if (k.length < 3) {
      short.push(k);
      continue;
    }
    const pair = (k.charCodeAt(0) << 7) | k.charCodeAt(1);
    if (pairBucket[pair] < 0) pairBucket[pair] = buckets.push([]) - 1;
    buckets[pairBucket[pair]].push(k);
  }
  const triggers = triggerPairs();
  const pairCode = new Int16Array(128 * 128);
  for (let pair = 0; pair < pairCode.length; pair++)
    pairCode[pair] = ((pairBucket[pair] + 1) << 5) | (triggers[pair] + 1);
  // PERF: Int32, not Uint32: a Uint32 element over 2^31 is read as a double, and the loop slows 2x.
  const thirdChars = new Int32Array(buckets.length * 4);
  for (let b = 0; b < buckets.length; b++)
    for (const k of buckets[b]) thirdChars[(b << 2) | (k.charCodeAt(2) >> 5)] |= 1 << (k.charCodeAt(2) & 31);
  const bucketSizes = Int16Array.from(buckets, (bucket) => bucket.length);
  return { pairCode, thirdChars, buckets, bucketSizes, short, count: all.length };
}

/**
 * The keywords present in the (lower-cased) text, in one pass over it. PERF: a per-keyword substring
 * search is a pass per keyword (~170), and one combined regex allocates a match for every occurrence of a
 * keyword already seen (`eyJ` 260k times in 1 MB: 16 ms); here each position costs a table lookup, the
 * third character is tested before any keyword is compared (in code one position in ten starts a
 * keyword's first two characters, one in a hundred its first three), and a bucket whose keywords were all
 * seen is skipped. `triggers`, when given, receives the trigger words of named values in the same pass.
 */
function presentKeywords(lower: string, triggers?: number[]): Set<string> {
  keywordIndex ??= buildKeywordIndex();
  const { pairCode, thirdChars, buckets, bucketSizes, short, count } = keywordIndex;
  const present = new Set<string>();
  for (const k of short) if (lower.includes(k)) present.add(k);
  // PERF: a copy of the bucket sizes (a text of a hundred characters pays for this setup, not the scan).
  const unseen = bucketSizes.slice();
  let c1 = lower.charCodeAt(0);
  let c2 = lower.charCodeAt(1);
  for (let i = 0; i < lower.length - 2; i++) {
    const c0 = c1;
    c1 = c2;
    c2 = lower.charCodeAt(i + 2);
    if ((c0 | c1) >= 128) {
      // `пароль`, `密码`: names in other scripts start at a non-ASCII character.
      if (c0 >= 128 && triggers && mayStartForeign(c0)) pushForeignTrigger(lower, i, triggers);
      continue;
    }
    const code = pairCode[(c0 << 7) | c1];
    if (code === 0) continue;
    const w = (code & 31) - 1;
    if (w >= 0 && triggers && mayStartTrigger(w, c2)) pushTrigger(lower, i, w, triggers);
    const b = (code >> 5) - 1;
    if (b < 0 || c2 >= 128 || (thirdChars[(b << 2) | (c2 >> 5)] & (1 << (c2 & 31))) === 0 || unseen[b] === 0)
      continue;
    // PERF: an indexed loop; `for…of` here cost as much as the whole scan.
    const bucket = buckets[b];
    for (let q = 0; q < bucket.length; q++) {
      const k = bucket[q];
      // PERF: compared in place from the fourth character (the first three are known).
      let j = 3;
      while (j < k.length && lower.charCodeAt(i + j) === k.charCodeAt(j)) j++;
      if (j < k.length || k.charCodeAt(2) !== c2 || present.has(k)) continue;
      present.add(k);
      unseen[b]--;
      if (present.size === count && !triggers) return present;
    }
  }
  // The last pair holds no keyword (those of two characters are searched on their own), but may hold `pw`,
  // and the last two characters may start a foreign name (`ключ`, `鍵`, `키`).
  if (triggers)
    for (let i = Math.max(0, lower.length - 2); i < lower.length; i++) {
      const c0 = lower.charCodeAt(i);
      const c1 = lower.charCodeAt(i + 1);
      if (c0 >= 128) {
        if (mayStartForeign(c0)) pushForeignTrigger(lower, i, triggers);
      } else if (c1 < 128 && i === lower.length - 2) {
        const w = triggerPairs()[(c0 << 7) | c1];
        if (w >= 0) pushTrigger(lower, i, w, triggers);
      }
    }
  return present;
}

/** Characters right after a match that say the token was cut short by a placeholder (`xoxp-123-####`). */
const PLACEHOLDER_TAIL = /^[#*•…]/;

/** PERF: a loop, not `some()` with a closure for each of ~130 rules on every call. */
function anyPresent(keywords: string[], present: Set<string>): boolean {
  for (let k = 0; k < keywords.length; k++) if (present.has(keywords[k])) return true;
  return false;
}

/**
 * `lower` is `text` lower-cased. PERF: `triggers`, when given, receives the trigger words of named values
 * (see triggers.ts) found in the same pass over `lower`. Returns the provider keywords the text holds.
 */
export function findProviderTokens(
  text: string,
  lower: string,
  out: Finding[],
  triggers?: number[],
): Set<string> {
  const present = presentKeywords(lower, triggers);
  for (const rule of RULES) {
    if (rule.keywords && !anyPresent(rule.keywords, present)) continue;
    const re = pattern(rule);
    for (let m = nextMatch(rule, re, text, 0); m; m = nextMatch(rule, re, text, m.index + m[0].length)) {
      const [start, end] = m.indices?.groups?.secret ?? m.indices![0]!;
      const secret = text.slice(start, end);
      const body = m.groups?.body;
      if (isPlaceholder(secret) || (body && isRepeatedUnit(body))) continue;
      if (PLACEHOLDER_TAIL.test(text.slice(m.index + m[0].length, m.index + m[0].length + 1))) continue;
      if (rule.check && !rule.check(secret)) continue;
      out.push({ start, end, kind: rule.kind });
    }
  }
  return present;
}
