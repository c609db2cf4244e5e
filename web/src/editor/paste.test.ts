import { describe, expect, it } from 'vitest';
import { MAX_PASTE_NOTES, parsePaste } from './paste';

describe('parsePaste', () => {
  it.each([
    ['one line', 'Buy milk', [{ title: 'Buy milk', content: '' }]],
    ['paragraphs', 'First\nmore of it\n\nSecond', [{ title: 'First', content: 'more of it' }, { title: 'Second', content: '' }]],
    ['a list', '- one\n- two\n* three\n1. four', [{ title: 'one', content: '' }, { title: 'two', content: '' }, { title: 'three', content: '' }, { title: 'four', content: '' }]],
    ['nested items stay in their parent', '- parent\n  - child\n  - child 2\n- next', [{ title: 'parent', content: '- child\n- child 2' }, { title: 'next', content: '' }]],
    ['a heading titles its paragraph', '# Goals\n\nShip it.\nSoon.', [{ title: 'Goals', content: 'Ship it.\nSoon.' }]],
    ['CRLF and blank runs', 'a\r\n\r\n\r\n\r\nb\r\n', [{ title: 'a', content: '' }, { title: 'b', content: '' }]],
    ['a fence keeps its blank lines', 'Code\n```\nx\n\ny\n```', [{ title: 'Code', content: '```\nx\n\ny\n```' }]],
    ['only blanks', '  \n\n \n', []],
  ])('%s', (_name, text, want) => {
    expect(parsePaste(text).notes).toEqual(want);
  });

  it('makes at most the cap (N passes, N+1 drops one)', () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => `- item ${i}`).join('\n');
    expect(parsePaste(items(MAX_PASTE_NOTES))).toMatchObject({ dropped: 0 });
    expect(parsePaste(items(MAX_PASTE_NOTES)).notes).toHaveLength(MAX_PASTE_NOTES);
    const over = parsePaste(items(MAX_PASTE_NOTES + 1));
    expect(over.notes).toHaveLength(MAX_PASTE_NOTES);
    expect(over.dropped).toBe(1);
  });
});
