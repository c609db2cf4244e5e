import { describe, expect, it } from 'vitest';
import type { Note } from '../../api/types';
import { acceptLabel, classify, proposalText, removedShare, replacesMost } from './proposals';

const note = (id: string, content: string, title = id): Note => ({ id, title, content, x: 0, y: 0, color: 'yellow', type: 'sticky', updatedAt: '' });
const notes = new Map([
  ['keep1', note('keep1', 'line one\nline two\nline three\nline four')],
  ['empty', note('empty', '')],
]);
const call = (toolName: string, input: unknown) => ({ toolCallId: 'c1', toolName, input });

describe('removedShare', () => {
  it.each([
    ['same text', 'a\nb', 'a\nb', 0],
    ['lines moved', 'a\nb', 'b\na', 0],
    ['lines added', 'a\nb', 'a\nb\nc', 0],
    ['all replaced', 'abc', 'xyz', 1],
    ['emptied', 'abc\ndef', '', 1],
    ['empty before', '', 'anything', 0],
    // "aaaa" (5 with its break) of 9 characters removed: more than half.
    ['the longer line removed', 'aaaa\nbbb', 'bbb', 5 / 8],
  ])('%s', (_, old, next, want) => {
    expect(removedShare(old, next)).toBeCloseTo(want as number);
  });
});

describe('replacesMost: more than half of the characters', () => {
  // 10 lines of 9 characters, 9 breaks: 99 characters. Keeping 5 lines removes 49 (≤ half), keeping 4 removes 59.
  const old = Array.from({ length: 10 }, (_, i) => `line ${i}..`).join('\n');
  const keep = (n: number) => old.split('\n').slice(0, n).join('\n');
  it('removing half (5 of 10 lines) is not most', () => {
    expect(removedShare(old, keep(5))).toBeLessThanOrEqual(0.5);
    expect(replacesMost(old, keep(5))).toBe(false);
  });
  it('removing 6 of 10 lines is most', () => {
    expect(replacesMost(old, keep(4))).toBe(true);
  });
  it('rewriting every line is most, even when the new text is longer', () => {
    expect(replacesMost(old, old.toUpperCase() + '\nmore')).toBe(true);
  });
});

describe('classify', () => {
  it('a delete of an existing note is a proposal', () => {
    expect(classify(call('deleteNote', { id: 'keep1' }), notes)).toMatchObject({ kind: 'delete', noteId: 'keep1', removed: 1 });
  });
  it('a delete of a missing note is not (it is an error)', () => {
    expect(classify(call('deleteNote', { id: 'nope' }), notes)).toBeNull();
  });
  it('an update that replaces most of the content is a proposal', () => {
    expect(classify(call('updateNote', { id: 'keep1', content: 'Nothing here.' }), notes)).toMatchObject({ kind: 'replace', noteId: 'keep1' });
  });
  it('an update that adds to the content is not', () => {
    expect(classify(call('updateNote', { id: 'keep1', content: 'line one\nline two\nline three\nline four\nline five' }), notes)).toBeNull();
  });
  it('an update of the title or colour only is not', () => {
    expect(classify(call('updateNote', { id: 'keep1', title: 'New', color: 'blue' }), notes)).toBeNull();
  });
  it('an update of an empty note is not', () => {
    expect(classify(call('updateNote', { id: 'empty', content: 'Now it has text' }), notes)).toBeNull();
  });
  it.each(['createNote', 'createPlaceholderNote', 'summarizeBoard', 'expandNote'])('%s is not (expandNote is classified on its result)', (name) => {
    expect(classify(call(name, { id: 'keep1', title: 't', content: '' }), notes)).toBeNull();
  });
});

describe('the card', () => {
  const d = (id: string) => ({ toolCallId: id, kind: 'delete' as const, noteId: id, title: id, removed: 1 });
  const r = (id: string) => ({ toolCallId: id, kind: 'replace' as const, noteId: id, title: id, removed: 0.8 });
  it('says what and which notes', () => {
    expect(proposalText([d('keep1'), d('keep2')])).toBe('The assistant wants to delete 2 notes: “keep1”, “keep2”.');
    expect(proposalText([r('spec')])).toBe('The assistant wants to replace most of the text of 1 note: “spec”.');
  });
  it('names the button for what it does', () => {
    expect(acceptLabel([d('a'), d('b')])).toBe('Delete');
    expect(acceptLabel([r('a')])).toBe('Replace');
    expect(acceptLabel([d('a'), r('b')])).toBe('Apply');
  });
});
