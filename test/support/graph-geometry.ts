import type { Page } from 'playwright-core';

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface GraphGeometry {
  zoom: number;
  pane: Box;
  minimap: Box | null;
  controls: Box;
  nodes: { id: string; box: Box; smallestTextPx: number }[];
}

/** Where the run graph is drawn: the flow's zoom, the pane, the minimap strip, the controls, each node's box and its smallest rendered text (font size × zoom). */
export function graphGeometry(page: Page): Promise<GraphGeometry> {
  return page.evaluate(() => {
    const boxOf = (element: Element) => {
      const { left, top, right, bottom } = element.getBoundingClientRect();
      return { left, top, right, bottom };
    };
    const viewport = document.querySelector('.react-flow__viewport') as HTMLElement;
    const zoom = new DOMMatrix(getComputedStyle(viewport).transform).a;
    const minimap = document.querySelector('.dag-toolbar .react-flow__minimap');
    const nodes = [...document.querySelectorAll('[data-step-id]')].map((node) => {
      const texts = [node, ...node.querySelectorAll('*')].filter((element) => [...element.childNodes].some((child) => child.nodeType === Node.TEXT_NODE && child.textContent?.trim()));
      return {
        id: node.getAttribute('data-step-id') ?? '',
        box: boxOf(node),
        smallestTextPx: Math.min(...texts.map((element) => Number.parseFloat(getComputedStyle(element).fontSize) * zoom)),
      };
    });
    return { zoom, pane: boxOf(document.querySelector('.dag-pane') as Element), minimap: minimap && boxOf(minimap), controls: boxOf(document.querySelector('.react-flow__controls') as Element), nodes };
  });
}

export const overlaps = (one: Box, other: Box): boolean => one.left < other.right && other.left < one.right && one.top < other.bottom && other.top < one.bottom;
export const inside = (box: Box, room: Box): boolean => box.left >= room.left && box.right <= room.right && box.top >= room.top && box.bottom <= room.bottom;
/** The part of a box the pane shows. */
export const visiblePart = (box: Box, pane: Box): Box => ({ left: Math.max(box.left, pane.left), top: Math.max(box.top, pane.top), right: Math.min(box.right, pane.right), bottom: Math.min(box.bottom, pane.bottom) });
