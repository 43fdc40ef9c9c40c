/**
 * axe-core as the specs run it: the WCAG 2.x A/AA tags and best practices.
 *
 * A page without frames is analysed in the page itself (`setLegacyMode`,
 * axe's own `axe.run`). The default mode of `@axe-core/playwright` runs each
 * frame's part in the page and then opens a blank page in the same browser
 * context to merge the parts, injecting axe's half-megabyte script a second
 * time: a renderer process started and the script compiled again for every
 * check, which on the console spec (thirteen checks) is about a third of
 * the browser's CPU. Both modes check the same rules on the same nodes; the
 * in-page run only leaves out frames of another origin, so a page with any
 * frame keeps the default mode.
 */
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

export async function analyzeAxe(page: Page): ReturnType<AxeBuilder["analyze"]> {
  const builder = new AxeBuilder({ page }).withTags(TAGS);
  if (page.frames().length === 1) builder.setLegacyMode();
  return builder.analyze();
}
