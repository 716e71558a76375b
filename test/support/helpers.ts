import { afterAll } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { projectKey } from "../../src/home/paths.ts";

export const ROOT = resolve(import.meta.dir, "../..");
export const SHARED = resolve(ROOT, "../shared");

/** A project's data folder under `dataHome` (a test's TRIFORGE_HOME), as the binary run there finds it. */
export function projectDataIn(dataHome: string, projectRoot: string): string {
  return join(dataHome, projectKey(projectRoot));
}

/** A fresh temporary folder, removed after the test file finishes. */
export function tempDir(prefix = "triforge-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A repository (a `.git` folder: code search indexes projects only) holding `files`, in a fresh temporary folder. */
export function codeRepository(files: Record<string, string>, prefix = "triforge-repo-"): string {
  const root = tempDir(prefix);
  mkdirSync(join(root, ".git"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let building: Promise<string> | undefined;
/**
 * The compiled binary for this machine (dist/triforge-<os>-<arch>), rebuilt when any file under src/
 * is newer. Tests that spawn it exercise exactly what users run. TRIFORGE_TEST_BINARY overrides.
 */
export function compiledBinary(): Promise<string> {
  if (process.env.TRIFORGE_TEST_BINARY) return Promise.resolve(process.env.TRIFORGE_TEST_BINARY);
  building ??= (async () => {
    const { buildTarget, hostTarget } = await import("../../build/build.ts");
    const { resolveModelDir } = await import("../../src/embed/source.ts");
    const target = hostTarget();
    const file = join(ROOT, "dist", `triforge-${target}${target.startsWith("windows") ? ".exe" : ""}`);
    mkdirSync(join(ROOT, "dist"), { recursive: true });
    const stale =
      !existsSync(file) ||
      statSync(file).mtimeMs <
        Math.max(newestSourceMtime(join(ROOT, "src")), statSync(join(ROOT, "package.json")).mtimeMs);
    if (stale) {
      // Build beside the target and rename: several test runs may build at once.
      const scratch = mkdtempSync(join(ROOT, "dist", ".build-"));
      try {
        const built = await buildTarget(target, scratch, resolveModelDir());
        renameSync(built, file);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    return file;
  })();
  return building;
}

export interface Collected {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end and collects its exit code and output. `env` is the whole environment the
 * command sees (spread `process.env` into it to inherit); without `stdin`, standard input is closed.
 */
export async function spawnCollect(
  cmd: string[],
  options: { env?: Record<string, string | undefined>; stdin?: string; cwd?: string } = {},
): Promise<Collected> {
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Runs the compiled binary with an isolated data directory; returns exit code and output. */
export async function runBinary(
  args: string[],
  options: { env?: Record<string, string | undefined>; stdin?: string; cwd?: string; home: string },
): Promise<Collected> {
  const binary = await compiledBinary();
  return spawnCollect([binary, ...args], {
    cwd: options.cwd,
    env: isolatedEnv(options.home, options.env),
    stdin: options.stdin,
  });
}

/** This process's environment with `home` as the home folder and its data directory, then `env`. */
function isolatedEnv(
  home: string,
  env: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    ...process.env,
    HOME: home,
    USERPROFILE: home,
    TRIFORGE_HOME: join(home, ".claude", "triforge"),
    ...env,
  };
}

/** Runs `fn` and returns what it threw; a test fails when nothing was thrown. */
export async function failure(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

/** The SDK's own MCP client connected to the compiled binary's `serve`, with an isolated home. */
export async function connectServe(options: { cwd: string; home: string; name: string }) {
  const [{ Client }, { StdioClientTransport }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
  ]);
  const transport = new StdioClientTransport({
    command: await compiledBinary(),
    args: ["serve"],
    cwd: options.cwd,
    env: {
      HOME: options.home,
      TRIFORGE_HOME: join(options.home, ".claude", "triforge"),
      PATH: process.env.PATH ?? "",
    },
    stderr: "pipe",
  });
  const client = new Client({ name: options.name, version: "0" });
  await client.connect(transport);
  return client;
}

/**
 * The compiled binary's `serve --http --port 0 …args` with an isolated home, once it says where it
 * listens; the caller stops the process.
 */
export async function serveHttp(
  args: string[],
  options: { cwd: string; home: string; env?: Record<string, string> },
) {
  const proc = Bun.spawn([await compiledBinary(), "serve", "--http", "--port", "0", ...args], {
    cwd: options.cwd,
    env: isolatedEnv(options.home, options.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stderr.getReader();
  let text = "";
  try {
    while (!/listening on (http:\/\/\S+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve --http exited early: ${text}`);
      text += new TextDecoder().decode(value);
    }
  } catch (error) {
    proc.kill("SIGKILL");
    throw error;
  }
  reader.releaseLock();
  return { proc, url: /listening on (http:\/\/\S+)/.exec(text)![1], stderr: text };
}
