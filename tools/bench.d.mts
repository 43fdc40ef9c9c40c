/** Replaces the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`; throws when the pair is missing or repeated. */
export function spliceBenchSection(doc: string, name: string, markdown: string): string;
