import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { DEFAULT_BUILD_MODEL, modelForBuild } from "../build/fetch-model.ts";
import { ModelError, StaticModel } from "../src/embed/model.ts";
import { readModelDir } from "../src/embed/source.ts";
import { ROOT, SHARED, spawnCollect, tempDir } from "./support/helpers.ts";

// Each test spawns bun; bunfig has no test timeout setting.
setDefaultTimeout(30_000);

const FIXTURES = join(SHARED, "models/fixtures");
const FILES = ["config.json", "tokenizer.json", "model.safetensors"];

function fileSpec(fixture: string, file: string) {
  const bytes = readFileSync(join(FIXTURES, fixture, file));
  return { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex"), verified: true };
}

/** A stand-in for the hub: `/<owner>/<repo>/resolve/<revision>/<file>`, weights redirected to a "CDN" path like the real hub. */
const requests: string[] = [];
const hub = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const path = new URL(request.url).pathname;
    requests.push(path);
    const cdn = path.match(/^\/cdn\/([\w-]+)\/([\w.]+)$/);
    if (cdn) return new Response(Bun.file(join(FIXTURES, cdn[1], cdn[2])));
    const match = path.match(/^\/minishlab\/([\w-]+)\/resolve\/([\w.-]+)\/([\w.]+)$/);
    if (!match || !existsSync(join(FIXTURES, match[1], match[3])))
      return new Response("Entry not found", { status: 404 });
    const [, fixture, , file] = match;
    if (file === "model.safetensors") return Response.redirect(`/cdn/${fixture}/${file}`, 302);
    return new Response(Bun.file(join(FIXTURES, fixture, file)));
  },
});
afterAll(() => hub.stop(true));

const root = tempDir();
const manifestPath = join(root, "manifest.json");
const exact = (fixture: string) => Object.fromEntries(FILES.map((f) => [f, fileSpec(fixture, f)]));
writeFileSync(
  manifestPath,
  JSON.stringify({
    models: {
      "test-model-int8": {
        repo: "minishlab/test-model-int8",
        revision: "main",
        files: exact("test-model-int8"),
      },
      "no-hashes": {
        repo: "minishlab/test-model-float16",
        files: Object.fromEntries(FILES.map((f) => [f, { size: null, sha256: null, verified: false }])),
      },
      "wrong-hash": {
        repo: "minishlab/test-model-int8",
        files: {
          ...exact("test-model-int8"),
          "tokenizer.json": {
            ...fileSpec("test-model-int8", "tokenizer.json"),
            sha256: "0".repeat(64),
            verified: false,
          },
        },
      },
      "wrong-size": {
        repo: "minishlab/test-model-int8",
        files: {
          ...exact("test-model-int8"),
          "model.safetensors": { ...fileSpec("test-model-int8", "model.safetensors"), size: 1 },
        },
      },
      "not-on-hub": { repo: "minishlab/no-such-model", files: {} },
      "local-repack": { repo: null, files: {} },
    },
  }),
);

async function fetchModel(args: string[], env: Record<string, string> = {}) {
  return spawnCollect(
    ["bun", "run", join(ROOT, "build/fetch-model.ts"), "--manifest", manifestPath, ...args],
    {
      env: { ...process.env, TRIFORGE_HF_ENDPOINT: `http://127.0.0.1:${hub.port}`, ...env },
    },
  );
}

/** Everything in a models folder, hidden entries included: a failed fetch must leave none behind. */
const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

describe("bun run fetch-model against a local hub", () => {
  test("downloads, verifies and produces a folder the engine loads", async () => {
    const models = join(root, "ok");
    const { code, stdout, stderr } = await fetchModel(["test-model-int8", "--models-dir", models]);
    expect(stderr).toContain(
      `http://127.0.0.1:${hub.port}/minishlab/test-model-int8/resolve/main/config.json`,
    );
    expect(code).toBe(0);
    expect(entries(models)).toEqual(["test-model-int8"]);
    for (const f of FILES) {
      expect(
        readFileSync(join(models, "test-model-int8", f)).equals(
          readFileSync(join(FIXTURES, "test-model-int8", f)),
        ),
      ).toBe(true);
      expect(stdout).toContain(
        `${fileSpec("test-model-int8", f).sha256}  ${fileSpec("test-model-int8", f).size}  ${f}  (verified)`,
      );
    }
    expect(requests).toContain("/cdn/test-model-int8/model.safetensors"); // the redirect was followed
    const fetched = await StaticModel.load(readModelDir(join(models, "test-model-int8")));
    const original = await StaticModel.load(readModelDir(join(FIXTURES, "test-model-int8")));
    expect(Array.from(await fetched.embed("hello world"))).toEqual(
      Array.from(await original.embed("hello world")),
    );
  });

  test("an existing folder is kept unless --force, which replaces it", async () => {
    const models = join(root, "existing");
    mkdirSync(join(models, "test-model-int8"), { recursive: true });
    writeFileSync(join(models, "test-model-int8", "marker"), "old");
    const kept = await fetchModel(["test-model-int8", "--models-dir", models]);
    expect(kept.code).toBe(0);
    expect(kept.stderr).toContain("already exists; pass --force");
    expect(existsSync(join(models, "test-model-int8", "marker"))).toBe(true);

    const forced = await fetchModel(["test-model-int8", "--models-dir", models, "--force"]);
    expect(forced.code).toBe(0);
    expect(entries(join(models, "test-model-int8"))).toEqual([...FILES].sort());
    expect(entries(models)).toEqual(["test-model-int8"]);
  });

  test("--revision is passed to the hub", async () => {
    const models = join(root, "revision");
    const { code } = await fetchModel(["test-model-int8", "--models-dir", models, "--revision", "v1.2"]);
    expect(code).toBe(0);
    expect(requests).toContain("/minishlab/test-model-int8/resolve/v1.2/tokenizer.json");
  });

  test("a model without known hashes downloads and says so", async () => {
    const models = join(root, "unhashed");
    const { code, stdout } = await fetchModel(["no-hashes", "--models-dir", models]);
    expect(code).toBe(0);
    expect(stdout).toContain("model.safetensors  (no known hash)");
    expect(entries(join(models, "no-hashes"))).toEqual([...FILES].sort());
  });

  test("a hash mismatch is refused, names the file and both hashes, and leaves nothing behind", async () => {
    const models = join(root, "tampered");
    const { code, stderr } = await fetchModel(["wrong-hash", "--models-dir", models]);
    expect(code).toBe(1);
    expect(stderr).toContain("tokenizer.json: sha256 ");
    expect(stderr).toContain(fileSpec("test-model-int8", "tokenizer.json").sha256);
    expect(stderr).toContain(`expected ${"0".repeat(64)}`);
    expect(stderr).toContain("unconfirmed");
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(entries(models)).toEqual([]);
  });

  test("a failed --force keeps the model that was there", async () => {
    const models = join(root, "keep-on-failure");
    mkdirSync(join(models, "wrong-size"), { recursive: true });
    writeFileSync(join(models, "wrong-size", "marker"), "old");
    const { code, stderr } = await fetchModel(["wrong-size", "--models-dir", models, "--force"]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `model.safetensors: ${fileSpec("test-model-int8", "model.safetensors").size} bytes, expected 1`,
    );
    expect(entries(models)).toEqual(["wrong-size"]);
    expect(readFileSync(join(models, "wrong-size", "marker"), "utf8")).toBe("old");
  });

  test("a file the hub does not have is an HTTP error naming the URL", async () => {
    const models = join(root, "missing");
    const { code, stderr } = await fetchModel(["not-on-hub", "--models-dir", models]);
    expect(code).toBe(1);
    expect(stderr).toContain(`/minishlab/no-such-model/resolve/main/config.json: HTTP 404`);
    expect(entries(models)).toEqual([]);
  });

  test("offline: a clear one-line error and exit 1", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const models = join(root, "offline");
    const { code, stderr } = await fetchModel(["test-model-int8", "--models-dir", models], {
      TRIFORGE_HF_ENDPOINT: `http://127.0.0.1:${port}`,
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`fetch-model: cannot reach http://127.0.0.1:${port}`);
    expect(stderr).toContain("TRIFORGE_HF_ENDPOINT");
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(entries(models)).toEqual([]);
  });

  test("unknown and hub-less names are refused with the reason", async () => {
    const unknown = await fetchModel(["potion-imaginary-1M", "--models-dir", join(root, "x")]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown model 'potion-imaginary-1M'; one of: test-model-int8");
    const local = await fetchModel(["local-repack", "--models-dir", join(root, "x")]);
    expect(local.code).toBe(1);
    expect(local.stderr).toContain("not published on the hub");
  });
});

describe("models/manifest.json", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "models/manifest.json"), "utf8"));

  test("names the five supported hub models with their minishlab repos", () => {
    for (const name of [
      "potion-base-8M",
      "potion-retrieval-32M",
      "potion-code-16M",
      "potion-multilingual-128M",
      "potion-base-2M",
    ]) {
      expect(manifest.models[name].repo).toBe(`minishlab/${name}`);
      expect(Object.keys(manifest.models[name].files).sort()).toEqual([...FILES].sort());
    }
  });

  test("every hash is well-formed, and a verified one has an exact size", () => {
    for (const model of Object.values(manifest.models) as {
      files: Record<string, { size: number | null; sha256: string | null; verified: boolean }>;
    }[]) {
      for (const spec of Object.values(model.files)) {
        if (spec.sha256 !== null) expect(spec.sha256).toMatch(/^[0-9a-f]{64}$/);
        expect(typeof spec.verified).toBe("boolean");
        if (spec.verified) expect(Number.isInteger(spec.size)).toBe(true);
      }
    }
  });

  test("the recorded hashes of the shared potion-base-2M copies match the files", () => {
    for (const name of ["potion-base-2M-int8", "potion-base-2M-f16"]) {
      for (const [file, spec] of Object.entries(manifest.models[name].files) as [
        string,
        { size: number; sha256: string },
      ][]) {
        const bytes = readFileSync(join(SHARED, "models", name, file));
        const actual = { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
        expect({ file, ...actual }).toEqual({ file, size: spec.size, sha256: spec.sha256 });
      }
    }
  });
});

describe("the build's model in a fresh clone (no models/, no ../shared)", () => {
  const noModel = () => {
    throw new ModelError("no embedding model found");
  };
  /** The manifest with the default model's entry pointing at a fixture the local hub serves, exact hashes. */
  const buildManifest = {
    models: {
      [DEFAULT_BUILD_MODEL]: {
        repo: "minishlab/test-model-int8",
        revision: "main",
        files: exact("test-model-int8"),
      },
    },
  };

  test("a model on disk is used as it is: nothing is fetched", async () => {
    const before = requests.length;
    expect(await modelForBuild({ find: () => "/somewhere/model" })).toBe("/somewhere/model");
    expect(requests.length).toBe(before);
  });

  test("none on disk: the default model is fetched from the hub into models/, verified, and loads", async () => {
    const models = join(root, "fresh-clone-models");
    const lines: string[] = [];
    const dir = await modelForBuild({
      find: noModel,
      manifest: buildManifest,
      modelsDir: models,
      endpoint: `http://127.0.0.1:${hub.port}`,
      log: (line) => lines.push(line),
    });
    expect(dir).toBe(join(models, DEFAULT_BUILD_MODEL));
    expect(lines[0]).toBe(
      `no embedding model on disk (models/, ../shared/models): fetching ${DEFAULT_BUILD_MODEL} from http://127.0.0.1:${hub.port}`,
    );
    const fetched = await StaticModel.load(readModelDir(dir));
    const original = await StaticModel.load(readModelDir(join(FIXTURES, "test-model-int8")));
    expect(Array.from(await fetched.embed("fresh clone"))).toEqual(
      Array.from(await original.embed("fresh clone")),
    );
  });

  test("a download that does not match the manifest is refused and leaves models/ empty", async () => {
    const models = join(root, "fresh-clone-tampered");
    const tampered = {
      models: {
        [DEFAULT_BUILD_MODEL]: {
          ...buildManifest.models[DEFAULT_BUILD_MODEL],
          files: {
            ...exact("test-model-int8"),
            "model.safetensors": { size: null, sha256: "1".repeat(64), verified: true },
          },
        },
      },
    };
    const error = await modelForBuild({
      find: noModel,
      manifest: tampered,
      modelsDir: models,
      endpoint: `http://127.0.0.1:${hub.port}`,
    }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`expected ${"1".repeat(64)}`);
    expect(entries(models)).toEqual([]);
  });

  /** A checkout as a fresh clone has it: source, build scripts and manifest, dependencies; no models, no ../shared. */
  function freshClone(manifest?: object): string {
    const clone = join(tempDir("triforge-fresh-clone-"), "triforge");
    mkdirSync(join(clone, "models"), { recursive: true });
    for (const path of ["src", "build", "package.json", "tsconfig.json"])
      cpSync(join(ROOT, path), join(clone, path), { recursive: true });
    if (manifest) writeFileSync(join(clone, "models", "manifest.json"), JSON.stringify(manifest));
    else cpSync(join(ROOT, "models", "manifest.json"), join(clone, "models", "manifest.json"));
    symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
    return clone;
  }
  const build = (clone: string, endpoint: string) =>
    spawnCollect(
      ["bun", "run", join(clone, "build/build.ts"), "--target", "host", "--outdir", join(clone, "dist")],
      {
        env: { ...process.env, TRIFORGE_MODEL_DIR: undefined, TRIFORGE_HF_ENDPOINT: endpoint },
        cwd: clone,
      },
    );

  test("bun run build:host in a fresh clone fetches the default model and builds a binary that embeds it", async () => {
    const clone = freshClone(buildManifest);
    const { code, stdout, stderr } = await build(clone, `http://127.0.0.1:${hub.port}`);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain(`model: ${join(clone, "models", DEFAULT_BUILD_MODEL)}`);
    const home = tempDir();
    const binary = join(clone, "dist", process.platform === "win32" ? "triforge.exe" : "triforge");
    const version = await spawnCollect([binary, "--version", "--verbose"], {
      env: { ...process.env, HOME: home, TRIFORGE_HOME: home },
    });
    expect(version.stdout).toContain(`model ${DEFAULT_BUILD_MODEL}`);
  }, 180_000);

  test("the build script run from a copy with no model and no reachable hub stops with one line saying what to do", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const clone = freshClone();
    const { code, stdout, stderr } = await build(clone, `http://127.0.0.1:${port}`);
    expect(code).toBe(1);
    expect(stdout).toContain(`fetching ${DEFAULT_BUILD_MODEL} from http://127.0.0.1:${port}`);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(
      `build: no embedding model to build with, and fetching ${DEFAULT_BUILD_MODEL} failed: cannot reach http://127.0.0.1:${port}`,
    );
    expect(lines[0]).toContain(
      `Run 'bun run fetch-model ${DEFAULT_BUILD_MODEL}' where the hub is reachable, or point TRIFORGE_MODEL_DIR at a model2vec folder`,
    );
    expect(entries(join(clone, "models"))).toEqual(["manifest.json"]);
  });
});
