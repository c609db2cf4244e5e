// Connectors and frames on the board (issue 24; docs/web-client.md,
// "Connectors and frames"): pure functions on rows and board coordinates,
// used by the Editor and the canvas.
//
// Membership is geometric: a frame holds the notes whose centre is inside
// it. The wire has no parent field, and a stored one would need a rule for
// every client that moves a note without knowing frames; geometry needs
// none, and what a person sees inside a frame is what moves with it.
import type { Connector, Frame, Note } from '../api/types';
import { rectOf, type Rect } from './geometry';

/** MIN_FRAME and MAX_FRAME bound a frame's w and h (the server refuses others: board.MinFrameSize, MaxFrameSize). */
export const MIN_FRAME = 40;
export const MAX_FRAME = 100_000;
/** FRAME_W and FRAME_H are the size of a frame made with nothing selected. */
export const FRAME_W = 640;
export const FRAME_H = 400;
/** FRAME_PAD is the space kept around the notes a new frame is made around; FRAME_TITLE_H is the room its title takes above them. */
export const FRAME_PAD = 32;
export const FRAME_TITLE_H = 36;
/** MAX_LABEL and MAX_FRAME_TITLE are the server's limits, in characters (board.MaxLabelLen, MaxFrameTitleLen). */
export const MAX_LABEL = 200;
export const MAX_FRAME_TITLE = 200;

/** FRAME_COLORS are a frame's colours: a tint for the area and a stronger border and title. */
export const FRAME_COLORS: Record<string, { fill: string; line: string }> = {
  gray: { fill: 'rgba(107, 114, 128, 0.08)', line: '#6b7280' },
  blue: { fill: 'rgba(37, 99, 235, 0.08)', line: '#2563eb' },
  green: { fill: 'rgba(22, 163, 74, 0.08)', line: '#15803d' },
  purple: { fill: 'rgba(124, 58, 237, 0.08)', line: '#7c3aed' },
  orange: { fill: 'rgba(234, 88, 12, 0.08)', line: '#c2410c' },
  pink: { fill: 'rgba(219, 39, 119, 0.08)', line: '#be185d' },
};

/** CONNECTOR_COLORS are a connector's colours (stroke); gray is the default. */
export const CONNECTOR_COLORS: Record<string, string> = {
  gray: '#4b5563',
  blue: '#2563eb',
  green: '#15803d',
  purple: '#7c3aed',
  orange: '#c2410c',
  red: '#dc2626',
};

/** frameColor is a frame's colours: a known name, else gray's. */
export const frameColor = (c: string) => FRAME_COLORS[c] ?? FRAME_COLORS.gray;
/** connectorColor is a connector's stroke: a known name, else gray's. */
export const connectorColor = (c: string) => CONNECTOR_COLORS[c] ?? CONNECTOR_COLORS.gray;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** clampFrame rounds a frame's box to whole pixels, its size within the limits. */
export function clampFrame(r: Rect): Rect {
  const size = (v: number, d: number) => Math.round(clamp(Number.isFinite(v) ? v : d, MIN_FRAME, MAX_FRAME));
  return { x: Math.round(Number.isFinite(r.x) ? r.x : 0), y: Math.round(Number.isFinite(r.y) ? r.y : 0), w: size(r.w, FRAME_W), h: size(r.h, FRAME_H) };
}

/** frameRect is the box a frame covers (its size clamped as drawn). */
export function frameRect(f: Frame): Rect {
  return clampFrame(f);
}

/** FRAME_HEAD_W is the width of a frame's title at its top-left (a note's default width). */
const FRAME_HEAD_W = 220;

/**
 * frameHead is the box of a frame's title at the top-left of its title
 * bar: where the arrow keys' roving focus finds the frame (its centre
 * would often be behind the notes inside it, and a wide bar's middle far
 * to the side of them), and what a person reads as the frame's name.
 */
export function frameHead(f: Frame): Rect {
  const r = frameRect(f);
  return { x: r.x, y: r.y, w: Math.min(r.w, FRAME_HEAD_W), h: Math.min(r.h, FRAME_TITLE_H) };
}

/** holds says whether a box's centre is inside the frame's box. */
export function holds(frame: Rect, r: Rect): boolean {
  const cx = r.x + r.w / 2;
  const cy = r.y + r.h / 2;
  return cx >= frame.x && cx <= frame.x + frame.w && cy >= frame.y && cy <= frame.y + frame.h;
}

/** members lists the notes a frame holds: those whose centre is inside it. */
export function members(frame: Frame, notes: Iterable<Note>): Note[] {
  const fr = frameRect(frame);
  const out: Note[] = [];
  for (const n of notes) if (holds(fr, rectOf(n))) out.push(n);
  return out;
}

/** within says whether box r lies wholly inside box outer. */
export function within(outer: Rect, r: Rect): boolean {
  return r.x >= outer.x && r.y >= outer.y && r.x + r.w <= outer.x + outer.w && r.y + r.h <= outer.y + outer.h;
}

/**
 * innerFrames lists the frames a frame holds: those lying wholly inside it
 * and smaller than it (two frames of one box hold neither the other). A
 * frame inside one of those is inside this one too, so the list is every
 * level of nesting at once.
 */
export function innerFrames(frame: Frame, frames: Iterable<Frame>): Frame[] {
  const fr = frameRect(frame);
  const out: Frame[] = [];
  for (const f of frames) {
    if (f.id === frame.id) continue;
    const r = frameRect(f);
    if (r.w * r.h < fr.w * fr.h && within(fr, r)) out.push(f);
  }
  return out;
}

/**
 * drawOrder lists frames largest first, the order the canvas stacks them
 * in (each later one on top): a frame inside another is drawn over it, so
 * its title can be grabbed and its area clicked.
 */
export function drawOrder(frames: Iterable<Frame>): Frame[] {
  const area = (f: Frame) => {
    const r = frameRect(f);
    return r.w * r.h;
  };
  return [...frames].sort((a, b) => area(b) - area(a));
}

/** frameAround is the box of a new frame around some notes: FRAME_PAD around them, and room for the title above. */
export function frameAround(rects: readonly Rect[]): Rect {
  const x0 = Math.min(...rects.map((r) => r.x));
  const y0 = Math.min(...rects.map((r) => r.y));
  const x1 = Math.max(...rects.map((r) => r.x + r.w));
  const y1 = Math.max(...rects.map((r) => r.y + r.h));
  return clampFrame({ x: x0 - FRAME_PAD, y: y0 - FRAME_PAD - FRAME_TITLE_H, w: x1 - x0 + 2 * FRAME_PAD, h: y1 - y0 + 2 * FRAME_PAD + FRAME_TITLE_H });
}

/** nextFrameTitle is "Frame N", N one more than the largest such title on the board. */
export function nextFrameTitle(frames: Iterable<Frame>): string {
  let n = 0;
  for (const f of frames) {
    const m = /^Frame (\d+)$/.exec(f.title);
    if (m) n = Math.max(n, Number(m[1]));
  }
  return `Frame ${n + 1}`;
}

/** touching lists the connectors with an end in ids (they go when those rows go). */
export function touching(ids: ReadonlySet<string>, connectors: Iterable<Connector>): Connector[] {
  const out: Connector[] = [];
  for (const c of connectors) if (ids.has(c.from) || ids.has(c.to)) out.push(c);
  return out;
}

/** drawable says whether both ends of a connector are on the board (a connector whose end is gone is not drawn). */
export function drawable(c: Connector, notes: ReadonlyMap<string, unknown>, frames: ReadonlyMap<string, unknown>): boolean {
  return (notes.has(c.from) || frames.has(c.from)) && (notes.has(c.to) || frames.has(c.to)) && c.from !== c.to;
}

/** isDashed and isLine read a connector's style ("" and unknown values: a solid arrow). */
export const isDashed = (c: Connector) => c.dash === 'dashed';
export const isLine = (c: Connector) => c.style === 'line';

/** describeConnector is how a connector is named to a person: "Plan → Launch", with its label. */
export function describeConnector(c: Connector, nameOf: (id: string) => string): string {
  const arrow = isLine(c) ? '—' : '→';
  return `${nameOf(c.from)} ${arrow} ${nameOf(c.to)}${c.label ? ` (“${c.label}”)` : ''}`;
}

/** OutlineEntry is one frame of the outline and the notes it holds; frame null: the notes in no frame. */
export interface OutlineEntry {
  frame: Frame | null;
  notes: Note[];
}

/**
 * outline is the board's outline: its frames from top to bottom, left to
 * right, each with the notes it holds (a note in two frames is listed in
 * the smaller, the one drawn on top), then the notes in no frame.
 */
export function outline(frames: Iterable<Frame>, notes: Iterable<Note>): OutlineEntry[] {
  const fs = [...frames].sort((a, b) => a.y - b.y || a.x - b.x);
  const entries: OutlineEntry[] = fs.map((frame) => ({ frame, notes: [] }));
  const loose: Note[] = [];
  const bySize = entries.map((e, i) => ({ i, r: frameRect(e.frame!) })).sort((a, b) => a.r.w * a.r.h - b.r.w * b.r.h);
  for (const n of notes) {
    const r = rectOf(n);
    const hit = bySize.find((f) => holds(f.r, r));
    (hit ? entries[hit.i].notes : loose).push(n);
  }
  for (const e of entries) e.notes.sort((a, b) => a.y - b.y || a.x - b.x);
  loose.sort((a, b) => a.y - b.y || a.x - b.x);
  return [...entries, { frame: null, notes: loose }];
}
