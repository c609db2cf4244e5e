import { describe, expect, it } from 'vitest';
import type { Connector, Frame, Note } from '../api/types';
import { dotsOf, lineInView, MIN_DOT, sceneOf } from './layer';
import { COLORS } from './notes';
import { FRAME_COLORS, CONNECTOR_COLORS } from '../editor/structure';

const note = (id: string, x: number, y: number, extra: Partial<Note> = {}): Note => ({ id, title: `T ${id}`, content: '', x, y, color: 'yellow', type: 'sticky', updatedAt: '', ...extra });
const frame = (id: string, x: number, y: number): Frame => ({ id, title: '', x, y, w: 600, h: 400, color: 'blue', locked: false, updatedAt: '' });
const conn = (id: string, from: string, to: string, extra: Partial<Connector> = {}): Connector => ({ id, from, to, label: '', style: 'arrow', color: 'red', updatedAt: '', ...extra });
const none = { selected: new Set<string>(), moving: new Map(), sizing: new Map() };

describe('the layer scene', () => {
  it('draws the rows that are not DOM, in the colours the DOM notes and frames use', () => {
    const s = sceneOf({ notes: [note('a', 0, 0), note('b', 300, 0, { color: 'blue', w: 400, h: 300 }), note('c', 600, 0, { color: 'chartreuse' })], frames: [frame('f', -20, -40)], connectors: [] }, new Set(['a']), none);
    expect(s.count).toBe(3);
    expect([...s.notes.keys()].sort()).toEqual([COLORS.blue, '#f3f4f6'].sort()); // an unknown colour draws neutral, as on the DOM note
    expect(s.notes.get(COLORS.blue)).toEqual([300, 0, 400, 300]); // at its own size
    expect(s.frames).toEqual([{ rect: { x: -20, y: -40, w: 600, h: 400 }, fill: FRAME_COLORS.blue.fill, line: FRAME_COLORS.blue.line, title: 'Untitled frame' }]);
    expect(s.titles.map((t) => t.text)).toEqual(['T b', 'T c']);
  });
  it('draws a connector unless both ends are DOM, border to border, with its arrowhead', () => {
    const rows = { notes: [note('a', 0, 0), note('b', 500, 0)], frames: [], connectors: [conn('ab', 'a', 'b'), conn('line', 'b', 'a', { style: 'line', color: 'blue', dash: 'dashed' })] };
    expect(sceneOf(rows, new Set(['a', 'b']), none).connectors.size).toBe(0);
    const s = sceneOf(rows, new Set(['a']), none);
    const red = s.connectors.get(`${CONNECTOR_COLORS.red} false`)!.lines[0];
    expect([red.x1, red.y1, red.x2, red.y2]).toEqual([220, 80, 500, 80]);
    expect(red.head).toEqual([486, 86, 486, 74]);
    const blue = s.connectors.get(`${CONNECTOR_COLORS.blue} true`)!;
    expect(blue.dashed).toBe(true);
    expect(blue.lines[0].head).toBeNull();
  });
  it('skips a connector whose end is gone, and outlines the selected rows it draws', () => {
    const s = sceneOf({ notes: [note('a', 0, 0)], frames: [], connectors: [conn('x', 'a', 'gone')] }, new Set(), { ...none, selected: new Set(['a']) });
    expect(s.connectors.size).toBe(0);
    expect(s.selected).toEqual([{ x: 0, y: 0, w: 220, h: 160 }]);
  });
  it('a line is in view when its box meets the view', () => {
    const l = { x1: 0, y1: 0, x2: 100, y2: 100, head: null };
    expect(lineInView(l, { x: 50, y: 50, w: 10, h: 10 })).toBe(true);
    expect(lineInView(l, { x: 200, y: 0, w: 10, h: 10 })).toBe(false);
  });
});

describe('the dot grid', () => {
  it('scales with the zoom and is not drawn when its dots would be under half a pixel', () => {
    expect(dotsOf(1)).toEqual({ gap: 24, d: 1 });
    expect(dotsOf(2)).toEqual({ gap: 48, d: 2 });
    expect(dotsOf(MIN_DOT)).not.toBeNull();
    expect(dotsOf(0.3)).toBeNull();
  });
});
