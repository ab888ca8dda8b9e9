import { NODE_TEXT_PX, type Point, type Rect } from './dag-layout';

/** The smallest size, in screen pixels, a node's text may render at. */
export const READABLE_TEXT_PX = 11;
/**
 * Node text is sized in flow units so that it renders at 11 px or more at any zoom: NODE_TEXT_PX when zoomed in,
 * larger when zoomed out (`--dag-zoom` on the pane holds the zoom, see textZoom); a node clips what no longer fits,
 * its least needed lines (the description) last in it.
 */
export const NODE_FONT_SIZE = `max(${NODE_TEXT_PX}px, calc(${READABLE_TEXT_PX}px / var(--dag-zoom, 1)))`;
/** Below this zoom a node would show little more than its id: the graph is panned instead of shrunk further. */
export const MIN_ZOOM = 0.4;
export const MAX_ZOOM = 1.5;
const PADDING = 24;

/** The zoom node text is sized for: the flow's zoom rounded down, so that the text errs on the large side. */
export function textZoom(zoom: number): number {
  return Math.floor(zoom * 100) / 100;
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

export interface Fit extends Viewport {
  /** Whether the whole graph is in view; when not, the zoom is MIN_ZOOM and the operator pans. */
  fits: boolean;
}

/**
 * The viewport that shows `bounds` in a `width`×`height` pane at a readable zoom: centred where it fits,
 * otherwise clamped to MIN_ZOOM with the first column (the roots) and the top in view. Null for a pane without size.
 */
export function fitViewport(bounds: Rect, width: number, height: number): Fit | null {
  if (width <= 2 * PADDING || height <= 2 * PADDING) return null;
  const fitZoom = Math.min((width - 2 * PADDING) / bounds.width, (height - 2 * PADDING) / bounds.height);
  const zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, fitZoom));
  const along = (start: number, size: number, room: number) => (size * zoom <= room - 2 * PADDING ? (room - size * zoom) / 2 : PADDING) - start * zoom;
  return { x: along(bounds.x, bounds.width, width), y: along(bounds.y, bounds.height, height), zoom, fits: fitZoom >= MIN_ZOOM };
}

/** Whether a node's box at `position` lies wholly inside a `width`×`height` pane under `viewport`. */
export function inView(position: Point, size: { width: number; height: number }, viewport: Viewport, width: number, height: number): boolean {
  const left = position.x * viewport.zoom + viewport.x;
  const top = position.y * viewport.zoom + viewport.y;
  return left >= 0 && top >= 0 && left + size.width * viewport.zoom <= width && top + size.height * viewport.zoom <= height;
}

/** Steps in reading order of the layout: column by column, top to bottom within a column. */
export function layoutOrder(positions: ReadonlyMap<string, Point>): string[] {
  return [...positions].sort(([, one], [, other]) => Math.round(one.x) - Math.round(other.x) || one.y - other.y).map(([id]) => id);
}
