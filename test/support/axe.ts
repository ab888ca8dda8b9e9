import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core's contrast, label and button-name rules on the page as it is: the violations, by rule and count. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') });
  return page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(options: object): Promise<{ violations: { id: string; nodes: unknown[] }[] }> } }).axe.run({ runOnly: ['color-contrast', 'label', 'button-name'] });
    return result.violations.map((violation) => `${violation.id} (${violation.nodes.length})`);
  });
}
