// A page reviewed as people see it, for every browser test that shows one: axe (0
// violations) at a phone's, a tablet's and a desktop's width in both colour schemes, with a
// full-page screenshot of each kept in the test's output (test-results/browser/<test>/).
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, type TestInfo } from "@playwright/test";

const WIDTHS = [390, 800, 1280] as const;
export const SCHEMES = ["light", "dark"] as const;
export type Scheme = (typeof SCHEMES)[number];

/**
 * The page as it is at each width in each scheme: axe finds nothing (every width and scheme
 * is checked and reported before the test fails), and each screenshot is attached to the
 * test as `<state>-<width>-<scheme>.png`. `settle` runs after each change of width or
 * scheme, before axe: a page that follows the change or renders lazily finishes there.
 * Responses what axe found in each run (rule ids and targets).
 */
export async function review(
  page: Page,
  testInfo: TestInfo,
  state: string,
  settle?: (scheme: Scheme) => Promise<void>,
): Promise<{ state: string; violations: string[] }[]> {
  const runs: { state: string; violations: string[] }[] = [];
  const viewport = page.viewportSize();
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await settle?.(scheme);
      const results = await new AxeBuilder({ page }).analyze();
      const violations = results.violations.map(
        (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
      );
      runs.push({ state: `${state} ${width} ${scheme}`, violations });
      expect.soft(violations, `${state} at ${width} px, ${scheme}`).toEqual([]);
      const path = testInfo.outputPath(`${state}-${width}-${scheme}.png`);
      await page.screenshot({ path, fullPage: true });
      await testInfo.attach(`${state} at ${width} px, ${scheme}`, {
        path,
        contentType: "image/png",
      });
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  if (viewport) await page.setViewportSize(viewport);
  return runs;
}
