// A local ESLint rule: imports may not cross the folder boundaries the
// architecture draws (server/trust/README.md). It resolves each relative
// import against the importing file, and the `~/` alias (tsconfig.json
// `paths`) against the checkout's root, so `../../server/db`, `../db` and
// `~/server/db` are judged by where they land, not by how they are spelled.
//
// Options (one object):
//   forbidden: folders (repo-relative, "" = the whole checkout) an import must not land in
//   allowed:   folders inside those that are nevertheless fine
//   packages:  if given, the only bare specifiers allowed (e.g. "zod", "node:crypto")
//   reason:    appended to the message: why the boundary exists
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

function inside(rel, folder) {
  return folder === "" || rel === folder.replace(/\/$/, "") || rel.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}

const rule = {
  meta: {
    type: "problem",
    docs: { description: "imports may not cross the folder boundaries of the architecture" },
    schema: [
      {
        type: "object",
        properties: {
          forbidden: { type: "array", items: { type: "string" } },
          allowed: { type: "array", items: { type: "string" } },
          packages: { type: "array", items: { type: "string" } },
          reason: { type: "string" },
        },
        required: ["forbidden", "reason"],
        additionalProperties: false,
      },
    ],
    messages: {
      crossesFolder: "{{file}} may not import {{target}}: {{reason}}",
      packageNotAllowed: "{{file}} may not import the package {{target}} (only {{packages}}): {{reason}}",
    },
  },
  create(context) {
    const { forbidden, allowed = [], packages, reason } = context.options[0];
    const filename = context.filename;
    const file = path.relative(ROOT, filename).split(path.sep).join("/");
    function check(node, source) {
      if (source === null || source === undefined || typeof source.value !== "string") return;
      const spec = source.value;
      if (spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("~/")) {
        const resolved = spec.startsWith("~/") ? path.resolve(ROOT, spec.slice(2)) : path.resolve(path.dirname(filename), spec);
        const target = path.relative(ROOT, resolved).split(path.sep).join("/");
        if (forbidden.some((f) => inside(target, f)) && !allowed.some((a) => inside(target, a))) {
          context.report({ node: source, messageId: "crossesFolder", data: { file, target, reason } });
        }
      } else if (packages !== undefined && !packages.includes(spec)) {
        context.report({ node: source, messageId: "packageNotAllowed", data: { file, target: spec, packages: packages.join(", "), reason } });
      }
    }
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source.type === "Literal" ? node.source : null),
    };
  },
};

export default { rules: { "import-boundaries": rule } };
