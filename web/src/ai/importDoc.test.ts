import { describe, expect, it } from 'vitest';
import { DEFAULT_COLOR, DEFAULT_TYPE, GAP, MAX_DOCUMENT, MAX_FILE_BYTES, documentLength, documentProblem, documentRequest, excerpt, freeOrigin, importedNotes, noteColor, noteType, readDocument, wellFormed } from './importDoc';
import { NOTE_HEIGHT, NOTE_WIDTH } from '../canvas/notes';

// '😀' is one code point and two UTF-16 units: the server counts it once.
const astral = '😀';

describe('documentLength counts code points, as the server does', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    [astral, 1],
    ['a😀b', 3],
    ['é', 1], // precomposed
    ['e\u0301', 2], // e + combining accent: two code points
    ['\uD800', 1], // lone high surrogate (sent as U+FFFD)
    ['\uDC00x', 2], // lone low surrogate
    ['\uDBFF\uDFFF', 1], // the last code point
  ])('%j → %d', (s, n) => {
    expect(documentLength(s)).toBe(n);
  });
});

describe('the 100,000-character edge, with astral characters', () => {
  it('100,000 astral characters (200,000 UTF-16 units) pass', () => {
    const text = astral.repeat(MAX_DOCUMENT);
    expect(text.length).toBe(200_000);
    expect(documentLength(text)).toBe(100_000);
    expect(documentProblem(text)).toBe('');
  });
  it('100,001 characters fail, even when most are ASCII', () => {
    const text = 'a'.repeat(MAX_DOCUMENT - 1) + astral + 'b';
    expect(text.length).toBe(100_002);
    expect(documentLength(text)).toBe(100_001);
    expect(documentProblem(text)).toBe('The document has 100,001 characters; at most 100,000 can be imported. Remove 1 character, or import it in parts.');
  });
  it('99,999 ASCII + one astral pass (100,001 UTF-16 units)', () => {
    const text = 'a'.repeat(MAX_DOCUMENT - 1) + astral;
    expect(text.length).toBe(100_001);
    expect(documentProblem(text)).toBe('');
  });
  it('a blank document is refused', () => {
    expect(documentProblem(' \n\t')).toBe('Paste a document or choose a file first.');
  });
});

describe('wellFormed', () => {
  it('replaces lone surrogates and keeps pairs', () => {
    expect(wellFormed('a\uD800b\uDC00' + astral)).toBe('a\uFFFDb\uFFFD' + astral);
    expect(documentLength(wellFormed('\uD800\uD800'))).toBe(documentLength('\uD800\uD800'));
  });
  it('the request carries well-formed text and a cut file name', () => {
    const r = documentRequest('x\uD800', 'n'.repeat(300), 'b1');
    expect(r).toEqual({ text: 'x\uFFFD', boardId: 'b1', filename: 'n'.repeat(255) });
    expect(JSON.stringify(r)).not.toMatch(/\\ud8/);
    expect(documentRequest('x', '', 'b1')).toEqual({ text: 'x', boardId: 'b1' });
  });
});

describe('readDocument', () => {
  it('reads a .md file as UTF-8', async () => {
    const f = new File(['# Plan\n\n' + astral], 'plan.md', { type: '' });
    expect(await readDocument(f)).toBe('# Plan\n\n' + astral);
  });
  it('refuses a file that is not text', async () => {
    await expect(readDocument(new File(['x'], 'photo.png', { type: 'image/png' }))).rejects.toThrow('"photo.png" is not a text or Markdown file (.txt, .md).');
  });
  it('refuses, unread, a file too big to hold 100,000 characters', async () => {
    const ok = new File(['a'.repeat(MAX_FILE_BYTES)], 'big.txt');
    await expect(readDocument(ok)).resolves.toHaveLength(MAX_FILE_BYTES); // may still be 100,000 4-byte characters
    await expect(readDocument(new File(['a'.repeat(MAX_FILE_BYTES + 1)], 'big.txt'))).rejects.toThrow(/longer than 100,000 characters can be/);
  });
});

describe('suggested colour and type', () => {
  it.each([
    ['blue', 'blue'],
    ['gray', 'gray'],
    ['magenta', DEFAULT_COLOR],
    [undefined, DEFAULT_COLOR],
    ['', DEFAULT_COLOR],
    ['__proto__', DEFAULT_COLOR],
  ])('colour %j → %j', (s, want) => expect(noteColor(s)).toBe(want));
  it.each([
    ['note', DEFAULT_TYPE],
    ['idea', 'idea'],
    ['requirement', 'requirement'],
    ['qa-test', 'qa-test'],
    ['poem', DEFAULT_TYPE],
    [undefined, DEFAULT_TYPE],
  ])('type %j → %j', (s, want) => expect(noteType(s)).toBe(want));
});

describe('layout in a free area', () => {
  it('an empty board starts at the origin', () => {
    expect(freeOrigin([])).toEqual({ x: 0, y: 0 });
  });
  it('right of the rightmost note, level with the topmost', () => {
    expect(freeOrigin([{ x: 100, y: 50 }, { x: 900, y: 400 }, { x: -300, y: -20 }])).toEqual({ x: 900 + NOTE_WIDTH + 2 * GAP, y: -20 });
  });
  it('a grid five wide; no imported note overlaps another or an existing one', () => {
    const existing = [{ x: 0, y: 0 }, { x: 500, y: 300 }];
    let n = 0;
    const notes = importedNotes(
      Array.from({ length: 12 }, (_, i) => ({ title: ` T${i} `, content: `c${i}`, suggestedColor: 'pink', suggestedType: 'note' })),
      existing,
      () => `id${n++}`,
    );
    expect(notes.map((x) => x.id)).toEqual(Array.from({ length: 12 }, (_, i) => `id${i}`));
    expect(notes[0]).toEqual({ id: 'id0', title: 'T0', content: 'c0', x: 500 + NOTE_WIDTH + 2 * GAP, y: 0, color: 'pink', type: 'sticky', updatedAt: '' });
    expect(notes[5].x).toBe(notes[0].x);
    expect(notes[5].y).toBe(NOTE_HEIGHT + GAP);
    expect(notes[11].y).toBe(2 * (NOTE_HEIGHT + GAP));
    const all = [...existing, ...notes];
    for (let i = 0; i < all.length; i++)
      for (let j = i + 1; j < all.length; j++) {
        const overlap = Math.abs(all[i].x - all[j].x) < NOTE_WIDTH && Math.abs(all[i].y - all[j].y) < NOTE_HEIGHT;
        expect(overlap, `${i} and ${j} overlap`).toBe(false);
      }
  });
  it('cuts a title past 1,000 and content past 30,000 characters', () => {
    const [n] = importedNotes([{ title: astral.repeat(1001), content: astral.repeat(30_001) }], [], () => 'x');
    expect(documentLength(n.title)).toBe(1000);
    expect(documentLength(n.content)).toBe(30_000);
  });
});

describe('excerpt', () => {
  it('keeps short content and cuts long content at a line end', () => {
    expect(excerpt('short')).toBe('short');
    const long = 'line one\n'.repeat(100);
    const e = excerpt(long, 100);
    expect(e.endsWith('line one …')).toBe(true);
    expect(e.length).toBeLessThanOrEqual(102);
  });
});
