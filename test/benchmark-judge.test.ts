/** The benchmark's LLM judge against the fake Messages API: the request it sends and how it reads the reply. */
import { afterAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { JUDGE_MODEL, judgeAnswer, RUBRIC } from "../benchmark/judge.ts";
import { startFakeAnthropic, textReply } from "./support/fakes/anthropic.ts";

describe("the benchmark's quality judge", () => {
  const fake = startFakeAnthropic();
  afterAll(() => fake.stop());
  const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: fake.url, maxRetries: 0 });

  test("sends the rubric, the question, what a good answer holds and the answer; reads the digit", async () => {
    fake.enqueue(textReply("4"));
    const score = await judgeAnswer(
      client,
      "What did we decide?",
      "done is final",
      "Done tasks are never reopened.",
    );
    expect(score).toBe(4);
    const body = fake.messageRequests().at(-1)?.body;
    expect(body.model).toBe(JUDGE_MODEL);
    expect(body.system).toBe(RUBRIC);
    const prompt = body.messages[0].content as string;
    for (const part of ["What did we decide?", "done is final", "Done tasks are never reopened."])
      expect(prompt).toContain(part);
  });

  test("a reply without a score from 1 to 5 is no score, not a guess", async () => {
    fake.enqueue(textReply("I cannot tell."), textReply("9"));
    expect(await judgeAnswer(client, "q", "e", "a")).toBeUndefined();
    expect(await judgeAnswer(client, "q", "e", "a")).toBeUndefined();
  });
});
