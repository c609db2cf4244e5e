import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Note } from '../api/types';
import { formatFloat, renderNote, renderRename } from './format';

// The Go golden files of the changelog package, and notes rendered by Go's
// changelog.RenderNote (testdata/render-go.json, made by a throwaway Go
// program from the notes it holds): the TypeScript port must write the same
// bytes.
const golden = (name: string) => readFileSync(new URL(`../../../changelog/testdata/${name}`, import.meta.url), 'utf8');
const fromGo = JSON.parse(readFileSync(new URL('./testdata/render-go.json', import.meta.url), 'utf8')) as { note: Note & { rename?: string }; md: string }[];

const note7: Note = {
  id: 'note-7',
  title: 'Retro: what went well',
  content: '# Wins\n\n- shipped the **sync** fix\n- `make test` is green\n\n```go\nfmt.Println("hi")\n```\n',
  x: 120.5,
  y: -40,
  color: 'yellow',
  type: 'sticky',
  updatedAt: '2026-03-01T09:30:00.123Z',
  version: 41,
};

describe('renderNote', () => {
  it('writes the golden note snapshot', () => {
    expect(renderNote(note7)).toBe(golden('note.md'));
  });
  it('writes the golden pre-deletion snapshot', () => {
    expect(renderNote({ ...note7, deletedAt: '2026-03-02T10:00:00Z' })).toBe(golden('note-deleted.md'));
  });
  it('writes the golden snapshot of a note with a size (w and h after y)', () => {
    expect(renderNote({ ...note7, w: 300, h: 180.5 })).toBe(golden('note-sized.md'));
  });
  it('writes a rename record as the golden file', () => {
    expect(renderRename('Sprint 12 — "final"')).toBe(golden('rename.md'));
  });
  for (const { note, md } of fromGo) {
    it(`matches Go for ${note.id ?? 'a rename'}`, () => {
      if (note.rename !== undefined) expect(renderRename(note.rename)).toBe(md);
      else expect(renderNote(note)).toBe(md);
    });
  }
});

describe('formatFloat', () => {
  it.each([
    [0, '0'],
    [-0, '-0.0'],
    [0.1, '0.1'],
    [-40, '-40'],
    [1e9, '1000000000'],
    [1e21, '1e+21'],
    [1e-7, '0.0000001'],
    [1e-20, '1e-20'],
    [5e-324, '5e-324'],
    [NaN, '.nan'],
  ])('%s is %s', (v, s) => expect(formatFloat(v)).toBe(s));
});

describe('locks and roles', () => {
  it('leaves out locked and createdBy, as the server renders a note (they are the server\'s, and no extra fields)', () => {
    const n = { id: 'n1', title: 'T', content: 'c', x: 0, y: 0, color: 'yellow', type: 'note', updatedAt: '', version: 1 };
    expect(renderNote({ ...n, locked: true, createdBy: 'ada@example.com' })).toBe(renderNote(n));
  });
});
