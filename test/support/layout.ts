import type { Page } from 'playwright-core';

/** Whether the page scrolls sideways, and the controls (by tag and name) any part of which lies outside the window's width. */
export function overflowOf(page: Page): Promise<{ scrollsSideways: boolean; outside: string[] }> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const controls = [...document.querySelectorAll<HTMLElement>('button, input, select, textarea')].filter((control) => control.checkVisibility());
    const outside = controls.filter((control) => {
      const box = control.getBoundingClientRect();
      return box.left < 0 || box.right > width;
    });
    return {
      scrollsSideways: (document.scrollingElement?.scrollWidth ?? 0) > width,
      outside: outside.map((control) => `${control.tagName} ${control.getAttribute('aria-label') ?? control.id} ${control.textContent ?? ''}`),
    };
  });
}
