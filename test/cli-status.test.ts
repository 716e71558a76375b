/** `triforge status` on a project whose config holds values the hooks cannot use, through the compiled binary. */
import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBinary, tempDir } from "./support/helpers.ts";

const scratch = tempDir("triforge-cli-status-");

function projectWithConfig(name: string, config: unknown): { home: string; project: string; file: string } {
  const home = join(scratch, `${name}-home`);
  const project = join(scratch, name);
  mkdirSync(home, { recursive: true });
  mkdirSync(join(project, ".triforge"), { recursive: true });
  const file = join(project, ".triforge", "config.json");
  writeFileSync(file, JSON.stringify(config));
  return { home, project, file };
}

describe("triforge status with an invalid config value", () => {
  test('{"llm": 5} is named on one line with the file, in text and JSON; the exit code stays 0', async () => {
    const { home, project, file } = projectWithConfig("bad-llm", { llm: 5 });
    const text = await runBinary(["status", "--project", project], { home });
    expect(text.code).toBe(0);
    const configLines = text.stdout.split("\n").filter((line) => line.startsWith("Config"));
    expect(configLines).toHaveLength(1);
    expect(configLines[0]).toContain(".triforge/config.json");
    expect(configLines[0]).toContain("llm is 5, expected one of auto, none");
    expect(configLines[0]).not.toContain("storage");

    const json = await runBinary(["status", "--json", "--project", project], { home });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).configError).toStartWith(`${file}: llm is 5`);
  });

  test("each bad key is named; a valid config gets no Config line", async () => {
    const bad = projectWithConfig("bad-many", { llm: "antropic", storage: "mysql", exclude: "secret" });
    const line = (await runBinary(["status", "--project", bad.project], { home: bad.home })).stdout
      .split("\n")
      .find((l) => l.startsWith("Config"));
    expect(line).toContain('llm is "antropic"');
    expect(line).toContain('storage is "mysql"');
    expect(line).toContain('exclude is "secret", expected a list of strings');

    const good = projectWithConfig("good", { storage: "local", llm: "none", exclude: ["x"] });
    const ok = await runBinary(["status", "--json", "--project", good.project], { home: good.home });
    expect(ok.stdout).not.toContain("configError");
    const okText = await runBinary(["status", "--project", good.project], { home: good.home });
    expect(okText.stdout).not.toMatch(/^Config/m);
  });
});

describe("triforge status with records captured after the last index", () => {
  test("says how many captured records are not indexed yet", async () => {
    const { home, project } = projectWithConfig("pending", { llm: "none" });
    const status = async () =>
      JSON.parse((await runBinary(["status", "--json", "--project", project], { home })).stdout);
    const data = (await status()).dataDir as string;
    mkdirSync(data, { recursive: true });
    const record = (i: number, role: string, text: string) =>
      `${JSON.stringify({ ts: `2025-05-0${i}T10:00:00.000Z`, session_id: `p${i}`, role, text, uuid: `p${i}-${role}` })}\n`;
    const log = join(data, "chats.jsonl");
    writeFileSync(
      log,
      record(1, "user", "Which queue?") + record(1, "assistant", "We'll use Redis streams."),
    );
    expect((await runBinary(["index", "--project", project], { home })).code).toBe(0);
    appendFileSync(
      log,
      record(2, "user", "Retry limit?") + record(2, "assistant", "Three attempts, then dead-letter."),
    );

    const json = await status();
    const text = (await runBinary(["status", "--project", project], { home })).stdout;
    expect(json.pendingRecords).toBe(2);
    expect(text).toMatch(/^Pending +2 captured record\(s\) not indexed yet/m);
    expect((await runBinary(["index", "--project", project], { home })).code).toBe(0);
    expect((await status()).pendingRecords).toBe(0);
    expect((await runBinary(["status", "--project", project], { home })).stdout).not.toMatch(/^Pending/m);
  });
});
