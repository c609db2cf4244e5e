import { describe, expect, it } from 'vitest';
import type { Connector, Frame, Note } from '../api/types';
import { domEdge, domIds, FAR_ZOOM, hitRow, inBox, LAYER_ZOOM, levelOf, MAX_PINNED_SELECTED, pinnedOf, sameRows, stale, viewOf, windowFor, windowIds } from './cull';

const note = (id: string, x: number, y: number, extra: Partial<Note> = {}): Note => ({ id, title: id, content: '', x, y, color: 'yellow', type: 'sticky', updatedAt: '', ...extra });
const frame = (id: string, x: number, y: number, w = 600, h = 400): Frame => ({ id, title: id, x, y, w, h, color: 'gray', locked: false, updatedAt: '' });
const conn = (id: string, from: string, to: string): Connector => ({ id, from, to, label: '', style: 'arrow', color: 'gray', updatedAt: '' });
/** grid is a board of n×n notes 260 px apart (the perf board's pitch). */
const grid = (n: number) => Array.from({ length: n * n }, (_, i) => note(`n${i}`, (i % n) * 260, Math.floor(i / n) * 200));
const noActing = { selected: new Set<string>(), moving: new Map(), sizing: new Map(), others: [] };

describe('the window of rows handed to xyflow', () => {
  it('is the view and half of it again on each side', () => {
    const v = viewOf([-1000, -500, 1], 1280, 800);
    expect(v.rect).toEqual({ x: 1000, y: 500, w: 1280, h: 800 });
    const win = windowFor(v);
    expect(win.rect).toEqual({ x: 360, y: 100, w: 2560, h: 1600 });
    expect(win.layer).toBe(false);
    expect(windowFor(viewOf([-1000, -500, 0.5], 1280, 800)).layer).toBe(true);
  });
  it('holds the notes near the view, not the board', () => {
    const notes = grid(45); // 2,000 notes
    const win = windowFor(viewOf([0, 0, 0.6], 1280, 800));
    const ids = windowIds({ notes, frames: [], connectors: [] }, win);
    expect(ids.has('n0')).toBe(true);
    expect(ids.size).toBeGreaterThan(48); // the 8 × 6 in view
    expect(ids.size).toBeLessThan(200);
    expect(ids.has('n1999')).toBe(false);
  });
  it('holds nothing below LAYER_ZOOM: the layer draws every row there', () => {
    const win = windowFor(viewOf([0, 0, LAYER_ZOOM - 0.01], 1280, 800));
    expect(win.layer).toBe(true);
    expect(windowIds({ notes: grid(10), frames: [frame('f', 0, 0)], connectors: [] }, win).size).toBe(0);
  });
  it('is kept while a pan stays inside it, and taken again when it leaves', () => {
    const win = windowFor(viewOf([0, 0, 1], 1280, 800));
    expect(stale(win, viewOf([-600, -380, 1], 1280, 800))).toBe(false);
    expect(stale(win, viewOf([-700, 0, 1], 1280, 800))).toBe(true);
    expect(stale(win, viewOf([0, 0, 2.1], 1280, 800))).toBe(true); // zoomed in past twice: far more than the view
    expect(stale(win, viewOf([0, 0, 0.55], 1280, 800))).toBe(true); // crossed into the layer
    const far = windowFor(viewOf([0, 0, 0.1], 1280, 800));
    expect(stale(far, viewOf([-5000, 3000, 0.12], 1280, 800))).toBe(false); // a layer window never goes stale within the layer
  });
});

describe('the rows that are DOM', () => {
  it('adds the rows acted on, wherever they are, and the far end of their connectors', () => {
    const pinned = pinnedOf({ selected: new Set(['a']), moving: new Map([['b', { x: 0, y: 0 }]]), sizing: new Map([['c', { w: 300, h: 200 }]]), others: ['d', null, undefined] });
    expect([...pinned].sort()).toEqual(['a', 'b', 'c', 'd']);
    const dom = domIds(new Set(['w']), pinned, [conn('c1', 'a', 'z'), conn('c2', 'q', 'w'), conn('c3', 'x', 'y')]);
    expect([...dom].sort()).toEqual(['a', 'b', 'c', 'd', 'q', 'w', 'z']);
    expect(domEdge(conn('c1', 'a', 'z'), dom)).toBe(true);
    expect(domEdge(conn('c3', 'x', 'y'), dom)).toBe(false);
  });
  it('pins at most MAX_PINNED_SELECTED of a selection (a far box selection of thousands stays on the layer)', () => {
    const selected = new Set(Array.from({ length: MAX_PINNED_SELECTED + 50 }, (_, i) => `n${i}`));
    expect(pinnedOf({ ...noActing, selected }).size).toBe(MAX_PINNED_SELECTED);
    expect(pinnedOf({ ...noActing, selected: new Set(['n1']), moving: new Map([['n1', { x: 1, y: 1 }]]) }).size).toBe(1);
  });
});

describe('selecting rows the layer draws', () => {
  const rows = { notes: [note('a', 0, 0), note('b', 300, 0), note('c', 5000, 5000)], frames: [frame('f', -20, -40, 600, 300)], connectors: [conn('ab', 'a', 'b'), conn('bc', 'b', 'c')] };
  it('a box takes the notes and frames wholly inside it and their connectors', () => {
    expect(inBox(rows, { x: -10, y: -10, w: 540, h: 200 }).sort()).toEqual(['a', 'ab', 'b', 'bc']);
    expect(inBox(rows, { x: -30, y: -50, w: 700, h: 400 }).sort()).toEqual(['a', 'ab', 'b', 'bc', 'f']);
    // Half of a note is not enough (xyflow's SelectionMode.Full).
    expect(inBox(rows, { x: 100, y: 0, w: 300, h: 200 })).toEqual([]);
  });
  it('a click hits the topmost note, else the frame under it, skipping DOM rows', () => {
    const over = { ...rows, notes: [...rows.notes, note('top', 100, 50)] };
    expect(hitRow(over, { x: 150, y: 100 }, new Set())).toBe('top');
    expect(hitRow(over, { x: 150, y: 100 }, new Set(['top']))).toBe('a');
    expect(hitRow(over, { x: 540, y: 240 }, new Set())).toBe('f');
    expect(hitRow(over, { x: 3000, y: 3000 }, new Set())).toBeNull();
  });
});

describe('what the layer draws of a note', () => {
  it('is what a DOM note shows at that zoom: a box far out, a title nearer', () => {
    expect(levelOf(0.05)).toBe('box');
    expect(levelOf(FAR_ZOOM - 0.001)).toBe('box');
    expect(levelOf(FAR_ZOOM)).toBe('title');
    expect(levelOf(1)).toBe('title');
  });
});

describe('rows kept across snapshots', () => {
  it('are the same while every row object is, and not when one row changed, came or went', () => {
    const a = note('a', 0, 0);
    const b = note('b', 300, 0);
    const m = new Map([['a', a], ['b', b]]);
    expect(sameRows(m, new Map(m))).toBe(true);
    expect(sameRows(m, new Map([['a', a], ['b', { ...b, x: 310 }]]))).toBe(false);
    expect(sameRows(m, new Map([['a', a]]))).toBe(false);
    expect(sameRows(m, new Map([['a', a], ['c', b]]))).toBe(false);
  });
});
