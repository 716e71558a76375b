/**
 * The web page, embedded in the binary as text (no CDN, works offline): one HTML file, its script and its
 * style sheet, served by src/http/server.ts.
 */
import css from "./page.css" with { type: "text" };
import html from "./page.html" with { type: "text" };
import script from "./page.js" with { type: "text" };

// Bun's types call an .html import an HTMLBundle; with `type: "text"` it is the file's text.
const ASSETS: Record<string, string> = {
  "page.html": html as unknown as string,
  "page.css": css,
  "page.js": script,
};

export function pageAsset(name: "page.html" | "page.css" | "page.js" | string): string {
  return ASSETS[name];
}
