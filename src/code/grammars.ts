/**
 * Tree-sitter grammars, loaded lazily one language at a time. The `.wasm` files are imported with
 * `type: "file"`, so `bun build --compile` embeds them in the binary and they resolve to paths inside
 * it; from a source checkout they resolve to node_modules. Nothing here runs until the chunker asks
 * for a language: commands that do not index (hooks, --version) never load this module.
 */
// Grammars VS Code does not ship: one package (Unlicense) holds them all, built for the same runtime.
import cWasm from "@cursorless/tree-sitter-wasms/out/tree-sitter-c.wasm" with { type: "file" };
import elixirWasm from "@cursorless/tree-sitter-wasms/out/tree-sitter-elixir.wasm" with { type: "file" };
import bashWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm" with { type: "file" };
import csharpWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-c-sharp.wasm" with { type: "file" };
import cppWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-cpp.wasm" with { type: "file" };
import goWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-go.wasm" with { type: "file" };
import javaWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-java.wasm" with { type: "file" };
import javascriptWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-javascript.wasm" with { type: "file" };
import phpWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-php.wasm" with { type: "file" };
import pythonWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-python.wasm" with { type: "file" };
import rubyWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-ruby.wasm" with { type: "file" };
import rustWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-rust.wasm" with { type: "file" };
import tsxWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-tsx.wasm" with { type: "file" };
import typescriptWasm from "@vscode/tree-sitter-wasm/wasm/tree-sitter-typescript.wasm" with { type: "file" };
import { Language, Parser } from "web-tree-sitter";
import runtimeWasm from "web-tree-sitter/web-tree-sitter.wasm" with { type: "file" };
import type { GrammarName } from "./languages.ts";

const GRAMMAR_FILES: Record<GrammarName, string> = {
  bash: bashWasm,
  c: cWasm,
  "c-sharp": csharpWasm,
  cpp: cppWasm,
  elixir: elixirWasm,
  go: goWasm,
  java: javaWasm,
  javascript: javascriptWasm,
  php: phpWasm,
  python: pythonWasm,
  ruby: rubyWasm,
  rust: rustWasm,
  tsx: tsxWasm,
  typescript: typescriptWasm,
};

let runtime: Promise<void> | undefined;
const parsers = new Map<GrammarName, Promise<Parser | undefined>>();

/**
 * A parser for the grammar, or undefined when it cannot be loaded (the caller then chunks by lines).
 * Each grammar is read and compiled once per process, on first use.
 */
export function parserFor(grammar: GrammarName): Promise<Parser | undefined> {
  let parser = parsers.get(grammar);
  if (!parser) {
    parser = (async () => {
      // Assigned before any await: two grammars loading at once must share one runtime (a second
      // init swaps the module under the first grammar, whose parser then returns wrong trees).
      runtime ??= Bun.file(runtimeWasm)
        .bytes()
        .then((wasmBinary) => Parser.init({ wasmBinary }));
      await runtime;
      const language = await Language.load(await Bun.file(GRAMMAR_FILES[grammar]).bytes());
      const instance = new Parser();
      instance.setLanguage(language);
      return instance;
    })().catch(() => undefined);
    parsers.set(grammar, parser);
  }
  return parser;
}
