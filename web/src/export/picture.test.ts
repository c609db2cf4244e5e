import { describe, expect, it } from 'vitest';
import type { Connector, Frame, Note } from '../api/types';
import { edgeEnds, escapeXml, PADDING, pick, svgOf, type Picture } from './picture';
import { pdfOf } from './pdf';

const note = (id: string, x: number, y: number, extra: Partial<Note> = {}): Note => ({ id, title: `Note ${id}`, content: '', x, y, color: 'yellow', type: 'sticky', updatedAt: '2026-11-27T00:00:00Z', ...extra });
const frame = (id: string, x: number, y: number, w: number, h: number): Frame => ({ id, title: `Frame ${id}`, x, y, w, h, color: 'blue', locked: false, updatedAt: '2026-11-27T00:00:00Z' });
const link = (id: string, from: string, to: string, extra: Partial<Connector> = {}): Connector => ({ id, from, to, label: '', style: 'arrow', color: 'gray', updatedAt: '2026-11-27T00:00:00Z', ...extra });

const board: Picture = {
  notes: [note('a', 0, 0), note('b', 400, 0), note('c', 2000, 2000)],
  frames: [frame('f', -50, -50, 800, 400)],
  connectors: [link('ab', 'a', 'b', { label: 'then' }), link('bc', 'b', 'c'), link('fa', 'f', 'a', { style: 'line', dash: 'dashed' })],
};

describe('pick', () => {
  it('takes the whole board, padded', () => {
    const got = pick(board, { kind: 'board' })!;
    expect(got.region).toEqual({ x: -50 - PADDING, y: -50 - PADDING, w: 2220 + 50 + 2 * PADDING, h: 2160 + 50 + 2 * PADDING });
    expect(got.picture.connectors.map((c) => c.id)).toEqual(['ab', 'bc', 'fa']);
  });

  it('takes the selection, and the connectors both of whose ends are in it', () => {
    const got = pick(board, { kind: 'selection', ids: new Set(['a', 'b']) })!;
    expect(got.picture.notes.map((n) => n.id)).toEqual(['a', 'b']);
    expect(got.picture.frames).toEqual([]);
    expect(got.picture.connectors.map((c) => c.id)).toEqual(['ab']);
    expect(got.region).toEqual({ x: -PADDING, y: -PADDING, w: 620 + 2 * PADDING, h: 160 + 2 * PADDING });
  });

  it('takes a frame and the notes whose centre is inside it', () => {
    const got = pick(board, { kind: 'frame', id: 'f' })!;
    expect(got.picture.notes.map((n) => n.id)).toEqual(['a', 'b']);
    expect(got.picture.connectors.map((c) => c.id)).toEqual(['ab', 'fa']);
    expect(got.region).toEqual({ x: -50 - PADDING, y: -50 - PADDING, w: 800 + 2 * PADDING, h: 400 + 2 * PADDING });
  });

  it('has nothing to draw for an empty selection or a frame that is gone', () => {
    expect(pick(board, { kind: 'selection', ids: new Set() })).toBeNull();
    expect(pick(board, { kind: 'frame', id: 'gone' })).toBeNull();
    expect(pick({ notes: [], frames: [], connectors: [] }, { kind: 'board' })).toBeNull();
  });
});

describe('edgeEnds', () => {
  it('starts and ends where the line between the centres leaves each box', () => {
    expect(edgeEnds({ x: 0, y: 0, w: 100, h: 100 }, { x: 300, y: 0, w: 100, h: 100 })).toEqual({ x1: 100, y1: 50, x2: 300, y2: 50 });
    expect(edgeEnds({ x: 0, y: 0, w: 100, h: 100 }, { x: 0, y: 300, w: 100, h: 100 })).toEqual({ x1: 50, y1: 100, x2: 50, y2: 300 });
  });
});

describe('svgOf', () => {
  const identity = (html: string) => html;
  it('draws a region-sized SVG: background, frames, connectors, notes with their Markdown', () => {
    const p: Picture = { ...board, notes: [note('a', 0, 0, { title: 'A < B', content: '**bold**' }), board.notes[1]] };
    const got = pick(p, { kind: 'frame', id: 'f' })!;
    const svg = svgOf(got.picture, got.region, 'dark', identity);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="864" height="464" viewBox="-82 -82 864 464">/);
    expect(svg).toContain('fill="#0f141a"'); // the dark background
    expect(svg.match(/<foreignObject /g)).toHaveLength(2);
    expect(svg).toContain('<h3 class="note-title">A &lt; B</h3>');
    expect(svg).toContain('<strong>bold</strong>');
    expect(svg).toContain('>Frame f</text>');
    expect(svg).toContain('stroke-dasharray'); // fa is dashed
    expect(svg.match(/marker-end=/g)).toHaveLength(1); // ab is an arrow, fa a line
    expect(svg).toContain('>then</text>');
  });

  it('escapes what it writes', () => {
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;');
  });
});

describe('pdfOf', () => {
  it('writes a PDF with a page per image and a cross-reference table that points at each object', () => {
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xd9]);
    const bytes = pdfOf([
      { jpeg, width: 200, height: 100, pageW: 75, pageH: 37.5 },
      { jpeg, width: 20, height: 10, pageW: 7.5, pageH: 3.75 },
    ]);
    const text = new TextDecoder('latin1').decode(bytes);
    expect(text.startsWith('%PDF-1.4\n')).toBe(true);
    expect(text.trimEnd().endsWith('%%EOF')).toBe(true);
    expect(text).toContain('/Type /Pages /Kids [3 0 R 6 0 R] /Count 2');
    expect(text).toContain('/MediaBox [0 0 75 37.5]');
    expect(text).toContain('/Width 20 /Height 10');
    const xref = Number(/startxref\n(\d+)/.exec(text)![1]);
    expect(text.slice(xref, xref + 4)).toBe('xref');
    const offsets = [...text.slice(xref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    expect(offsets).toHaveLength(8);
    offsets.forEach((o, i) => expect(text.slice(o, o + `${i + 1} 0 obj`.length)).toBe(`${i + 1} 0 obj`));
  });
});
