/**
 * The comparative benchmark's quality rubric: an LLM judge scores an answer 1–5 against what the task
 * asked. Only when ANTHROPIC_API_KEY is given (the scripted mode has no judgement to make: its answers
 * state exactly what reached the model). TRIFORGE_JUDGE_MODEL picks the model.
 */
import type Anthropic from "@anthropic-ai/sdk";

export const JUDGE_MODEL = process.env.TRIFORGE_JUDGE_MODEL ?? "claude-haiku-4-5";

export const RUBRIC = `Score the assistant's answer from 1 to 5:
5 — answers the question fully and correctly, citing the project's real names (files, functions, decisions);
4 — correct, with a small gap; 3 — partly correct or vague; 2 — mostly wrong or evasive; 1 — wrong, or no answer.
Reply with the digit only.`;

/** The score, or undefined when the judge's reply holds no digit 1–5 (reported as such, never guessed). */
export async function judgeAnswer(
  client: Anthropic,
  question: string,
  expected: string,
  answer: string,
): Promise<number | undefined> {
  const reply = await client.messages.create({
    model: JUDGE_MODEL,
    max_tokens: 8,
    system: RUBRIC,
    messages: [
      {
        role: "user",
        content: `Question: ${question}\n\nWhat a good answer holds: ${expected}\n\nThe assistant's answer:\n${answer}`,
      },
    ],
  });
  const text = reply.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  const digit = /[1-5]/.exec(text)?.[0];
  return digit ? Number(digit) : undefined;
}
