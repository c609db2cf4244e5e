import { describe, expect, it } from 'vitest';
import { fitOptions, zoomPercent } from './zoom';

describe('zoom', () => {
  it.each([
    [390, 0.5],
    [768, 0.5],
    [769, undefined],
    [1280, undefined],
  ])('a fit at %i px wide goes down to %s', (w, min) => {
    expect(fitOptions(w).minZoom).toBe(min);
  });

  it.each([
    [1, '100 %'],
    [0.456, '46 %'],
    [0.05, '5 %'],
    [4, '400 %'],
  ])('shows %s as %s', (z, s) => expect(zoomPercent(z)).toBe(s));
});
