import { useLayoutEffect } from 'react';

/** Where focus goes when the element that had it is gone: the selected run's heading, else the screen's. */
function fallbackTarget(): HTMLElement | null {
  const heading = document.querySelector<HTMLElement>('.run-header h2') ?? document.querySelector<HTMLElement>('h1');
  if (heading && !heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
  return heading;
}

function restoreFocus(before: Element | null): void {
  if (before instanceof HTMLElement && before !== document.body && before.isConnected) before.focus();
  if (document.activeElement === before && before !== document.body) return;
  fallbackTarget()?.focus();
}

/**
 * While `open`, remembers what had focus when it became true (a layout effect: before the dialog
 * moves focus into itself) and gives focus back to it when it turns false, never leaving it on <body>.
 */
export function useFocusReturn(open: boolean): void {
  useLayoutEffect(() => {
    if (!open) return;
    const before = document.activeElement;
    return () => restoreFocus(before);
  }, [open]);
}
