import { NODE_TEXT_PX, type Rect } from './dag-layout';

/** The smallest size, in screen pixels, a node's text may render at. */
export const READABLE_TEXT_PX = 11;
/** Below this zoom a node's text would render under 11 px: the graph is panned instead of shrunk further. */
export const MIN_ZOOM = READABLE_TEXT_PX / NODE_TEXT_PX;
export const MAX_ZOOM = 1.5;
const PADDING = 24;

export interface Fit {
  x: number;
  y: number;
  zoom: number;
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

