import { accessSync, constants, mkdirSync } from "node:fs";
import { describeModelSource, loadModel, repairEmbeddedModelCache } from "../../embed/source.ts";
import { defineCommand } from "../command.ts";
import { dataDir } from "../paths.ts";

/** One check: a name, whether it passed, what was seen, and the fix when it did not pass. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

/** Every hook writes under the data directory; one that is a file or read-only loses each capture. */
function dataDirCheck(): Check {
  const dir = dataDir();
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return { name: "data directory", ok: true, detail: dir };
  } catch (error) {
    return {
      name: "data directory",
      ok: false,
      detail: `${dir} is not a writable folder (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      fix: `make ${dir} a folder you can write to, or point TRIFORGE_HOME at one`,
    };
  }
}

export async function runChecks(projectStart?: string): Promise<Check[]> {
  const checks: Check[] = [];
  checks.push({ name: "binary", ok: true, detail: process.execPath });
  checks.push(dataDirCheck());
  try {
    // Before loading: a damaged extracted copy is replaced here rather than reported.
    const cache = await repairEmbeddedModelCache();
    if (cache) {
      checks.push({
        name: "model cache",
        ok: true,
        detail: cache.repaired
          ? `${cache.path} was damaged or missing: extracted again`
          : `${cache.path} intact`,
      });
    }
  } catch (error) {
    checks.push({
      name: "model cache",
      ok: false,
      detail: (error as Error).message,
      fix: "reinstall triforge",
    });
  }
  try {
    const model = await loadModel();
    const probe = await model.embed("triforge doctor");
    const ok = probe.some((x) => x !== 0);
    checks.push({
      name: "embedding model",
      ok,
      detail: `${model.id}, dimension ${model.dim}, from ${describeModelSource()}`,
      fix: ok ? undefined : "the model returns zero vectors: reinstall triforge or unset TRIFORGE_MODEL_DIR",
    });
  } catch (error) {
    checks.push({
      name: "embedding model",
      ok: false,
      detail: (error as Error).message,
      fix: "reinstall triforge, or unset TRIFORGE_MODEL_DIR",
    });
  }
  // PERF: agent config and project checks load only for doctor.
  const { agentChecks, projectChecks } = await import("../../agents/checks.ts");
  const { resolveProject } = await import("../../agents/activate.ts");
  checks.push(...agentChecks(), ...projectChecks(resolveProject(projectStart)));
  return checks;
}

export default defineCommand({
  usage: "triforge doctor [--json] [--project <path>]",
  description:
    "Checks the installation and prints the fix for each problem found. Exits 1 when a check fails.",
  options: {
    json: { type: "boolean", description: "Print the checks as JSON" },
    project: {
      type: "string",
      arg: "path",
      description: "Also check this project's hooks and store (default: the current directory)",
    },
  },
  async run({ values }) {
    const checks = await runChecks(values.project as string | undefined);
    if (values.json) process.stdout.write(`${JSON.stringify(checks, null, 2)}\n`);
    else {
      for (const c of checks) {
        process.stdout.write(`${c.ok ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}\n`);
        if (!c.ok && c.fix) process.stdout.write(`      fix: ${c.fix}\n`);
      }
    }
    return checks.every((c) => c.ok) ? 0 : 1;
  },
});
