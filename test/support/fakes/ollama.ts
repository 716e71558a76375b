/**
 * A fake Ollama on 127.0.0.1: the OpenAI-compatible `POST /v1/chat/completions` (no key needed; a model
 * that is not pulled gets Ollama's 404 "model … not found, try pulling it first"), plus what clients
 * probe it with: `GET /` ("Ollama is running"), `GET /api/tags` (`{models: [{name, model, size, digest,
 * details…}]}`) and `GET /v1/models`. Set `OLLAMA_HOST` to `fake.url`. Scripting as in openai.ts.
 */
import { type ChatReply, type FakeOpenAI, startFakeOpenAI } from "./openai.ts";

export { chatReply, errorReply, hangReply, rawReply } from "./openai.ts";

export function startFakeOllama(
  options: { models?: string[]; probeDelayMs?: number; fallback?: ChatReply | null } = {},
): FakeOpenAI {
  return startFakeOpenAI({
    fallback: options.fallback,
    ollama: { models: options.models ?? ["qwen2.5:3b"], probeDelayMs: options.probeDelayMs },
  });
}
