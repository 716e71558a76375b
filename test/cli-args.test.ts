import { describe, expect, test } from "bun:test";
import { defineCommand, parseCommandArgs, UsageError } from "../src/cli/command.ts";

const command = defineCommand({
  usage: "t",
  description: "t",
  positionals: true,
  options: {
    project: { type: "string", description: "p" },
    k: { type: "string", short: "k", default: "5", description: "k" },
    json: { type: "boolean", description: "j" },
    tag: { type: "string", multiple: true, description: "t" },
  },
  run: () => 0,
});

describe("option parsing", () => {
  test("long options with = or a separate value, short options joined or separate, defaults", () => {
    expect(parseCommandArgs(command, ["--project=/a b", "q"])).toEqual({
      values: { project: "/a b", k: "5" },
      positionals: ["q"],
    });
    expect(parseCommandArgs(command, ["--project", "/p", "-k", "9", "--json"]).values).toEqual({
      project: "/p",
      k: "9",
      json: true,
    });
    expect(parseCommandArgs(command, ["-k12"]).values.k).toBe("12");
    expect(parseCommandArgs(command, ["-k=3"]).values.k).toBe("3");
  });

  test("repeatable options collect, -- ends options, a lone - is a positional", () => {
    const parsed = parseCommandArgs(command, ["--tag", "a", "--tag=b", "-", "--", "--json"]);
    expect(parsed.values.tag).toEqual(["a", "b"]);
    expect(parsed.values.json).toBeUndefined();
    expect(parsed.positionals).toEqual(["-", "--json"]);
  });

  test("unknown options, a missing value, a value on a boolean and stray positionals are usage errors", () => {
    expect(() => parseCommandArgs(command, ["--nope"])).toThrow(UsageError);
    expect(() => parseCommandArgs(command, ["-x"])).toThrow(UsageError);
    expect(() => parseCommandArgs(command, ["--project"])).toThrow("needs a value");
    expect(() => parseCommandArgs(command, ["--json=yes"])).toThrow("takes no value");
    expect(() => parseCommandArgs({ ...command, positionals: false }, ["stray"])).toThrow(
      "unexpected argument 'stray'",
    );
  });

  test("an option named like an Object prototype member is unknown, not a crash", () => {
    expect(() => parseCommandArgs(command, ["--toString"])).toThrow(UsageError);
  });
});
