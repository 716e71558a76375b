// Provided by build/build.ts as a virtual module when a binary embeds its model.
declare module "triforge:embedded-model" {
  const model: { id: string; sha256: string; size: number; config: string; tokenizer: string; weights: string };
  export default model;
}
