import { describe, expect, it } from 'vitest';
import { cut } from './boardContext';

describe('cut keeps the first n code points, as the server counts them', () => {
  const cases: [string, number, string][] = [
    ['abc', 5, 'abc'],
    ['abcdef', 3, 'abc'],
    ['😀😀😀', 2, '😀😀'], // 6 UTF-16 units, 3 code points
    ['a😀b', 2, 'a😀'],
    ['\ud800x', 1, '\ud800'], // a lone high surrogate counts as one
    ['x\udc00y', 2, 'x\udc00'],
    ['😀', 0, ''],
  ];
  for (const [s, n, want] of cases) {
    it(`${JSON.stringify(s)} to ${n}`, () => {
      expect(cut(s, n)).toBe(want);
      expect(Array.from(cut(s, n)).length).toBe(Math.min(n, Array.from(s).length));
    });
  }
});
