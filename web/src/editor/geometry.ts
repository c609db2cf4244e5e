// Where notes are and where a new one goes: pure functions on board
// coordinates (docs/web-client.md, "The editor layer"). A note's size is its
// optional `w` and `h` fields, clamped to the limits below; a note without
// them is the default size, so rows from clients that know no sizes draw as
// they always did.
import type { Note } from '../api/types';

/** DEFAULT_W and DEFAULT_H are the size of a note without `w`/`h`. */
export const DEFAULT_W = 220;
export const DEFAULT_H = 160;
/** MIN_W, MIN_H, MAX_W and MAX_H bound a note's size: the server refuses any other (docs/sync.md, "Note size"). */
export const MIN_W = 120;
export const MIN_H = 80;
export const MAX_W = 4000;
export const MAX_H = 4000;
/** GAP is the free space kept around a placed note. */
export const GAP = 24;

/** XY is a point in board coordinates. */
export interface XY {
  x: number;
  y: number;
}

/** Rect is a box in board coordinates: top-left corner and size. */
export interface Rect extends XY {
  w: number;
  h: number;
}

/** Size is a note's width and height. */
export interface Size {
  w: number;
  h: number;
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** clampSize rounds a size to whole pixels within the limits. */
export function clampSize(w: number, h: number): Size {
  return { w: Math.round(clamp(Number.isFinite(w) ? w : DEFAULT_W, MIN_W, MAX_W)), h: Math.round(clamp(Number.isFinite(h) ? h : DEFAULT_H, MIN_H, MAX_H)) };
}

/** sizeOf is the size a note is drawn at: its `w`/`h` when they are numbers (clamped), else the default. */
export function sizeOf(n: Note): Size {
  const w = typeof n.w === 'number' && Number.isFinite(n.w) ? n.w : DEFAULT_W;
  const h = typeof n.h === 'number' && Number.isFinite(n.h) ? n.h : DEFAULT_H;
  return clampSize(w, h);
}

/** rectOf is the box a note covers. */
export function rectOf(n: Note): Rect {
  const { w, h } = sizeOf(n);
  return { x: Number.isFinite(n.x) ? n.x : 0, y: Number.isFinite(n.y) ? n.y : 0, w, h };
}

/** overlaps says whether two boxes, each grown by gap/2 on every side, share any area. */
export function overlaps(a: Rect, b: Rect, gap = 0): boolean {
  return a.x < b.x + b.w + gap && b.x < a.x + a.w + gap && a.y < b.y + b.h + gap && b.y < a.y + a.h + gap;
}

/** MAX_RINGS bounds the search for a free spot (a board full for 80 rings around the centre takes the centre). */
const MAX_RINGS = 80;

/**
 * freeSpot is the top-left corner of a box of the given size near centre
 * that no other box covers, with GAP between them. It walks a grid of the
 * box's size plus the gap, ring by ring outwards from the cell centred on
 * centre; within a ring the cell nearest the centre wins, ties going top
 * first, then left. The same board and centre give the same spot.
 */
export function freeSpot(others: readonly Rect[], centre: XY, size: Size = { w: DEFAULT_W, h: DEFAULT_H }): XY {
  const ox = Math.round(centre.x - size.w / 2);
  const oy = Math.round(centre.y - size.h / 2);
  const sx = size.w + GAP;
  const sy = size.h + GAP;
  const free = (x: number, y: number) => {
    const r = { x, y, w: size.w, h: size.h };
    for (const o of others) if (overlaps(r, o, GAP)) return false;
    return true;
  };
  for (let ring = 0; ring <= MAX_RINGS; ring++) {
    const cells: { i: number; j: number; d: number }[] = [];
    for (let j = -ring; j <= ring; j++)
      for (let i = -ring; i <= ring; i++) {
        if (Math.max(Math.abs(i), Math.abs(j)) !== ring) continue;
        cells.push({ i, j, d: (i * sx) ** 2 + (j * sy) ** 2 });
      }
    cells.sort((a, b) => a.d - b.d || a.j - b.j || a.i - b.i);
    for (const c of cells) {
      const x = ox + c.i * sx;
      const y = oy + c.j * sy;
      if (free(x, y)) return { x, y };
    }
  }
  return { x: ox, y: oy };
}

/**
 * freeSpots places n boxes one after the other (each counts as taken for
 * the next), as a paste of several notes does.
 */
export function freeSpots(others: readonly Rect[], centre: XY, n: number, size: Size = { w: DEFAULT_W, h: DEFAULT_H }): XY[] {
  const taken = [...others];
  const out: XY[] = [];
  for (let k = 0; k < n; k++) {
    const p = freeSpot(taken, centre, size);
    out.push(p);
    taken.push({ ...p, ...size });
  }
  return out;
}

/** Direction is an arrow key's direction. */
export type Direction = 'left' | 'right' | 'up' | 'down';

/**
 * nearestInDirection is the note whose centre lies the nearest from `from`'s
 * centre in the direction dir (within 45° either side of it), counting the
 * sideways distance twice so that a note straight ahead wins over a nearer
 * one off to the side; null when there is none. Ties go to the lower id,
 * so the answer does not depend on the map's order.
 */
export function nearestInDirection(from: Rect, dir: Direction, notes: Iterable<Note>, skip?: string): Note | null {
  const byId = new Map<string, Note>();
  const items: { id: string; r: Rect }[] = [];
  for (const n of notes) {
    byId.set(n.id, n);
    items.push({ id: n.id, r: rectOf(n) });
  }
  const id = nearestBox(from, dir, items, skip);
  return id === null ? null : byId.get(id)!;
}

/** nearestBox is nearestInDirection over any boxes (notes and frames): the id of the nearest, or null. */
export function nearestBox(from: Rect, dir: Direction, boxes: Iterable<{ id: string; r: Rect }>, skip?: string): string | null {
  const cx = from.x + from.w / 2;
  const cy = from.y + from.h / 2;
  let best: string | null = null;
  let bestScore = Infinity;
  for (const { id, r } of boxes) {
    if (id === skip) continue;
    const dx = r.x + r.w / 2 - cx;
    const dy = r.y + r.h / 2 - cy;
    const [along, side] = dir === 'left' ? [-dx, dy] : dir === 'right' ? [dx, dy] : dir === 'up' ? [-dy, dx] : [dy, dx];
    if (along <= 0 || Math.abs(side) > along) continue;
    const score = along + 2 * Math.abs(side);
    if (score < bestScore || (score === bestScore && best !== null && id < best)) {
      best = id;
      bestScore = score;
    }
  }
  return best;
}

/** bounds is the box around all the rects, or null for none. */
export function bounds(rects: Iterable<Rect>): Rect | null {
  let minX = Infinity,
    minY = Infinity,
    maxX = -Infinity,
    maxY = -Infinity;
  for (const r of rects) {
    minX = Math.min(minX, r.x);
    minY = Math.min(minY, r.y);
    maxX = Math.max(maxX, r.x + r.w);
    maxY = Math.max(maxY, r.y + r.h);
  }
  return Number.isFinite(minX) ? { x: minX, y: minY, w: maxX - minX, h: maxY - minY } : null;
}

/**
 * placeMenu is where a menu of the given size goes so that it shows whole
 * in a viewport: at the point, flipped to the left of it or above it when
 * it would run past the right or the bottom edge, or, where neither fits,
 * shifted to stay at least margin inside; a menu larger than the viewport keeps its top-left
 * corner in view (it scrolls).
 */
export function placeMenu(at: XY, menu: Size, viewport: Size, margin = 8): XY {
  const axis = (p: number, len: number, room: number) => {
    if (p + len + margin <= room) return Math.max(margin, p);
    const flipped = Math.min(p, room - margin) - len;
    if (flipped >= margin) return flipped;
    return Math.max(margin, room - margin - len);
  };
  return { x: axis(at.x, menu.w, viewport.w), y: axis(at.y, menu.h, viewport.h) };
}
