// Zoom rules of the board screen's controls (ZoomControls.tsx, and the
// canvas's "0" key).

/** PHONE_MAX_WIDTH is the widest window (CSS px) laid out as a phone or small tablet. */
export const PHONE_MAX_WIDTH = 768;

/** READABLE_ZOOM is the least zoom "Zoom to fit" goes to on a phone: below it notes cannot be read. */
export const READABLE_ZOOM = 0.5;

/**
 * fitOptions are xyflow fitView options for a window width. On a phone a
 * fit never goes below READABLE_ZOOM: it keeps 50 % and centres the notes,
 * and the person pans to the rest (xyflow clamps to minZoom and centres
 * the bounds).
 */
export function fitOptions(windowWidth: number): { padding: number; minZoom?: number } {
  return windowWidth <= PHONE_MAX_WIDTH ? { padding: 0.1, minZoom: READABLE_ZOOM } : { padding: 0.1 };
}

/** zoomPercent is the zoom as people read it: a whole percentage. */
export function zoomPercent(zoom: number): string {
  return `${Math.round(zoom * 100)} %`;
}
