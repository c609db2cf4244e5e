import { describe, expect, it } from 'vitest';
import { GESTURE_MS, OwnMoves } from './ownMoves';

describe('OwnMoves', () => {
  it('a change with no input is not mine (a followed view, a summon)', () => {
    const o = new OwnMoves();
    expect(o.mine(1000)).toBe(false);
  });

  it('a drag is mine, even while a followed view animates; a click without moving is not', () => {
    const o = new OwnMoves();
    o.animating(1000, 180);
    o.pointerDown(10, 10);
    o.pointerMove(12, 11);
    expect(o.mine(1010)).toBe(false);
    o.pointerMove(20, 10);
    expect(o.mine(1020)).toBe(true);
  });

  it('a wheel turn is mine for a moment, animation or not', () => {
    const o = new OwnMoves();
    o.animating(0, 180);
    o.wheel(10);
    expect(o.mine(20)).toBe(true);
    expect(o.mine(10 + GESTURE_MS)).toBe(false);
  });

  it('a key or a click is mine just after, unless a followed view is animating', () => {
    const o = new OwnMoves();
    o.key(100);
    expect(o.mine(150)).toBe(true);
    expect(o.mine(100 + GESTURE_MS)).toBe(false);
    o.pointerDown(0, 0);
    o.pointerUp(1000);
    o.animating(1010, 180);
    expect(o.mine(1100)).toBe(false); // typing in a note while the followed pans
    expect(o.mine(1300)).toBe(true);
  });
});
