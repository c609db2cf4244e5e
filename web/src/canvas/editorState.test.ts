import { describe, expect, it } from 'vitest';
import { mergeNote } from '../sync/merge';
import { note } from '../sync/testing';
import { changedMeanwhile, edit, follow, openEditor, saved, toSave, touched } from './editorState';

const opened = note('n1', { title: 'Plan', content: 'one\ntwo\nthree', color: 'yellow', type: 'task', version: 4 });

describe('the note editor following the note', () => {
  it('opens with the note\'s fields, nothing touched, nothing to save', () => {
    const s = openEditor(opened);
    expect(s.values).toEqual({ title: 'Plan', color: 'yellow', type: 'task', content: 'one\ntwo\nthree' });
    expect(touched(s)).toEqual([]);
    expect(toSave(s)).toBeNull();
  });

  it('updates every untouched field in place when someone else changes the note', () => {
    let s = edit(openEditor(opened), 'title', 'Plan B');
    const now = { ...opened, title: 'Their plan', content: 'one\ntwo\nthree\nfour', color: 'blue', version: 5 };
    s = follow(s, now);
    expect(s.values).toEqual({ title: 'Plan B', color: 'blue', type: 'task', content: 'one\ntwo\nthree\nfour' });
    // The fields that followed are still untouched; the title is mine.
    expect(touched(s)).toEqual(['title']);
    expect(changedMeanwhile(s, now)).toEqual(['title']);
  });

  it('takes the new note as its base when nothing was touched', () => {
    const now = { ...opened, content: 'x', version: 5 };
    const s = follow(openEditor(opened), now);
    expect(s.base).toBe(now);
    expect(touched(s)).toEqual([]);
  });

  it('returns the same state when nothing changes', () => {
    const s = edit(openEditor(opened), 'content', 'mine');
    expect(follow(s, s.base)).toBe(s);
    expect(follow(s, { ...opened, content: 'theirs', version: 5 })).toBe(s);
    expect(follow(s, undefined)).toBe(s);
  });

  it('saves only the touched fields, on the base it opened on: the merge keeps both sides\' lines', () => {
    let s = edit(openEditor(opened), 'content', 'ONE\ntwo\nthree');
    const now = { ...opened, content: 'one\ntwo\nTHREE', color: 'green', version: 5 };
    s = follow(s, now);
    const out = toSave(s)!;
    expect(out.base).toBe(opened);
    expect(out.row).toMatchObject({ content: 'ONE\ntwo\nthree', color: 'yellow' });
    // What the sync engine (and the server) makes of it:
    const m = mergeNote(out.base, now, out.row);
    expect(m.overlap).toBe(false);
    expect(m.merged).toMatchObject({ content: 'ONE\ntwo\nTHREE', color: 'green', title: 'Plan' });
  });

  it('a field typed back to where it started is untouched again, and follows', () => {
    let s = edit(openEditor(opened), 'title', 'Plan!');
    s = edit(s, 'title', 'Plan');
    expect(touched(s)).toEqual([]);
    s = follow(s, { ...opened, title: 'Theirs', version: 5 });
    expect(s.values.title).toBe('Theirs');
  });

  it('a field started after a change followed has that change as its start', () => {
    let s = edit(openEditor(opened), 'color', 'pink');
    s = follow(s, { ...opened, content: 'theirs', version: 5 });
    s = edit(s, 'content', 'theirs, and mine');
    expect(touched(s).sort()).toEqual(['color', 'content']);
    expect(changedMeanwhile(s, { ...opened, content: 'theirs', version: 5 })).toEqual([]);
  });

  it('starts again from the note as saved when an AI draft is saved with the editor open', () => {
    const s = saved({ ...opened, title: 'AI title', version: 4 });
    expect(s.values.title).toBe('AI title');
    expect(touched(s)).toEqual([]);
  });
});
