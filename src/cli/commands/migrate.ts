import { indexLockPath, storePath } from "../../home/paths.ts";
import { findProjectRoot, readProjectConfig } from "../../project/config.ts";
import { defineCommand, UsageError, UserError } from "../command.ts";

const KINDS = ["local", "postgres", "insforge"] as const;

export default defineCommand({
  usage: "triforge migrate --to=local|postgres|insforge [--project <path>]",
  description:
    "Copies a project's memory to another storage backend, verifies every table (row count and SHA-256), and switches .triforge/config.json only then. The source is never changed; an interrupted copy resumes when run again. Postgres reads TRIFORGE_PG_URL (or postgres.url in the config), InsForge INSFORGE_BASE_URL and INSFORGE_API_KEY (or insforge.baseUrl), and the project's name in it from postgres.project or insforge.project (default: the folder's name).",
  options: {
    to: { type: "string", arg: "backend", description: "local, postgres or insforge" },
    project: {
      type: "string",
      arg: "path",
      description: "The project (or a folder inside it); default: the current folder",
    },
  },
  async run({ values }) {
    const to = String(values.to ?? "");
    if (!KINDS.includes(to as (typeof KINDS)[number]))
      throw new UsageError(`--to must be one of ${KINDS.join(", ")}`);
    const start = typeof values.project === "string" ? values.project : process.cwd();
    const root = findProjectRoot(start);
    if (!root)
      throw new UserError(`memory is not active for ${start} (no .triforge/config.json here or above)`);
    const { migrateStore, MigrateError } = await import("../../store/migrate.ts");
    const { storageTarget, writerName } = await import("../../store/settings.ts");
    const { connectRemote } = await import("../../store/remote.ts");
    const { StoreUnavailableError } = await import("../../store/pg-client.ts");
    const { tryLock } = await import("../../memory/lock.ts");
    let config: ReturnType<typeof readProjectConfig>;
    let from: ReturnType<typeof storageTarget>;
    let target: ReturnType<typeof storageTarget>;
    try {
      config = readProjectConfig(root);
      from = storageTarget(config.storage, config, root);
      target = storageTarget(to as (typeof KINDS)[number], config, root);
    } catch (error) {
      throw new UserError((error as Error).message);
    }
    // No indexer may write the source while it is copied.
    const lock = tryLock(indexLockPath(root), "migrate");
    if (!lock) throw new UserError("an indexer is running for this project; try again when it has finished");
    try {
      const report = await migrateStore(root, storePath(root), from, target, {
        connect: connectRemote,
        writer: writerName(root),
        onTable: (table, rows, copied) =>
          process.stdout.write(
            `  ${table}: ${rows} rows verified${copied ? ` (${copied} copied now)` : ""}\n`,
          ),
      });
      const rows = report.tables.reduce((sum, t) => sum + t.rows, 0);
      process.stdout.write(
        `Memory of ${root} copied from ${report.from} to ${report.to} and verified (${rows} rows in ${report.tables.length} tables); .triforge/config.json now says storage ${report.to}.\n`,
      );
      return 0;
    } catch (error) {
      if (error instanceof MigrateError || error instanceof StoreUnavailableError)
        throw new UserError(`${(error as Error).message}. Nothing was switched; run it again to resume.`);
      throw error;
    } finally {
      lock.release();
    }
  },
});
