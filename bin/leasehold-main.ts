/**
 * What `bin/leasehold.mjs` runs: the CLI with the Next.js front end handed
 * in, so server/ itself never imports Next.js. `npm run build` bundles this
 * file (and everything it imports from the checkout) into dist/leasehold.mjs.
 */
import { main } from "../server/cli/main";
import { terminalContext } from "../server/cli/terminal";
import { projectRoot } from "../common/paths/index";

export function run(argv: string[]): Promise<number> {
  // Loaded by `start` alone: the front end pulls in the whole hub, which no other command needs at start-up.
  const loadWeb = async () => (await import("./next-web")).createNextFrontEnd(projectRoot());
  return main(argv, terminalContext(process.env, process.cwd(), loadWeb));
}
