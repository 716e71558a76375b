/**
 * The health checks `triforge doctor` prints: binary, data directory, model, agent configs, project
 * hooks and store. Each says what it saw and, when it fails, the fix.
 */
import { accessSync, constants, mkdirSync } from "node:fs";
import { describeModelSource, loadModel, repairEmbeddedModelCache } from "../embed/source.ts";
import { dataDir } from "../home/paths.ts";

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

/** Every check doctor runs, in the order it prints them; `projectStart` is the project to check. */
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
        detail: cache.firstUse
          ? `extracted to ${cache.path} (the first run of this binary)`
          : cache.repaired
            ? `${cache.path} did not match the model in the binary: extracted again`
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
  const { agentChecks, projectChecks } = await import("./agent-checks.ts");
  const { llmChecks } = await import("./llm-checks.ts");
  const { resolveProject } = await import("../agents/activate.ts");
  const root = resolveProject(projectStart);
  const { hookRunChecks } = await import("./hook-checks.ts");
  const { sharedStoreChecks } = await import("./shared-checks.ts");
  checks.push(...agentChecks(), ...projectChecks(root), ...(await sharedStoreChecks(root)));
  checks.push(...(await llmChecks(root)), ...hookRunChecks(root));
  return checks;
}
