/** What a file holds, for `--content`: source code, prose, or configuration and data. */
export type ContentKind = "code" | "docs" | "config";
export const CONTENT_KINDS: readonly ContentKind[] = ["code", "docs", "config"];

/** Tree-sitter grammars built into the binary (see grammars.ts); other languages use the line chunker. */
export type GrammarName =
  | "bash"
  | "c"
  | "c-sharp"
  | "cpp"
  | "elixir"
  | "go"
  | "java"
  | "javascript"
  | "php"
  | "python"
  | "ruby"
  | "rust"
  | "tsx"
  | "typescript";

export interface LanguageInfo {
  language: string;
  kind: ContentKind;
  grammar?: GrammarName;
}

const code = (language: string, grammar?: GrammarName): LanguageInfo => ({ language, kind: "code", grammar });
const docs = (language: string): LanguageInfo => ({ language, kind: "docs" });
const config = (language: string): LanguageInfo => ({ language, kind: "config" });

const BY_EXTENSION: Record<string, LanguageInfo> = {
  ts: code("typescript", "typescript"),
  mts: code("typescript", "typescript"),
  cts: code("typescript", "typescript"),
  tsx: code("typescript", "tsx"),
  js: code("javascript", "javascript"),
  mjs: code("javascript", "javascript"),
  cjs: code("javascript", "javascript"),
  jsx: code("javascript", "javascript"),
  py: code("python", "python"),
  pyi: code("python", "python"),
  go: code("go", "go"),
  rs: code("rust", "rust"),
  java: code("java", "java"),
  cs: code("csharp", "c-sharp"),
  c: code("c", "c"),
  // A header may be C++ (abseil's are): the C++ grammar, a near superset of C, parses both.
  h: code("c", "cpp"),
  cc: code("cpp", "cpp"),
  cpp: code("cpp", "cpp"),
  cxx: code("cpp", "cpp"),
  hh: code("cpp", "cpp"),
  hpp: code("cpp", "cpp"),
  hxx: code("cpp", "cpp"),
  inc: code("cpp", "cpp"),
  ipp: code("cpp", "cpp"),
  rb: code("ruby", "ruby"),
  rake: code("ruby", "ruby"),
  gemspec: code("ruby", "ruby"),
  php: code("php", "php"),
  sh: code("bash", "bash"),
  bash: code("bash", "bash"),
  zsh: code("bash", "bash"),
  bats: code("bash", "bash"),
  // A language without a grammar here uses the indentation-aware line chunker.
  kt: code("kotlin"),
  kts: code("kotlin"),
  scala: code("scala"),
  sc: code("scala"),
  swift: code("swift"),
  m: code("objc"),
  mm: code("objc"),
  ex: code("elixir", "elixir"),
  exs: code("elixir", "elixir"),
  erl: code("erlang"),
  hrl: code("erlang"),
  hs: code("haskell"),
  lhs: code("haskell"),
  ml: code("ocaml"),
  mli: code("ocaml"),
  fs: code("fsharp"),
  fsx: code("fsharp"),
  clj: code("clojure"),
  cljs: code("clojure"),
  cljc: code("clojure"),
  lua: code("lua"),
  zig: code("zig"),
  nim: code("nim"),
  dart: code("dart"),
  jl: code("julia"),
  r: code("r"),
  pl: code("perl"),
  pm: code("perl"),
  fish: code("fish"),
  ps1: code("powershell"),
  psm1: code("powershell"),
  vue: code("vue"),
  svelte: code("svelte"),
  astro: code("astro"),
  sql: code("sql"),
  proto: code("protobuf"),
  graphql: code("graphql"),
  gql: code("graphql"),
  vim: code("vim"),
  el: code("elisp"),
  groovy: code("groovy"),
  gradle: code("groovy"),
  tf: code("terraform"),
  sol: code("solidity"),
  v: code("v"),
  cu: code("cuda"),
  bzl: code("starlark"),
  bazel: code("starlark"),
  pyx: code("cython"),
  pxd: code("cython"),
  html: code("html"),
  htm: code("html"),
  css: code("css"),
  scss: code("scss"),
  less: code("less"),
  md: docs("markdown"),
  mdx: docs("markdown"),
  markdown: docs("markdown"),
  rst: docs("rst"),
  adoc: docs("asciidoc"),
  txt: docs("text"),
  org: docs("org"),
  tex: docs("latex"),
  json: config("json"),
  jsonc: config("json"),
  json5: config("json"),
  yaml: config("yaml"),
  yml: config("yaml"),
  toml: config("toml"),
  ini: config("ini"),
  cfg: config("ini"),
  conf: config("ini"),
  properties: config("properties"),
  xml: config("xml"),
  plist: config("xml"),
  csproj: config("xml"),
  env: config("dotenv"),
  cmake: config("cmake"),
};

/** Files known by their whole name. */
const BY_NAME: Record<string, LanguageInfo> = {
  makefile: code("make"),
  gnumakefile: code("make"),
  dockerfile: code("dockerfile"),
  rakefile: code("ruby", "ruby"),
  gemfile: code("ruby", "ruby"),
  "cmakelists.txt": config("cmake"),
  justfile: code("just"),
  build: code("starlark"),
  workspace: code("starlark"),
  "build.zig.zon": config("zig"),
};

/** Generated lock files: large, never what a person searches for. Skipped and counted. */
const LOCK_FILES = new Set([
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lock",
  "bun.lockb",
  "cargo.lock",
  "gemfile.lock",
  "poetry.lock",
  "composer.lock",
  "go.sum",
  "pipfile.lock",
  "uv.lock",
  "mix.lock",
  "flake.lock",
  "podfile.lock",
  "packages.lock.json",
]);

export function isLockFile(name: string): boolean {
  return LOCK_FILES.has(name.toLowerCase()) || /\.min\.(js|css)$/i.test(name);
}

/**
 * The language of a file by its name, or undefined for files we do not index (images, archives and
 * unknown extensions). A shebang decides for extension-less scripts (see `languageOfScript`).
 */
export function languageOf(name: string): LanguageInfo | undefined {
  const lower = name.toLowerCase();
  const byName = BY_NAME[lower];
  if (byName) return byName;
  const dot = lower.lastIndexOf(".");
  if (dot <= 0) return undefined;
  return BY_EXTENSION[lower.slice(dot + 1)];
}

/** An extension-less file that starts with a shell, Python, Ruby or Node shebang is a script in that language. */
export function languageOfScript(firstLine: string): LanguageInfo | undefined {
  const match = /^#!.*?\b(bash|sh|zsh|python3?|ruby|node|bun)\b/.exec(firstLine);
  if (!match) return undefined;
  const interpreter = match[1];
  if (interpreter === "python" || interpreter === "python3") return BY_EXTENSION.py;
  if (interpreter === "ruby") return BY_EXTENSION.rb;
  if (interpreter === "node" || interpreter === "bun") return BY_EXTENSION.js;
  return BY_EXTENSION.sh;
}
