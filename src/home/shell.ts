/**
 * Quoting for command lines triforge writes (agent hooks) or prints for the user to paste (doctor's
 * fixes, error hints): a path with a space or a `'` must reach the program as one argument.
 */

/**
 * One argument quoted for the user's shell: POSIX `sh` quoting on Unix (bare when it is plainly safe,
 * single quotes otherwise); on Windows, Git Bash (which Claude Code uses), cmd or PowerShell, so double
 * quotes and forward slashes, which all of them read alike and which Windows programs accept in paths.
 */
export function shellQuote(arg: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") {
    // Always quoted: Windows paths hold spaces ("Program Files") more often than not.
    return `"${arg.replaceAll("\\", "/").replaceAll('"', '\\"')}"`;
  }
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** Subcommands and option names: safe in every shell, so left bare for readability (even on Windows). */
const PLAIN_WORD_RE = /^-{0,2}[a-z][a-z0-9-]*$/;

/** A `triforge …` command for the user to run, each argument quoted: `triforge index --project '/my app'`. */
export function triforgeCommand(args: string[], platform: NodeJS.Platform = process.platform): string {
  return ["triforge", ...args.map((arg) => (PLAIN_WORD_RE.test(arg) ? arg : shellQuote(arg, platform)))].join(
    " ",
  );
}
