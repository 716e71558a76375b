/**
 * Why memory has nothing to say, worded once for every adapter (recall, `status`, MCP, HTTP): each names
 * the command that fixes it.
 */
import { triforgeCommand } from "../home/shell.ts";

export function notActiveReason(root: string): string {
  return `memory is not active for ${root} (no .triforge/config.json); run 'triforge activate' there to turn it on`;
}

/** No store yet; `running` is a note such as " (the indexer is running now)". */
export function notIndexedReason(root: string, running = ""): string {
  return `no memory indexed yet for this project${running}; it is built when a session ends, or by \`${triforgeCommand(["index", "--project", root])}\``;
}

/** The first words of an empty answer, the same from the CLI, MCP and HTTP. */
export const NO_MEMORY_FOUND = "No memory found";

/** The store cannot be read; the indexer rebuilds it from chats.jsonl. */
export function damagedReason(root: string, cause: string): string {
  return `the memory index is damaged (${cause}); run \`${triforgeCommand(["index", "--project", root])}\` to rebuild it`;
}

/** The store was found damaged and moved aside; `who` says what rebuilds it ("an indexer started …"). */
export function rebuildingReason(cause: string, who: string): string {
  return `the memory index was damaged (${cause}); ${who} from chats.jsonl, ask again in a moment`;
}
