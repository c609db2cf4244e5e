// What an export draws (plain TypeScript, no DOM): the part of the board
// (all of it, the selection, or one frame), its box, and the board as an
// SVG with the notes' Markdown rendered as on screen (docs/web-client.md,
// "Export").
import type { Connector, Frame, Note } from '../api/types';
import { background, renderMarkdown } from '../canvas/notes';
import { bounds, rectOf, type Rect } from '../editor/geometry';
import { connectorColor, frameColor, frameRect, holds, isDashed, isLine } from '../editor/structure';

/** Picture is the rows an export draws. */
export interface Picture {
  notes: readonly Note[];
  frames: readonly Frame[];
  connectors: readonly Connector[];
}

/** Scope is what is exported: the whole board, the selected notes and frames, or one frame and what it holds. */
export type Scope = { kind: 'board' } | { kind: 'selection'; ids: ReadonlySet<string> } | { kind: 'frame'; id: string };

/** Scheme is the export's colours: the board's light or dark palette (notes are the same paper in both). */
export type Scheme = 'light' | 'dark';

/** PALETTES are the export's colours per scheme, app.css's canvas and text values. */
export const PALETTES: Record<Scheme, { bg: string; fg: string; label: string }> = {
  light: { bg: '#f3f4f6', fg: '#1f2328', label: '#ffffff' },
  dark: { bg: '#0f141a', fg: '#e6edf3', label: '#161b22' },
};

/** PADDING is the margin (board px) around what is exported. */
export const PADDING = 32;

/**
 * pick gives the rows a scope exports and the box around them (PADDING
 * added), or null when there is nothing to draw. A connector is drawn when
 * both its ends are; a frame's scope is the frame, the notes it holds (their
 * centre inside it) and the frames inside it.
 */
export function pick(p: Picture, scope: Scope): { picture: Picture; region: Rect } | null {
  let notes: readonly Note[] = p.notes;
  let frames: readonly Frame[] = p.frames;
  if (scope.kind === 'selection') {
    notes = p.notes.filter((n) => scope.ids.has(n.id));
    frames = p.frames.filter((f) => scope.ids.has(f.id));
  } else if (scope.kind === 'frame') {
    const frame = p.frames.find((f) => f.id === scope.id);
    if (!frame) return null;
    const box = frameRect(frame);
    notes = p.notes.filter((n) => holds(box, rectOf(n)));
    frames = p.frames.filter((f) => f === frame || holds(box, frameRect(f)));
  }
  const drawn = new Set([...notes.map((n) => n.id), ...frames.map((f) => f.id)]);
  const connectors = p.connectors.filter((c) => drawn.has(c.from) && drawn.has(c.to));
  const b = bounds([...notes.map(rectOf), ...frames.map(frameRect)]);
  if (!b) return null;
  return { picture: { notes, frames, connectors }, region: { x: b.x - PADDING, y: b.y - PADDING, w: b.w + 2 * PADDING, h: b.h + 2 * PADDING } };
}

/** escapeXml escapes text for an XML text node or attribute. */
export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/**
 * edgeEnds is where a straight connector between two boxes starts and
 * ends: on the line between their centres, where it leaves each box.
 */
export function edgeEnds(a: Rect, b: Rect): { x1: number; y1: number; x2: number; y2: number } {
  const ca = { x: a.x + a.w / 2, y: a.y + a.h / 2 };
  const cb = { x: b.x + b.w / 2, y: b.y + b.h / 2 };
  const out = (r: Rect, from: { x: number; y: number }, dx: number, dy: number) => {
    // The fraction of (dx, dy) at which the ray from the centre crosses the box's border.
    const t = Math.min(dx ? r.w / 2 / Math.abs(dx) : Infinity, dy ? r.h / 2 / Math.abs(dy) : Infinity, 1);
    return { x: from.x + dx * t, y: from.y + dy * t };
  };
  const dx = cb.x - ca.x;
  const dy = cb.y - ca.y;
  const s = out(a, ca, dx, dy);
  const e = out(b, cb, -dx, -dy);
  return { x1: s.x, y1: s.y, x2: e.x, y2: e.y };
}

// The notes' look, as app.css draws them on the canvas ("near" detail), for an SVG that stands alone.
const NOTE_CSS = `
.note{box-sizing:border-box;width:100%;height:100%;overflow:hidden;display:flex;flex-direction:column;border-radius:4px;padding:8px 10px;font:13.6px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1f2328;box-shadow:0 1px 3px rgba(0,0,0,.25)}
.note-head{font-size:11.2px;text-transform:uppercase;letter-spacing:.03em;color:#3d444d}
.note-title{font-size:15.2px;margin:3px 0;overflow-wrap:anywhere}
.note-body{overflow:hidden;flex:1;overflow-wrap:anywhere}
.md>:first-child{margin-top:0}.md p{margin:0 0 6px}.md a{color:#0a3d91}.md ul,.md ol{margin:0 0 6px;padding-left:20px}
.md pre,.md code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}.md pre{white-space:pre-wrap}
.md h1,.md h2,.md h3{font-size:14.4px;margin:4px 0}.md img{max-width:100%}
`;

/** Xhtml turns an HTML fragment into well-formed XHTML (an SVG is XML): the browser's XMLSerializer. */
export type Xhtml = (html: string) => string;

/**
 * svgOf draws a picture's region as an SVG document of the region's size in
 * board pixels: the background, frames (tinted boxes with their titles),
 * connectors (lines or arrows, dashed or not, labelled), then the notes
 * (type, title, rendered Markdown) in foreignObjects.
 */
export function svgOf(p: Picture, region: Rect, scheme: Scheme, xhtml: Xhtml): string {
  const pal = PALETTES[scheme];
  const w = Math.ceil(region.w);
  const h = Math.ceil(region.h);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="${region.x} ${region.y} ${w} ${h}">`);
  out.push(`<style>${NOTE_CSS}</style>`);
  out.push(`<rect x="${region.x}" y="${region.y}" width="${w}" height="${h}" fill="${pal.bg}"/>`);
  for (const f of p.frames) {
    const r = frameRect(f);
    const c = frameColor(f.color);
    out.push(`<g class="frame"><rect x="${r.x}" y="${r.y}" width="${r.w}" height="${r.h}" rx="10" fill="${c.fill}" stroke="${c.line}" stroke-width="2"/>`);
    out.push(`<text x="${r.x + 10}" y="${r.y + 24}" fill="${c.line}" font-family="system-ui,sans-serif" font-size="16" font-weight="600">${escapeXml(f.title)}</text></g>`);
  }
  out.push(...connectorsSvg(p, pal.label));
  for (const n of p.notes) {
    const r = rectOf(n);
    const title = n.title ? `<h3 class="note-title">${escapeXml(n.title)}</h3>` : '';
    const body = n.content ? `<div class="note-body md">${xhtml(renderMarkdown(n.content))}</div>` : '';
    out.push(
      `<foreignObject x="${r.x}" y="${r.y}" width="${r.w}" height="${r.h}"><div xmlns="http://www.w3.org/1999/xhtml" class="note" style="background:${escapeXml(background(n.color))}" data-note-id="${escapeXml(n.id)}"><div class="note-head">${escapeXml(n.type ?? '')}</div>${title}${body}</div></foreignObject>`,
    );
  }
  out.push('</svg>');
  return out.join('\n');
}

function connectorsSvg(p: Picture, labelBg: string): string[] {
  const boxes = new Map<string, Rect>([...p.notes.map((n) => [n.id, rectOf(n)] as const), ...p.frames.map((f) => [f.id, frameRect(f)] as const)]);
  const out: string[] = [];
  const colours = new Set(p.connectors.filter((c) => !isLine(c)).map((c) => connectorColor(c.color)));
  if (colours.size) {
    out.push('<defs>');
    for (const col of colours)
      out.push(`<marker id="arrow-${col.slice(1)}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="${col}"/></marker>`);
    out.push('</defs>');
  }
  for (const c of p.connectors) {
    const a = boxes.get(c.from);
    const b = boxes.get(c.to);
    if (!a || !b) continue;
    const e = edgeEnds(a, b);
    const col = connectorColor(c.color);
    const dash = isDashed(c) ? ' stroke-dasharray="8 6"' : '';
    const head = isLine(c) ? '' : ` marker-end="url(#arrow-${col.slice(1)})"`;
    out.push(`<line x1="${e.x1}" y1="${e.y1}" x2="${e.x2}" y2="${e.y2}" stroke="${col}" stroke-width="2"${dash}${head}/>`);
    if (c.label) {
      const mx = (e.x1 + e.x2) / 2;
      const my = (e.y1 + e.y2) / 2;
      out.push(`<text x="${mx}" y="${my}" text-anchor="middle" dominant-baseline="middle" font-family="system-ui,sans-serif" font-size="13" fill="${col}" stroke="${labelBg}" stroke-width="4" paint-order="stroke">${escapeXml(c.label)}</text>`);
    }
  }
  return out;
}
