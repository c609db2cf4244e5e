// What the <canvas> layer draws (plain TypeScript; CanvasLayer.tsx paints
// it). A scene is built when the rows or the DOM set change, not per frame:
// a frame only skips what is out of view and paints the rest, in a few
// batched paths (one per note colour, one per connector style).
import type { Connector, Frame, Note } from '../api/types';
import type { Rect } from '../editor/geometry';
import { connectorColor, drawOrder, frameColor, isDashed, isLine } from '../editor/structure';
import { background } from './notes';
import { border } from './ConnectorEdge';
import { frameBox, noteRect, overlaps, type Acting } from './cull';

/** NOTE_LINE is a layer note's outline (detail.ts's far notes: app.css `.detail-far .note`). */
export const NOTE_LINE = 'rgba(0, 0, 0, 0.15)';

/** SceneFrame is a frame as the layer draws it. */
export interface SceneFrame {
  rect: Rect;
  fill: string;
  line: string;
  title: string;
}

/** SceneConnector is a connector's line, border to border, and its arrowhead when it has one. */
export interface SceneConnector {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** head: the arrowhead's two back corners (the tip is x2, y2). */
  head: [number, number, number, number] | null;
}

/** Scene is everything the layer draws, in board coordinates. */
export interface Scene {
  frames: SceneFrame[];
  /** connectors by style key (`colour dashed`): one stroked path each. */
  connectors: Map<string, { color: string; dashed: boolean; lines: SceneConnector[] }>;
  /** notes by background colour: x, y, w, h of each, flat. */
  notes: Map<string, number[]>;
  /** titles of the notes drawn (painted only at the title level). */
  titles: { x: number; y: number; w: number; text: string }[];
  /** selected: the selected notes and frames the layer draws (outlined). */
  selected: Rect[];
  /** count is how many rows the scene holds. */
  count: number;
}

/** HEAD is an arrowhead's length and half width (board px), as ConnectorEdge's 18 px marker at stroke 2. */
const HEAD = { len: 14, half: 6 };

/**
 * sceneOf is what the layer draws: every note, frame and connector that is
 * not DOM (dom: the notes and frames handed to xyflow; a connector is DOM
 * when both of its ends are), where it is being dragged or resized to.
 */
export function sceneOf(rows: { notes: Iterable<Note>; frames: Iterable<Frame>; connectors: Iterable<Connector> }, dom: ReadonlySet<string>, acting: Pick<Acting, 'selected' | 'moving' | 'sizing'>): Scene {
  const { moving, sizing, selected } = acting;
  const s: Scene = { frames: [], connectors: new Map(), notes: new Map(), titles: [], selected: [], count: 0 };
  const boxes = new Map<string, Rect>();
  // Largest first, as the DOM stacks them: an inner frame is drawn over its container.
  for (const f of drawOrder(rows.frames)) {
    const r = frameBox(f, moving);
    boxes.set(f.id, r);
    if (dom.has(f.id)) continue;
    const c = frameColor(f.color);
    s.frames.push({ rect: r, fill: c.fill, line: c.line, title: f.title || 'Untitled frame' });
    if (selected.has(f.id)) s.selected.push(r);
    s.count++;
  }
  for (const n of rows.notes) {
    const r = noteRect(n, moving, sizing);
    boxes.set(n.id, r);
    if (dom.has(n.id)) continue;
    const bg = background(n.color);
    let flat = s.notes.get(bg);
    if (!flat) s.notes.set(bg, (flat = []));
    flat.push(r.x, r.y, r.w, r.h);
    if (n.title) s.titles.push({ x: r.x, y: r.y, w: r.w, text: n.title });
    if (selected.has(n.id)) s.selected.push(r);
    s.count++;
  }
  for (const c of rows.connectors) {
    if (dom.has(c.from) && dom.has(c.to)) continue;
    const a = boxes.get(c.from);
    const b = boxes.get(c.to);
    if (!a || !b) continue;
    const p = border(a, b.x + b.w / 2, b.y + b.h / 2);
    const q = border(b, a.x + a.w / 2, a.y + a.h / 2);
    let head: SceneConnector['head'] = null;
    const len = Math.hypot(q.x - p.x, q.y - p.y);
    if (!isLine(c) && len > 0) {
      const ux = (q.x - p.x) / len;
      const uy = (q.y - p.y) / len;
      const bx = q.x - ux * HEAD.len;
      const by = q.y - uy * HEAD.len;
      head = [bx - uy * HEAD.half, by + ux * HEAD.half, bx + uy * HEAD.half, by - ux * HEAD.half];
    }
    const color = connectorColor(c.color);
    const dashed = isDashed(c);
    const key = `${color} ${dashed}`;
    let group = s.connectors.get(key);
    if (!group) s.connectors.set(key, (group = { color, dashed, lines: [] }));
    group.lines.push({ x1: p.x, y1: p.y, x2: q.x, y2: q.y, head });
    s.count++;
  }
  return s;
}

/** lineInView says whether a connector's box meets the view. */
export function lineInView(l: SceneConnector, view: Rect): boolean {
  return overlaps({ x: Math.min(l.x1, l.x2), y: Math.min(l.y1, l.y2), w: Math.abs(l.x2 - l.x1), h: Math.abs(l.y2 - l.y1) }, view);
}

/** DOT_GAP is the board's dot grid (board px), as xyflow's Background was given; a dot is 1 board px wide. */
export const DOT_GAP = 24;
/** MIN_DOT is the smallest dot worth drawing (screen px): smaller ones were a faint haze that cost the whole screen's raster on every frame of a pan. */
export const MIN_DOT = 0.5;

/** dotsOf is the dot grid at a zoom, in screen px (null: too small to draw). */
export function dotsOf(zoom: number): { gap: number; d: number } | null {
  return zoom < MIN_DOT ? null : { gap: DOT_GAP * zoom, d: zoom };
}
