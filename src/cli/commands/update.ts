import pkg from "../../../package.json" with { type: "json" };
import {
  assetName,
  compareVersions,
  DEFAULT_API,
  downloadVerified,
  latestRelease,
  swapBinary,
} from "../../agents/update.ts";
import { isCompiled } from "../../home/runtime.ts";
import { defineCommand, UserError } from "../command.ts";
import { terminalProgress } from "../progress.ts";

export default defineCommand({
  usage: "triforge update [--check] [--force] [--base-url <url>]",
  description:
    "Updates this binary to the newest GitHub release: downloads the asset for this platform, verifies it against the release's SHA256SUMS, checks it runs, and swaps it in atomically (the old binary is kept until the new one answers --version).",
  options: {
    check: { type: "boolean", description: "Only say whether a newer release exists" },
    force: { type: "boolean", description: "Install the newest release even when it is not newer" },
    "base-url": {
      type: "string",
      arg: "url",
      description: "GitHub API base (default: TRIFORGE_UPDATE_URL or https://api.github.com)",
    },
  },
  async run({ values }) {
    const api = (values["base-url"] as string | undefined) ?? process.env.TRIFORGE_UPDATE_URL ?? DEFAULT_API;
    const target = process.execPath;
    if (!isCompiled())
      throw new UserError(`this triforge runs from source (${target} is Bun); update it with git pull`);
    try {
      const release = await latestRelease(api);
      const newer = compareVersions(release.tag_name, pkg.version) > 0;
      if (!newer && !values.force) {
        process.stdout.write(
          `triforge ${pkg.version} is up to date (newest release: ${release.tag_name}).\n`,
        );
        return 0;
      }
      if (values.check) {
        process.stdout.write(
          `triforge ${release.tag_name} is available (this is ${pkg.version}); run 'triforge update'.\n`,
        );
        return 0;
      }
      process.stdout.write(`Downloading ${assetName()} from ${release.tag_name}...\n`);
      // The download is tens of MB: a bar on a terminal, counted in MB.
      const bar = terminalProgress("MB");
      const onProgress = bar
        ? (received: number, total: number) =>
            bar.update(Math.round(received / 1e5) / 10, Math.round(total / 1e5) / 10, "downloading")
        : undefined;
      const binary = await downloadVerified(release, undefined, onProgress).finally(() => bar?.clear());
      const version = swapBinary(target, binary);
      process.stdout.write(`Updated ${target}: ${pkg.version} -> ${version.replace(/^triforge /, "")}\n`);
      return 0;
    } catch (error) {
      throw new UserError(`update failed: ${(error as Error).message}`);
    }
  },
});
