import { beforeAll, expect, test } from "bun:test";
import { openIndex, searchLoaded } from "../src/code/code-search.ts";
import type { CodeIndex } from "../src/code/store.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

/**
 * A type used in far more chunks than the candidate pool holds (5 × k, at least 50), defined once
 * in a file not named after it, in a chunk where the name occurs once among many other words: its
 * uses outrank it on BM25, so without a scan of the name's holders the definition's place in the
 * results depended on k.
 */
const FILES: Record<string, string> = {};
for (let i = 0; i < 90; i++)
  FILES[`src/ui/panel${i}.go`] =
    `package ui\n\n// panel${i} draws a Widget beside another Widget.\nfunc drawPanel${i}(w Widget, other Widget) Widget {\n\treturn merge(w, other, Widget{})\n}\n`;
FILES["src/model/shapes.go"] = `package model

// The drawable element every panel, dialog and menu is made of: its bounds, its visibility and
// the layers it paints on, in the order the compositor reads them when a frame is assembled.
type Widget struct {
\tbounds     Rect
\tvisible    bool
\tlayers     []Layer
\tcompositor *Compositor
\tpadding    Insets
\tmargin     Insets
}
`;

let index: CodeIndex;
beforeAll(async () => {
  process.env.TRIFORGE_HOME = tempDir("triforge-home-");
  index = await openIndex(codeRepository(FILES), { refresh: "now" });
});

test("an identifier query finds the type's definition whatever k is", async () => {
  for (const topK of [3, 10, 30]) {
    const { hits } = await searchLoaded(index, "Widget", { topK });
    expect([topK, hits[0]?.file_path]).toEqual([topK, "src/model/shapes.go"]);
  }
});
