// Module resolve hook (see node20-register.mjs): "fs" imported by the
// conformance package → node20-fs.mjs. Every other import is untouched.
const SHIM = new URL("./node20-fs.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes("/@modelcontextprotocol/conformance/")) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
