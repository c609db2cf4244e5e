import { describe, expect, it } from 'vitest';
import { frame, note } from '../sync/testing';
import { minimapClass, minimapColor, minimapStroke } from './minimap';
import { background } from './notes';
import { FRAME_COLORS } from '../editor/structure';

describe('minimap', () => {
  const f = { type: 'frame', data: { frame: frame('f', { color: 'blue' }) } };
  const n = { type: 'note', data: { note: note('n', { color: 'pink' }) } };
  it('outlines a frame in its colour over its tint', () => {
    expect(minimapStroke(f)).toBe(FRAME_COLORS.blue.line);
    expect(minimapColor(f)).toBe(FRAME_COLORS.blue.fill);
    expect(minimapClass(f)).toBe('minimap-frame');
  });
  it('draws a note as a block of its colour, without an outline', () => {
    expect(minimapColor(n)).toBe(background('pink'));
    expect(minimapStroke(n)).toBe('transparent');
    expect(minimapClass(n)).toBe('');
  });
});
