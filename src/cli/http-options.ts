/**
 * `serve --http` and `ingest`: their options and environment (triforge's, and claw-rag-service's names
 * for compatibility) turned into the RAG service and the HTTP server.
 */
import type { RemoteEmbeddingConfig } from "../embed/remote.ts";
import { logError } from "../home/log.ts";
import { ragCatalogPath } from "../home/paths.ts";
import { QUERY_WORKER_ENV } from "../http/query-pool.ts";
import { configPath, embeddingProblems, findProjectRoot, readProjectConfig } from "../project/config.ts";
import type { OptionValues } from "./command.ts";
import { UserError } from "./command.ts";

export const DEFAULT_HTTP_HOST = "127.0.0.1";
export const DEFAULT_HTTP_PORT = 8787;

/** `--db`, else CLAW_RAG_DB, else the data folder's catalog. */
export function catalogPathOf(values: OptionValues, env = process.env): string {
  return typeof values.db === "string" && values.db ? values.db : env.CLAW_RAG_DB || ragCatalogPath();
}

export function workspacesOf(values: OptionValues): string[] {
  const given = values.workspace;
  return (Array.isArray(given) ? given : given === undefined ? [] : [given]).filter(
    (w): w is string => typeof w === "string" && w !== "",
  );
}

/**
 * The remote embeddings endpoint for these workspaces: the CLAW_RAG_* variables, else the `embedding`
 * setting of their projects' .triforge/config.json (the nearest one at or above each workspace), else
 * none (the embedded model). The workspaces share one catalog and so one vector space: projects naming
 * different settings, or a setting that is wrong, are a clear error rather than a guess.
 */
export async function remoteOf(
  workspaces: string[],
  env: Record<string, string | undefined> = process.env,
): Promise<RemoteEmbeddingConfig | undefined> {
  const { remoteEmbeddingConfig, RemoteEmbeddingError } = await import("../embed/remote.ts");
  const named = new Map<string, { file: string; settings: object }>();
  for (const workspace of workspaces) {
    const root = findProjectRoot(workspace);
    if (!root) continue;
    const file = configPath(root);
    let embedding: unknown;
    try {
      embedding = readProjectConfig(root).embedding;
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    if (embedding === undefined) continue;
    const problems = embeddingProblems(embedding);
    if (problems.length) throw new UserError(`${file}: ${problems.join("; ")}`);
    named.set(JSON.stringify(embedding), { file, settings: embedding as object });
  }
  if (named.size > 1)
    throw new UserError(
      `the workspaces' projects name different embedding settings (${[...named.values()].map((n) => n.file).join(", ")}): their vectors share one catalog, so give them the same, or ingest them into separate catalogs (--db)`,
    );
  try {
    return remoteEmbeddingConfig(env, [...named.values()][0]?.settings);
  } catch (error) {
    if (error instanceof RemoteEmbeddingError) throw new UserError(error.message);
    throw error;
  }
}

function portOf(values: OptionValues, env: Record<string, string | undefined>): number {
  const raw = typeof values.port === "string" ? values.port : (env.TRIFORGE_HTTP_PORT ?? env.CLAW_RAG_PORT);
  if (raw === undefined || raw === "") return DEFAULT_HTTP_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UserError(`port must be 0–65535, not '${raw}'`);
  return port;
}

/** `--workers`: query processes beside the server (0, the default: queries are answered in it). */
function workersOf(values: OptionValues): number {
  const raw = values.workers;
  if (raw === undefined) return 0;
  const workers = Number(raw);
  if (typeof raw !== "string" || !Number.isInteger(workers) || workers < 0 || workers > MAX_WORKERS)
    throw new UserError(`--workers must be a whole number from 0 to ${MAX_WORKERS}, not '${raw}'`);
  return workers;
}
const MAX_WORKERS = 64;

/** Runs the HTTP server until SIGINT or SIGTERM. */
export async function serveHttp(values: OptionValues, env = process.env): Promise<number> {
  const workerSetup = env[QUERY_WORKER_ENV];
  if (workerSetup) {
    const { runQueryWorker } = await import("../http/query-pool.ts");
    return runQueryWorker(JSON.parse(workerSetup));
  }
  const workers = workersOf(values);
  const host =
    (typeof values.host === "string" && values.host) ||
    env.TRIFORGE_HTTP_HOST ||
    env.CLAW_RAG_HOST ||
    DEFAULT_HTTP_HOST;
  const port = portOf(values, env);
  const catalogPath = catalogPathOf(values, env);
  const [
    { RagService, RagRequestError },
    { Catalog },
    { resolveToken, isLoopback },
    { startHttpServer },
    { QueryPool },
  ] = await Promise.all([
    import("../rag/service.ts"),
    import("../rag/catalog.ts"),
    import("../http/auth.ts"),
    import("../http/server.ts"),
    import("../http/query-pool.ts"),
  ]);
  let workspaces = workspacesOf(values);
  if (workspaces.length === 0) {
    const catalog = Catalog.open(catalogPath);
    workspaces = catalog.workspaces().map((w) => w.root);
    catalog.close();
  }
  if (workspaces.length === 0) workspaces = [process.cwd()];
  const remote = await remoteOf(workspaces, env);
  let rag: InstanceType<typeof RagService>;
  try {
    rag = new RagService(workspaces, { catalogPath, remote });
  } catch (error) {
    if (error instanceof RagRequestError) throw new UserError(`--workspace: ${error.message}`);
    throw error;
  }
  const token = resolveToken(typeof values.token === "string" ? values.token : undefined, env);
  const pool =
    workers > 0
      ? new QueryPool({ workspaces: rag.workspaces, catalogPath, remote }, workers, rag)
      : undefined;
  let server: ReturnType<typeof startHttpServer>;
  try {
    server = startHttpServer({
      host,
      port,
      token: token.token,
      rag,
      query: pool ? (query, topK) => pool.query(query, topK) : undefined,
      requireToken: values["require-token"] === true,
      allowOrigin: typeof values["allow-origin"] === "string" ? values["allow-origin"] : undefined,
    });
  } catch (error) {
    await pool?.close();
    throw new UserError(`cannot listen on ${host}:${port}: ${(error as Error).message}`);
  }
  // The indexes load (and are prepared) now, not on the first query; the searches that warm a query
  // path up run where queries are answered (each worker runs its own).
  rag.warm({ searches: !pool }).catch((error) => logError("serve --http: loading the indexes", error));
  const where = token.path
    ? `the token is in ${token.path}`
    : `the token is from ${token.source === "flag" ? "--token" : "TRIFORGE_HTTP_TOKEN"}`;
  console.error(
    `triforge http: listening on ${server.url} (workspaces: ${rag.workspaces.join(", ")}${pool ? `; ${workers} query workers` : ""})`,
  );
  console.error(
    isLoopback(host) && values["require-token"] !== true
      ? `triforge http: loopback only; changing memory needs the page or 'Authorization: Bearer' (${where})`
      : `triforge http: every route but /health needs 'Authorization: Bearer' (${where}); open ${server.url}/?token=… for the page`,
  );
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  await server.stop();
  await pool?.close();
  return 0;
}
