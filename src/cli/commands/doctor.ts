import { defineCommand } from "../command.ts";
import { styleFor } from "../style.ts";

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
    const { runChecks } = await import("../../doctor/checks.ts");
    const checks = await runChecks(values.project as string | undefined);
    if (values.json) process.stdout.write(`${JSON.stringify(checks, null, 2)}\n`);
    else {
      const style = styleFor(process.stdout);
      for (const c of checks) {
        process.stdout.write(`${c.ok ? style.ok("ok  ") : style.warn("FAIL")}  ${c.name}: ${c.detail}\n`);
        if (!c.ok && c.fix) process.stdout.write(`      fix: ${c.fix}\n`);
      }
    }
    return checks.every((c) => c.ok) ? 0 : 1;
  },
});
