/** The retrieval modes of recall, named once for the core, the CLI and the MCP schema. */
export const MODES = ["hybrid", "graph", "dense", "bm25"] as const;
export type Mode = (typeof MODES)[number];
