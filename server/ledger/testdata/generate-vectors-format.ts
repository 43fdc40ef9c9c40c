/** One vector per line: small diffs, still plain JSON for any language. */
export function serializeVectors(file: { comment: string; leaf_data: string; vectors: unknown[] }): string {
  const lines = file.vectors.map((v) => `  ${JSON.stringify(v)}`).join(",\n");
  return `{\n "comment": ${JSON.stringify(file.comment)},\n "leaf_data": ${JSON.stringify(file.leaf_data)},\n "vectors": [\n${lines}\n ]\n}\n`;
}
