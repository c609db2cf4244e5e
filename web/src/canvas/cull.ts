// What the canvas draws as DOM and what its <canvas> layer draws (plain
// TypeScript, no DOM; issue 26). xyflow gets only the notes, frames and
// connectors near the view (and the ones a person is acting on): its work
// per pointer move and per frame grows with what it is given, and every
// drawn note costs hit testing, layout, paint and raster while panning. The
// layer draws the rest from the sync client's rows, and far out (below
// LAYER_ZOOM, where notes are unreadable boxes) it draws everything.
import type { Connector, Frame, Note } from '../api/types';
import { frameRect } from '../editor/structure';
import { sizeOf, type Rect } from '../editor/geometry';

/**
 * LAYER_ZOOM: below it every row is drawn by the layer (detail.ts's "mid"
 * and "far": notes are boxes with titles, then boxes; nothing there is
 * read or selected as text). A row acted on stays DOM at any zoom.
 */
export const LAYER_ZOOM = 0.6;
/** FAR_ZOOM: below it a note is a plain box (detail.ts's "far"). */
export const FAR_ZOOM = 0.3;
/**
 * MARGIN is how far past the view (as a share of its width and height, on
 * each side) notes are handed to xyflow: a pan within it changes nothing
 * in React; leaving it takes a new window (one render, not one per frame).
 */
export const MARGIN = 0.5;
/** MAX_PINNED_SELECTED: a selection larger than this stays on the layer (drawn outlined) past the first ones, so a far box selection of thousands does not make them all DOM. */
export const MAX_PINNED_SELECTED = 400;

/** View is what the screen shows: its board rectangle and zoom. */
export interface View {
  rect: Rect;
  zoom: number;
}

/** Window is the board rectangle whose rows are DOM, and the zoom it was taken at. */
export interface Window {
  rect: Rect;
  zoom: number;
  /** layer: taken below LAYER_ZOOM (only pinned rows are DOM). */
  layer: boolean;
}

/** viewOf is the board rectangle a pan/zoom transform shows in a pane of w×h pixels. */
export function viewOf(transform: readonly [number, number, number], w: number, h: number): View {
  const [tx, ty, zoom] = transform;
  return { rect: { x: -tx / zoom, y: -ty / zoom, w: w / zoom, h: h / zoom }, zoom };
}

/** windowFor is the window taken for a view: the view grown by MARGIN on each side. */
export function windowFor(v: View): Window {
  const { x, y, w, h } = v.rect;
  return { rect: { x: x - w * MARGIN, y: y - h * MARGIN, w: w * (1 + 2 * MARGIN), h: h * (1 + 2 * MARGIN) }, zoom: v.zoom, layer: v.zoom < LAYER_ZOOM };
}

/**
 * stale says whether a view has left its window: panned out of it, crossed
 * LAYER_ZOOM, or zoomed in past half its zoom (a window taken further out
 * holds far more notes than the view needs).
 */
export function stale(win: Window, v: View): boolean {
  if (win.layer !== v.zoom < LAYER_ZOOM) return true;
  if (win.layer) return false;
  if (v.zoom > win.zoom * 2) return true;
  return !contains(win.rect, v.rect);
}

function contains(outer: Rect, r: Rect): boolean {
  return r.x >= outer.x && r.y >= outer.y && r.x + r.w <= outer.x + outer.w && r.y + r.h <= outer.y + outer.h;
}

/** overlaps says whether two rectangles share some area (or touch). */
export function overlaps(a: Rect, b: Rect): boolean {
  return a.x <= b.x + b.w && b.x <= a.x + a.w && a.y <= b.y + b.h && b.y <= a.y + a.h;
}

/** noteRect is where a note is drawn: its place (or where it is being dragged) at its size (or the one it is being resized to). */
export function noteRect(n: Note, moving?: ReadonlyMap<string, { x: number; y: number }>, sizing?: ReadonlyMap<string, { w: number; h: number }>): Rect {
  const p = moving?.get(n.id);
  const s = sizing?.get(n.id) ?? sizeOf(n);
  return { x: p ? p.x : Number.isFinite(n.x) ? n.x : 0, y: p ? p.y : Number.isFinite(n.y) ? n.y : 0, w: s.w, h: s.h };
}

/** frameBox is where a frame is drawn (its place, or where it is being dragged). */
export function frameBox(f: Frame, moving?: ReadonlyMap<string, { x: number; y: number }>): Rect {
  const r = frameRect(f);
  const p = moving?.get(f.id);
  return p ? { ...r, x: p.x, y: p.y } : r;
}

/** Rows are the board's rows as the canvas shows them. */
export interface Rows {
  notes: Iterable<Note>;
  frames: Iterable<Frame>;
  connectors: Iterable<Connector>;
}

/** Acting is what a person is acting on: these rows are DOM wherever they are (editing, keyboard focus, drags need the element). */
export interface Acting {
  selected: ReadonlySet<string>;
  moving: ReadonlyMap<string, { x: number; y: number }>;
  sizing: ReadonlyMap<string, { w: number; h: number }>;
  /** others: the edited, focused, highlighted, named or menu's row (null or undefined when none). */
  others: readonly (string | null | undefined)[];
}

/** pinnedOf is the set of rows a person is acting on (the first MAX_PINNED_SELECTED of a selection). */
export function pinnedOf(a: Acting): Set<string> {
  const out = new Set<string>();
  let n = 0;
  for (const id of a.selected) {
    if (n++ >= MAX_PINNED_SELECTED) break;
    out.add(id);
  }
  for (const id of a.moving.keys()) out.add(id);
  for (const id of a.sizing.keys()) out.add(id);
  for (const id of a.others) if (id) out.add(id);
  return out;
}

/**
 * windowIds is the set of notes and frames in a window (none in a layer
 * window: there the layer draws them all).
 */
export function windowIds(rows: Rows, win: Window): Set<string> {
  const out = new Set<string>();
  if (win.layer) return out;
  for (const n of rows.notes) if (overlaps(noteRect(n), win.rect)) out.add(n.id);
  for (const f of rows.frames) if (overlaps(frameBox(f), win.rect)) out.add(f.id);
  return out;
}

/**
 * domIds is the set of notes and frames handed to xyflow: the window's,
 * the pinned ones, and the other end of each connector from one of them
 * (so xyflow can draw that connector; it still draws only what is in view).
 */
export function domIds(inWindow: ReadonlySet<string>, pinned: ReadonlySet<string>, connectors: Iterable<Connector>): Set<string> {
  const out = new Set<string>(inWindow);
  for (const id of pinned) out.add(id);
  const ends: string[] = [];
  for (const c of connectors) {
    const a = out.has(c.from);
    if (a !== out.has(c.to)) ends.push(a ? c.to : c.from);
  }
  for (const id of ends) out.add(id);
  return out;
}

/** sameSet says whether two sets hold the same ids (a pinned set kept when unchanged keeps what depends on it). */
export function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const id of a) if (!b.has(id)) return false;
  return true;
}

/**
 * inBox is what a selection box (board coordinates) takes from the rows:
 * the notes and frames wholly inside it (xyflow's default, SelectionMode
 * Full) and the connectors joined to one of them, as xyflow selects them.
 */
export function inBox(rows: Rows, box: Rect): string[] {
  const inside = (r: Rect) => r.x >= box.x && r.y >= box.y && r.x + r.w <= box.x + box.w && r.y + r.h <= box.y + box.h;
  const out = new Set<string>();
  for (const n of rows.notes) if (inside(noteRect(n))) out.add(n.id);
  for (const f of rows.frames) if (inside(frameBox(f))) out.add(f.id);
  const conns: string[] = [];
  for (const c of rows.connectors) if (out.has(c.from) || out.has(c.to)) conns.push(c.id);
  return [...out, ...conns];
}

/**
 * hitRow is the note (else the frame) the layer draws at a board point, the
 * topmost one (drawn last); DOM rows are xyflow's to hit, so they are skipped.
 */
export function hitRow(rows: Rows, at: { x: number; y: number }, dom: ReadonlySet<string>): string | null {
  const at_ = (r: Rect) => at.x >= r.x && at.y >= r.y && at.x <= r.x + r.w && at.y <= r.y + r.h;
  let hit: string | null = null;
  for (const n of rows.notes) if (!dom.has(n.id) && at_(noteRect(n))) hit = n.id;
  if (hit) return hit;
  for (const f of rows.frames) if (!dom.has(f.id) && at_(frameBox(f))) hit = f.id;
  return hit;
}

/** domEdge says whether xyflow draws a connector: both of its ends are DOM (else the layer draws it). */
export function domEdge(c: Connector, dom: ReadonlySet<string>): boolean {
  return dom.has(c.from) && dom.has(c.to);
}

/** Level is how much the layer draws of a note: a box (as far DOM notes are drawn, detail.ts), or a box with its title. */
export type Level = 'box' | 'title';

/** TITLE_FONT is the board-px size of a title the layer draws (detail.ts's "mid" titles are 1.6rem). */
export const TITLE_FONT = 25.6;

/** levelOf is what the layer draws of a note at a zoom: what a DOM note shows there. */
export function levelOf(zoom: number): Level {
  return zoom < FAR_ZOOM ? 'box' : 'title';
}

/**
 * sameRows says whether two maps hold the very same row objects: the sync
 * client makes new maps on every change of its snapshot (a save, the
 * connection, a pending count), and the canvas keeps what it built from
 * the old ones when the rows themselves did not change.
 */
export function sameRows<V>(a: ReadonlyMap<string, V>, b: ReadonlyMap<string, V>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [id, v] of a) if (b.get(id) !== v) return false;
  return true;
}
