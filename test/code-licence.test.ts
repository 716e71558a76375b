import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import { ChunkEncoder } from "../src/code/chunk-encoder.ts";
import { searchLoaded } from "../src/code/code-search.ts";
import { licenceRanges } from "../src/code/licence.ts";
import { refreshIndex } from "../src/code/refresh.ts";
import { loadModel } from "../src/embed/source.ts";
import { codeRepository, tempDir } from "./support/helpers.ts";

/** `text` without its licence ranges. */
function withoutNotices(text: string): string {
  const ranges = licenceRanges(text);
  let kept = "";
  let from = 0;
  for (let r = 0; r < ranges.length; r += 2) {
    kept += text.slice(from, ranges[r]);
    from = ranges[r + 1];
  }
  return kept + text.slice(from);
}

const APACHE = `// Copyright 2021 The Widget Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
`;
const GO_BODY = `// Package widget resizes widgets.
package widget

func Resize(w *Widget, factor float64) {
	w.width *= factor
}
`;

describe("licence notices at a file's head", () => {
  test("are found in each comment syntax, up to the first line of code", () => {
    expect(withoutNotices(`${APACHE}\n${GO_BODY}`)).toBe(`\n${GO_BODY}`);
    const c =
      "/* Copyright (c) 2019 Someone.\n *\n * Permission is hereby granted, free of charge.\n */\n#include <stdio.h>\n";
    expect(withoutNotices(c)).toBe("#include <stdio.h>\n");
    const python = "#!/usr/bin/env python\n# SPDX-License-Identifier: MIT\nimport os\n";
    expect(withoutNotices(python)).toBe("#!/usr/bin/env python\nimport os\n");
    const haskell = "{-\n  All rights reserved.\n-}\nmodule Main where\n";
    expect(withoutNotices(haskell)).toBe("{-\nmodule Main where\n");
  });

  test("a description before the notice, and comments without one, stay", () => {
    const swift =
      "//\n//  Resize.swift\n//  Widgets\n//\n//  Copyright © 2016 Someone. All rights reserved.\n//\n\nstruct W {}\n";
    expect(withoutNotices(swift)).toBe("//\n//  Resize.swift\n//  Widgets\n//\n\nstruct W {}\n");
    expect(licenceRanges(GO_BODY)).toEqual([]);
  });

  test("a chunk that is a notice and nothing else keeps it", () => {
    expect(licenceRanges(APACHE)).toEqual([]);
    expect(licenceRanges(`/*\n * Copyright 2021 Someone\n */\n`)).toEqual([]);
  });

  test("code ends the head: a notice after it, a directive or code on a comment's line, is kept", () => {
    expect(licenceRanges("package widget\n// Copyright 2021 Someone\n")).toEqual([]);
    expect(licenceRanges("#include <x.h>\n// Copyright 2021 Someone\n")).toEqual([]);
    expect(licenceRanges("/* Copyright 2021 Someone */ int x;\n")).toEqual([]);
    expect(licenceRanges("/* Copyright 2021\n   Someone */ int x;\n")).toEqual([]);
  });
});

describe("a chunk's vector without the licence notice", () => {
  const saved = process.env.TRIFORGE_HOME;
  beforeAll(() => {
    process.env.TRIFORGE_HOME = tempDir("triforge-code-licence-home-");
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.TRIFORGE_HOME;
    else process.env.TRIFORGE_HOME = saved;
  });

  test("equals the vector of the same file without its notice, and search returns the notice's lines", async () => {
    const licensed = `${APACHE}\n${GO_BODY}`;
    const withNotice = realpathSync(codeRepository({ "widget/resize.go": licensed }));
    const without = realpathSync(codeRepository({ "widget/resize.go": `\n${GO_BODY}` }));
    const a = await refreshIndex(withNotice);
    const b = await refreshIndex(without);
    expect(a.texts).toEqual([licensed.slice(0, -1)]); // a chunk's lines, the file's last newline aside
    expect(b.texts.length).toBe(1);
    const model = await loadModel();
    const dim = model.dim;
    let differs = 0;
    for (let d = 0; d < dim; d++) {
      expect(Math.abs(a.vectors[d] - b.vectors[d])).toBeLessThan(1e-6);
      if (Math.abs(a.vectors[d]) > 1e-3) differs++;
    }
    expect(differs).toBeGreaterThan(0);

    const { hits } = await searchLoaded(a, "apache license warranties", { topK: 1 });
    expect(hits[0].file_path).toBe("widget/resize.go");
    expect(hits[0].start_line).toBe(1);
    expect(hits[0].content).toContain("// Licensed under the Apache License, Version 2.0");
  });

  test("a chunk that does not start its file is embedded whole", async () => {
    const model = await loadModel();
    const encoder = new ChunkEncoder(model);
    encoder.add("widget/resize.go", `${APACHE}\n${GO_BODY}`, false);
    encoder.add("widget/resize.go", `${APACHE}\n${GO_BODY}`, true);
    encoder.add("widget/resize.go", `\n${GO_BODY}`, true);
    const vectors = await encoder.embed();
    const dim = model.dim;
    let apart = 0;
    for (let d = 0; d < dim; d++) {
      apart += Math.abs(vectors[d] - vectors[dim + d]);
      expect(Math.abs(vectors[dim + d] - vectors[2 * dim + d])).toBeLessThan(1e-6);
    }
    expect(apart).toBeGreaterThan(1e-3);
  });
});
