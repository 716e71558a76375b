// `import path from "x.wasm" with { type: "file" }`: Bun gives the file's path (inside the binary once compiled).
declare module "*.wasm" {
  const path: string;
  export default path;
}
