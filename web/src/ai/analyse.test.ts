import { afterEach, describe, expect, it } from 'vitest';
import { setAiFetch } from '../api/ai';
import type { TrackerItem } from '../api/types';
import { analyse, anchor, applyRewrite, rewrite, rewriteField, segments, withField, type Target } from './analyse';

const note = (content: string): Target => ({ kind: 'note', boardId: 'b1', noteId: 'n1', title: 'Login', content });
const item = (summary: string, description?: string): Target => ({ kind: 'item', boardId: 'b1', item: { id: 'i1', key: 'CB-1', type: 'story', summary, description, updatedAt: '' } as TrackerItem });

describe('anchor', () => {
  it('finds the excerpt verbatim', () => expect(anchor(note('We need a login. Users log in.'), 'Users log in.')).toEqual({ field: 'content', start: 17, end: 30 }));
  it('gives null for advice about the whole text', () => expect(anchor(note('text'), '')).toBeNull());
  it('gives null for text that is not there', () => expect(anchor(note('We need a login.'), 'users log in')).toBeNull());
  it('looks in the summary first, then the description', () => {
    expect(anchor(item('Log in', 'Users log in with a code.'), 'log in')).toEqual({ field: 'description', start: 6, end: 12 });
    expect(anchor(item('Log in', 'Log in with a code.'), 'Log in')).toEqual({ field: 'summary', start: 0, end: 6 });
  });
});

describe('segments', () => {
  it('marks each anchored range with its suggestion', () => {
    const text = 'one two three four';
    const a = [anchor(note(text), 'three'), null, anchor(note(text), 'one')];
    expect(segments(text, a, 'content')).toEqual([{ text: 'one', suggestion: 2 }, { text: ' two ' }, { text: 'three', suggestion: 0 }, { text: ' four' }]);
  });
  it('skips a range that overlaps an earlier one', () => {
    const text = 'abcdef';
    const a = [{ field: 'content' as const, start: 0, end: 4 }, { field: 'content' as const, start: 2, end: 6 }];
    expect(segments(text, a, 'content')).toEqual([{ text: 'abcd', suggestion: 0 }, { text: 'ef' }]);
  });
  it('ignores anchors in other fields', () => {
    expect(segments('abc', [{ field: 'summary', start: 0, end: 1 }], 'description')).toEqual([{ text: 'abc' }]);
  });
});

describe('applyRewrite', () => {
  it('replaces only the anchored range', () => expect(applyRewrite('We need a login. Users log in.', { field: 'content', start: 17, end: 30 }, 'Users log in with a code.')).toBe('We need a login. Users log in with a code.'));
  it('replaces the whole text without an anchor', () => expect(applyRewrite('old', null, 'new')).toBe('new'));
});

describe('rewriteField', () => {
  it('is the content of a note', () => expect(rewriteField(note('x'), null)).toBe('content'));
  it('is the description of an item that has one', () => expect(rewriteField(item('s', 'd'), null)).toBe('description'));
  it('is the summary of an item without a description', () => expect(rewriteField(item('s'), null)).toBe('summary'));
  it('is the anchored field', () => expect(rewriteField(item('s', 'd'), { field: 'summary', start: 0, end: 1 })).toBe('summary'));
});

describe('withField', () => {
  it('changes one field of an item', () => {
    const t = withField(item('s', 'd'), 'summary', 'S') as Extract<Target, { kind: 'item' }>;
    expect([t.item.summary, t.item.description]).toEqual(['S', 'd']);
  });
});

describe('the requests', () => {
  const realFetch = setAiFetch(fetch);
  afterEach(() => void setAiFetch(realFetch));
  function answer(body: unknown) {
    const calls: { url: string; body: Record<string, unknown> }[] = [];
    setAiFetch(async (url, init) => {
      calls.push({ url: String(url), body: JSON.parse(String(init!.body)) });
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
    });
    return calls;
  }

  it('analyses a note through notes/analyze', async () => {
    const calls = answer({ suggestions: [{ sectionText: 'Users log in.', advice: 'Say how.', actions: [{ label: 'Name it', instruction: 'Use a code' }] }] });
    const s = await analyse(note('Users log in.'));
    expect(calls[0]).toEqual({ url: '/api/canvas/notes/analyze', body: { boardId: 'b1', noteId: 'n1', title: 'Login', content: 'Users log in.' } });
    expect(s).toEqual([{ sectionText: 'Users log in.', advice: 'Say how.', actions: [{ label: 'Name it', instruction: 'Use a code' }] }]);
  });

  it('rewrites the anchored section of a note and proposes the whole new content', async () => {
    const calls = answer({ rewritten: 'Users log in with a code.' });
    const t = note('We need a login. Users log in.');
    const p = await rewrite(t, anchor(t, 'Users log in.'), 'Use a code');
    expect(calls[0].url).toBe('/api/canvas/notes/rewrite');
    expect(calls[0].body).toEqual({ boardId: 'b1', noteId: 'n1', title: 'Login', content: 'We need a login. Users log in.', selectedText: 'Users log in.', instruction: 'Use a code' });
    expect(p).toEqual({ field: 'content', before: 'We need a login. Users log in.', after: 'We need a login. Users log in with a code.' });
  });

  it('rewrites a work item field through tracker/rewrite', async () => {
    const calls = answer({ rewritten: 'Log in with a one-time code' });
    const p = await rewrite(item('Log in'), null, 'Be specific');
    expect(calls[0].url).toBe('/api/canvas/tracker/rewrite');
    expect(calls[0].body).toMatchObject({ boardId: 'b1', field: 'summary', instruction: 'Be specific', item: { id: 'i1', key: 'CB-1', summary: 'Log in' } });
    expect(calls[0].body).not.toHaveProperty('selectedText');
    expect(p.after).toBe('Log in with a one-time code');
  });
});
