import type { Note } from '../api/types';
import { describe, expect, it } from 'vitest';
import { note } from '../sync/testing';
import { clampSize, DEFAULT_H, DEFAULT_W, freeSpot, freeSpots, GAP, MAX_H, MAX_W, MIN_H, MIN_W, nearestInDirection, overlaps, placeMenu, sizeOf, type Rect } from './geometry';

describe('sizeOf', () => {
  it.each([
    ['no size', {}, { w: DEFAULT_W, h: DEFAULT_H }],
    ['a size', { w: 300, h: 200 }, { w: 300, h: 200 }],
    ['too small', { w: 1, h: 1 }, { w: MIN_W, h: MIN_H }],
    ['too large', { w: 99999, h: 99999 }, { w: MAX_W, h: MAX_H }],
    ['not numbers', { w: '300', h: null }, { w: DEFAULT_W, h: DEFAULT_H }],
    ['fractions', { w: 300.6, h: 200.2 }, { w: 301, h: 200 }],
  ])('%s', (_name, extra, want) => {
    // Stored rows may hold anything under w and h (other clients): read as given.
    expect(sizeOf(note('n', extra as Partial<Note>))).toEqual(want);
  });

  it('clampSize at the limits: N passes, N±1 is clamped', () => {
    expect(clampSize(MAX_W, MAX_H)).toEqual({ w: MAX_W, h: MAX_H });
    expect(clampSize(MAX_W + 1, MAX_H + 1)).toEqual({ w: MAX_W, h: MAX_H });
    expect(clampSize(MIN_W, MIN_H)).toEqual({ w: MIN_W, h: MIN_H });
    expect(clampSize(MIN_W - 1, MIN_H - 1)).toEqual({ w: MIN_W, h: MIN_H });
  });
});

describe('freeSpot', () => {
  const size = { w: DEFAULT_W, h: DEFAULT_H };
  it('takes the centre of an empty board', () => {
    expect(freeSpot([], { x: 0, y: 0 })).toEqual({ x: -110, y: -80 });
  });

  it('never lands on a note, and keeps the gap', () => {
    const taken: Rect[] = [{ x: -110, y: -80, ...size }];
    const p = freeSpot(taken, { x: 0, y: 0 });
    expect(overlaps({ ...p, ...size }, taken[0], GAP - 1)).toBe(false);
    // Nearest cell first: straight above or below the centre (a note is shorter than wide).
    expect(p).toEqual({ x: -110, y: -80 - DEFAULT_H - GAP });
  });

  it('is deterministic and fills a crowded view without overlaps', () => {
    const taken: Rect[] = [];
    for (let i = 0; i < 40; i++) taken.push({ x: (i % 8) * 130 - 500, y: Math.floor(i / 8) * 90 - 200, w: 120, h: 80 });
    const a = freeSpots(taken, { x: 0, y: 0 }, 12);
    expect(freeSpots(taken, { x: 0, y: 0 }, 12)).toEqual(a);
    const all = [...taken, ...a.map((p) => ({ ...p, ...size }))];
    for (let i = 0; i < all.length; i++) for (let j = i + 1; j < all.length; j++) expect(overlaps(all[i], all[j]), `${i} ${j}`).toBe(false);
  });

  it('keeps clear of a large note', () => {
    const big: Rect = { x: -600, y: -600, w: 1200, h: 1200 };
    const p = freeSpot([big], { x: 0, y: 0 });
    expect(overlaps({ ...p, ...size }, big)).toBe(false);
  });
});

describe('nearestInDirection', () => {
  const from = { x: 0, y: 0, w: 100, h: 100 };
  it('prefers a note straight ahead over a nearer one off to the side', () => {
    const notes = [note('ahead', { x: 500, y: 0 }), note('side', { x: 250, y: 230 })];
    expect(nearestInDirection(from, 'right', notes)?.id).toBe('ahead');
  });
  it('ignores notes behind and beyond 45°, and breaks ties by id', () => {
    expect(nearestInDirection(from, 'left', [note('r', { x: 300 })])).toBeNull();
    expect(nearestInDirection(from, 'down', [note('b', { x: 0, y: 300 }), note('a', { x: 0, y: 300 })])?.id).toBe('a');
  });
});

describe('w and h in a merge', () => {
  it('merge as one size, apart from the position: a resize survives someone else moving the note', async () => {
    const { mergeNote } = await import('../sync/merge');
    const base = note('n', { x: 0, y: 0 });
    const theirs = { ...base, x: 50, y: 60 };
    const mine = { ...base, w: 300, h: 200 };
    expect(mergeNote(base, theirs, mine).merged).toMatchObject({ x: 50, y: 60, w: 300, h: 200 });
    // Both resized: the size is one value, and mine (the later push) wins it
    // whole, as board.MergeNote does.
    const sized = { ...base, w: 300, h: 200 };
    expect(mergeNote(sized, { ...sized, w: 500 }, { ...sized, h: 400 }).merged).toMatchObject({ w: 300, h: 400 });
  });
});

describe('placeMenu', () => {
  const phone = { w: 390, h: 844 };
  const menu = { w: 220, h: 300 };
  it.each([
    ['at the point when it fits', { x: 50, y: 60 }, { x: 50, y: 60 }],
    ['flipped left near the right edge', { x: 380, y: 60 }, { x: 160, y: 60 }],
    ['flipped up near the bottom', { x: 50, y: 800 }, { x: 50, y: 500 }],
    ['flipped both ways in the corner', { x: 389, y: 843 }, { x: 162, y: 536 }],
    ['shifted in when a flip would leave the screen', { x: 200, y: 200 }, { x: 162, y: 200 }],
  ])('%s', (_name, at, want) => {
    const p = placeMenu(at, menu, phone);
    expect(p).toEqual(want);
    expect(p.x).toBeGreaterThanOrEqual(8);
    expect(p.y).toBeGreaterThanOrEqual(8);
    expect(p.x + menu.w).toBeLessThanOrEqual(phone.w - 8);
    expect(p.y + menu.h).toBeLessThanOrEqual(phone.h - 8);
  });
  it('keeps the top-left corner of a menu larger than the screen in view', () => {
    expect(placeMenu({ x: 100, y: 100 }, { w: 500, h: 1000 }, phone)).toEqual({ x: 8, y: 8 });
  });
});
