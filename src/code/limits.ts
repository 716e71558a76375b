/**
 * What one index may take, and which folders it may be built of. An index of everything under `/`
 * ran 79 s, peaked at 10.9 GB and answered from `~/.rustup` docs; a session started in `~` would do
 * the same on its first code_search. So a folder that is not a project is refused before anything is
 * read (unless the caller says it means it: `--allow-large`, `allow_large: true`), and every index
 * stops at a cap of files, bytes and seconds, saying which cap and how to raise it.
 */
import { readdirSync } from "node:fs";

/** Files in one index; past it the walk stops (100,000 small files index in 5–16 s on 2 cores). */
export const DEFAULT_MAX_FILES = 100_000;
/**
 * Bytes of files in one index. The generated 10,000-file repository (99 MB) fits; past it memory,
 * not time, is what runs out first (about 24 bytes of memory per byte of source while indexing).
 */
export const DEFAULT_MAX_BYTES = 128 * 1024 * 1024;
/**
 * Seconds of one indexing pass (walk, read, chunk, embed). Files not reached are indexed by the
 * next pass, which keeps what this one did: a search answers from what is indexed so far.
 */
export const DEFAULT_MAX_SECONDS = 60;

export type CapName = "files" | "bytes" | "seconds";

export interface IndexLimits {
  maxFiles: number;
  maxBytes: number;
  maxSeconds: number;
}

const OVERRIDES: Record<CapName, string> = {
  files: "TRIFORGE_CODE_MAX_FILES",
  bytes: "TRIFORGE_CODE_MAX_BYTES",
  seconds: "TRIFORGE_CODE_MAX_SECONDS",
};

function configured(name: CapName, fallback: number): number {
  const raw = process.env[OVERRIDES[name]];
  const value = Number(raw);
  return raw && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** The caps of this process: the defaults, each overridable by its environment variable. */
export function indexLimits(): IndexLimits {
  return {
    maxFiles: configured("files", DEFAULT_MAX_FILES),
    maxBytes: configured("bytes", DEFAULT_MAX_BYTES),
    maxSeconds: configured("seconds", DEFAULT_MAX_SECONDS),
  };
}

/** The sentence a search and `code-index` add when an index stopped at a cap. */
export function capNote(cap: { name: CapName; limit: number }): string {
  const raise = `${OVERRIDES[cap.name]} raises it`;
  switch (cap.name) {
    case "files":
      return `the index stopped at ${cap.limit.toLocaleString("en-US")} files, the cap per index (${raise}); files past it are not searched`;
    case "bytes":
      return `the index stopped at ${Math.round(cap.limit / 1024 / 1024)} MB of files, the cap per index (${raise}); files past it are not searched`;
    case "seconds":
      return `indexing stopped after ${cap.limit} s, the cap per pass (${raise}); files not reached yet are indexed by the next search`;
  }
}

/**
 * Files whose presence in a folder makes it a project, when it has no `.git` or `.triforge`: the
 * build or package file of each language code search knows, and other version-control folders.
 */
const PROJECT_FILES = new Set([
  ".hg",
  ".svn",
  ".jj",
  "package.json",
  "deno.json",
  "deno.jsonc",
  "Cargo.toml",
  "go.mod",
  "pyproject.toml",
  "setup.py",
  "setup.cfg",
  "requirements.txt",
  "Pipfile",
  "pom.xml",
  "build.gradle",
  "build.gradle.kts",
  "settings.gradle",
  "settings.gradle.kts",
  "build.sbt",
  "Gemfile",
  "composer.json",
  "mix.exs",
  "Package.swift",
  "build.zig",
  "CMakeLists.txt",
  "Makefile",
  "meson.build",
  "configure.ac",
  "stack.yaml",
  "cabal.project",
  "dune-project",
  "pubspec.yaml",
  "Project.toml",
  "rebar.config",
  "MODULE.bazel",
  "WORKSPACE",
  "flake.nix",
]);
/** Project files named after the project: `App.csproj`, `aeson.cabal`, `rack.gemspec`. */
const PROJECT_SUFFIXES = [
  ".csproj",
  ".fsproj",
  ".vbproj",
  ".sln",
  ".cabal",
  ".gemspec",
  ".rockspec",
  ".nimble",
];

/** Whether `dir` holds a project file (PROJECT_FILES, PROJECT_SUFFIXES). */
export function hasProjectFile(dir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false;
  }
  return names.some((name) => PROJECT_FILES.has(name) || PROJECT_SUFFIXES.some((s) => name.endsWith(s)));
}

/** What a refusal says: what the folder is, why it is not indexed, and how to index it anyway. */
export function notAProject(root: string, kind: "root" | "home" | "folder"): string {
  const what =
    kind === "root"
      ? `${root} is the file-system root`
      : kind === "home"
        ? `${root} is the home folder`
        : `${root} is not a project: no .git, .triforge/config.json or project file (package.json, Cargo.toml, go.mod, pyproject.toml, …) in it or above it`;
  return `${what}. Code search indexes one project at a time, and a folder like this can hold millions of files: search a project folder, or pass --allow-large (MCP: allow_large: true) to index this one anyway, within the caps per index.`;
}
