/**
 * Doctor's look at the ledger (src/home/ledger.ts): hook runs of the last sessions that failed or never
 * finished (killed at their timeout, so the session started without its memory), and index runs whose
 * every LLM call failed (the graph was built locally, whatever the configured provider).
 */
import { existsSync } from "node:fs";
import { ledgerProblems, readLedger } from "../home/ledger.ts";
import { errorLogPath, hookLedgerPath, hookPendingDir } from "../home/paths.ts";
import type { Check } from "./checks.ts";

/** How many of the newest ledger records doctor looks at: about the last few sessions. */
const RECENT_RECORDS = 40;

export function hookRunChecks(projectRoot: string): Check[] {
  if (!existsSync(hookLedgerPath(projectRoot)) && !existsSync(hookPendingDir(projectRoot))) return [];
  const records = readLedger(projectRoot);
  const problems = ledgerProblems(records, RECENT_RECORDS);
  if (problems.length === 0)
    return [
      {
        name: "hook runs",
        ok: true,
        detail: `the last ${Math.min(records.length, RECENT_RECORDS)} runs finished`,
      },
    ];
  return [
    {
      name: "hook runs",
      ok: false,
      detail: problems.slice(-5).join("; "),
      fix: `see ${errorLogPath(projectRoot)} for the errors; a hook that never finished hit its timeout (a slow disk, a held lock); an LLM whose calls all fail needs its key or network checked ('triforge status' shows which)`,
    },
  ];
}
