/** The page's style sheet and script are embedded as text (`import x from "./page.css" with { type: "text" }`). */
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*/page.js" {
  const text: string;
  export default text;
}
