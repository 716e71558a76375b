import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Finding } from "./types.ts";

/**
 * The user's own rules: `.triforge/exclude.txt` (one literal or `/regex/flags` a line, `#` starts a
 * comment) and the `exclude` list of `.triforge/config.json`. Literals match case-insensitively: a client's
 * name should go whatever its case.
 */

const cache = new Map<string, { stamp: string; rules: string[] }>();

function stamp(file: string): string {
  try {
    const s = statSync(file);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return "-";
  }
}

/** The project's rules; re-read only when one of the two files changed. */
export function loadProjectRules(projectRoot: string): string[] {
  const excludeFile = join(projectRoot, ".triforge", "exclude.txt");
  const configFile = join(projectRoot, ".triforge", "config.json");
  const key = `${stamp(excludeFile)}|${stamp(configFile)}`;
  const cached = cache.get(projectRoot);
  if (cached?.stamp === key) return cached.rules;
  const rules: string[] = [];
  if (existsSync(excludeFile)) {
    for (const line of readFileSync(excludeFile, "utf8").split(/\r?\n/)) {
      const rule = line.trim();
      if (rule && !rule.startsWith("#")) rules.push(rule);
    }
  }
  if (existsSync(configFile)) {
    let config: unknown;
    try {
      config = JSON.parse(readFileSync(configFile, "utf8"));
    } catch (error) {
      throw new Error(`${configFile}: ${(error as Error).message}`);
    }
    const exclude = (config as { exclude?: unknown })?.exclude;
    if (exclude !== undefined) {
      if (!Array.isArray(exclude) || !exclude.every((r) => typeof r === "string")) {
        throw new Error(`${configFile}: "exclude" must be a list of strings`);
      }
      for (const r of exclude) if (r.trim()) rules.push(r.trim());
    }
  }
  cache.set(projectRoot, { stamp: key, rules });
  return rules;
}

const compiled = new Map<string, RegExp>();

/** A rule as a global RegExp; a malformed `/regex/` is an error that names the rule. */
export function compileRule(rule: string): RegExp {
  let re = compiled.get(rule);
  if (re) return re;
  const regex = /^\/(.+)\/([a-z]*)$/s.exec(rule);
  if (regex) {
    const flags = regex[2];
    if (/[^imsu]/.test(flags))
      throw new Error(`exclude rule ${rule}: unsupported flags "${flags}" (use i, m, s, u)`);
    try {
      re = new RegExp(regex[1], `${flags}g`);
    } catch (error) {
      throw new Error(`exclude rule ${rule}: ${(error as Error).message}`);
    }
  } else {
    re = new RegExp(rule.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi");
  }
  compiled.set(rule, re);
  return re;
}

export function findUserRules(text: string, rules: string[], out: Finding[]): void {
  for (const rule of rules) {
    const re = compileRule(rule);
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      out.push({ start: m.index, end: m.index + m[0].length, kind: "custom" });
    }
  }
}
