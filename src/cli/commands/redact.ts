import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand, UserError } from "../command.ts";

export default defineCommand({
  usage: "triforge redact [--project <path>] < text",
  description:
    "Prints standard input as triforge would store it: secrets and personal data replaced with [REDACTED:<kind>]. " +
    "A one-line summary goes to standard error.",
  options: {
    project: {
      type: "string",
      arg: "path",
      description:
        "Also apply this project's rules (.triforge/exclude.txt, config exclude); default: the active project around the current folder",
    },
    quiet: { type: "boolean", short: "q", description: "No summary on standard error" },
  },
  async run({ values }) {
    // PERF: the privacy layer and project lookup load only for this command.
    const { redact } = await import("../../privacy/index.ts");
    const { findProjectRoot } = await import("../../project/config.ts");
    let projectRoot: string | undefined;
    if (typeof values.project === "string") {
      projectRoot = resolve(values.project);
      if (!existsSync(projectRoot) || !statSync(projectRoot).isDirectory())
        throw new UserError(`no such folder: ${projectRoot}`);
    } else {
      projectRoot = findProjectRoot(process.cwd());
    }
    const input = await Bun.stdin.text();
    let result: ReturnType<typeof redact>;
    try {
      result = redact(input, { projectRoot });
    } catch (error) {
      // A malformed rule file: say which, print nothing (printing the input unredacted would defeat the point).
      throw new UserError((error as Error).message);
    }
    process.stdout.write(result.text);
    if (!values.quiet) {
      const counts = new Map<string, number>();
      for (const f of result.findings) counts.set(f.kind, (counts.get(f.kind) ?? 0) + 1);
      const kinds = [...counts].map(([kind, n]) => (n > 1 ? `${kind}×${n}` : kind)).join(", ");
      const review = result.review ? "; review: something near a secret-like word still looks generated" : "";
      process.stderr.write(
        `triforge redact: ${result.findings.length} redacted${kinds ? ` (${kinds})` : ""}${review}\n`,
      );
    }
    return 0;
  },
});
