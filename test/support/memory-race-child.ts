/**
 * A second process for the capture-vs-forget race in memory-index.test.ts (TRIFORGE_HOME from the
 * environment). Usage:
 *   bun test/memory-race-child.ts forget <project root> <session id>
 *   bun test/memory-race-child.ts append <project root> <session id> <count>   (as capture appends: one
 *   record per locked append)
 */
import { appendChatRecords, withChatLogLock } from "../../src/memory/chatlog.ts";
import { forgetSession } from "../../src/memory/forget.ts";

const [mode, root, session, count] = process.argv.slice(2);
if (mode === "forget") {
  process.stdout.write(`${JSON.stringify(await forgetSession(root, session))}\n`);
} else {
  for (let i = 0; i < Number(count); i++) {
    const record = {
      ts: new Date().toISOString(),
      session_id: session,
      role: "user" as const,
      text: `appended while forgetting ${i}`,
      uuid: `${session}-race-${i}`,
    };
    withChatLogLock(root, "capture", () => appendChatRecords(root, [record]));
    await Bun.sleep(1);
  }
}
