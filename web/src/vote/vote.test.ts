import { describe, expect, it } from 'vitest';
import type { Frame, MyVotes, Note, Vote } from '../api/types';
import { addBlocked, applyDelta, chipText, counts, dotsLeft, endedByTimer, inScope, itemsBySummary, shownVote, myCount, parseScope, parseStart, ranked, scopeIds, scopeLabel, topPicks, totalText } from './vote';

const note = (id: string, x: number, y: number, more: Partial<Note> = {}): Note => ({ id, title: id.toUpperCase(), content: '', x, y, color: 'yellow', type: 'sticky', updatedAt: '', ...more });
const frame = (id: string, x: number, y: number, w: number, h: number, more: Partial<Frame> = {}): Frame => ({ id, title: 'Ideas', x, y, w, h, color: 'blue', locked: false, updatedAt: '', ...more });
const vote = (more: Partial<Vote> = {}): Vote => ({ id: 'v1', state: 'open', scope: { kind: 'all' }, perPerson: 3, perNote: 1, anonymous: true, endsWithTimer: false, startedBy: 'ana@example.com', startedAt: 0, voters: 0, dots: 0, ...more });
const mine = (m: Record<string, number>, left: number, voteId = 'v1'): MyVotes => ({ voteId, mine: m, left });

describe('inScope', () => {
  const frames = new Map([['f1', frame('f1', 0, 0, 500, 400)]]);
  it('takes every live note for all', () => {
    expect(inScope({ kind: 'all' }, note('a', 9e5, 9e5), frames)).toBe(true);
    expect(inScope({ kind: 'all' }, note('a', 0, 0, { deletedAt: '2026-01-01' }), frames)).toBe(false);
  });
  it('takes the notes whose centre is inside the frame', () => {
    const s = { kind: 'frame', frameId: 'f1' } as const;
    expect(inScope(s, note('in', 10, 10), frames)).toBe(true);
    // 220×160: the centre of a note at (380, 300) is (490, 380), inside; at (400, 0) it is (510, 80), outside.
    expect(inScope(s, note('edge', 380, 300), frames)).toBe(true);
    expect(inScope(s, note('out', 400, 0), frames)).toBe(false);
    // Its own size counts: a small note at (400, 0) has its centre inside.
    expect(inScope(s, note('small', 400, 0, { w: 60, h: 40 }), frames)).toBe(true);
    expect(inScope({ kind: 'frame', frameId: 'gone' }, note('in', 10, 10), frames)).toBe(false);
    expect(inScope(s, note('in', 10, 10), new Map([['f1', frame('f1', 0, 0, 500, 400, { deletedAt: 'x' })]]))).toBe(false);
  });
  it('takes the notes of the type, an untyped note being a sticky', () => {
    expect(inScope({ kind: 'type', type: 'idea' }, note('a', 0, 0, { type: 'idea' }), frames)).toBe(true);
    expect(inScope({ kind: 'type', type: 'idea' }, note('a', 0, 0, { type: 'risk' }), frames)).toBe(false);
    expect(inScope({ kind: 'type', type: 'sticky' }, note('a', 0, 0, { type: '' }), frames)).toBe(true);
  });
  it('lists the ids of a scope', () => {
    const notes = [note('a', 10, 10), note('b', 2000, 0), note('c', 20, 20, { type: 'idea' })];
    expect([...scopeIds({ kind: 'frame', frameId: 'f1' }, notes, frames)]).toEqual(['a', 'c']);
    expect([...scopeIds({ kind: 'type', type: 'idea' }, notes, frames)]).toEqual(['c']);
  });
  it('names the scope', () => {
    expect(scopeLabel({ kind: 'all' }, frames)).toBe('all notes');
    expect(scopeLabel({ kind: 'frame', frameId: 'f1' }, frames)).toBe('the notes in “Ideas”');
    expect(scopeLabel({ kind: 'type', type: 'risk' }, frames)).toBe('the risk notes');
  });
});

describe('the chip and totals', () => {
  it('counts my dots left, all of them before the server answers', () => {
    expect(chipText(vote(), null)).toBe('Voting · 3 of 3 dots left');
    expect(chipText(vote(), mine({ a: 1 }, 2))).toBe('Voting · 2 of 3 dots left');
    expect(chipText(vote({ perPerson: 1 }), mine({ a: 1 }, 0))).toBe('Voting · 0 of 1 dot left');
    // Mine of another (older) vote is not this vote's.
    expect(dotsLeft(vote(), mine({ a: 1 }, 2, 'v0'))).toBe(3);
    expect(chipText(vote({ state: 'closed' }), null)).toBe('Voting closed');
    expect(chipText(vote({ state: 'revealed' }), null)).toBe('Results');
  });
  it('says the totals in words', () => {
    expect(totalText({ dots: 31, voters: 12 })).toBe('31 dots from 12 people');
    expect(totalText({ dots: 1, voters: 1 })).toBe('1 dot from 1 person');
    expect(totalText({ dots: 0, voters: 0 })).toBe('0 dots from 0 people');
  });
});

describe('addBlocked', () => {
  it('lets me vote on a note in scope with dots left, up to the per-note limit', () => {
    expect(addBlocked(vote(), mine({}, 3), 'a', true)).toBe('');
    expect(addBlocked(vote(), mine({ a: 1 }, 2), 'a', true)).toMatch(/already/);
    expect(addBlocked(vote({ perNote: 2 }), mine({ a: 1 }, 2), 'a', true)).toBe('');
    expect(addBlocked(vote({ perNote: 2 }), mine({ a: 2 }, 1), 'a', true)).toMatch(/At most 2/);
    expect(addBlocked(vote(), mine({ a: 1, b: 1, c: 1 }, 0), 'd', true)).toMatch(/used all your dots/);
    expect(addBlocked(vote(), mine({}, 3), 'a', false)).toMatch(/not part of the vote/);
    expect(addBlocked(vote({ state: 'closed' }), mine({}, 3), 'a', true)).toMatch(/closed/);
  });
  it('counts my dots per note', () => {
    expect(myCount(vote(), mine({ a: 2 }, 1), 'a')).toBe(2);
    expect(myCount(vote(), mine({ a: 2 }, 1), 'b')).toBe(0);
    expect(myCount(vote(), null, 'a')).toBe(0);
  });
  it('applies a dot put and taken back as the server counts it', () => {
    const m = applyDelta(mine({}, 3), 'a', 1);
    expect(m).toEqual(mine({ a: 1 }, 2));
    expect(applyDelta(m, 'a', 1)).toEqual(mine({ a: 2 }, 1));
    expect(applyDelta(m, 'a', -1)).toEqual(mine({}, 3));
  });
});

describe('results', () => {
  const notes = new Map([
    ['a', note('a', 0, 0)],
    ['b', note('b', 0, 0, { title: '  ' })],
    ['c', note('c', 0, 0)],
    ['d', note('d', 0, 0, { deletedAt: 'x' })],
  ]);
  const revealed = vote({
    state: 'revealed',
    anonymous: false,
    dots: 9,
    voters: 3,
    results: [
      { noteId: 'c', count: 2, voters: ['x@e.com', 'y@e.com'] },
      { noteId: 'a', count: 4, voters: ['x@e.com'] },
      { noteId: 'd', count: 2 },
      { noteId: 'b', count: 1 },
      { noteId: 'e', count: 0 },
    ],
  });
  it('ranks by count, ties sharing a place, with titles and voters', () => {
    const r = ranked(revealed, notes);
    expect(r.map((x) => [x.title, x.count, x.rank])).toEqual([
      ['A', 4, 1],
      ['C', 2, 2],
      ['D', 2, 2],
      ['Untitled note', 1, 4],
    ]);
    expect(r[1].voters).toEqual(['x@e.com', 'y@e.com']);
    expect(r[2].deleted).toBe(true);
  });
  it('shows no voters of an anonymous vote, whatever arrives', () => {
    expect(ranked({ ...revealed, anonymous: true }, notes)[0].voters).toEqual([]);
  });
  it('puts counts on the notes only once revealed', () => {
    expect([...counts(revealed)]).toEqual([
      ['c', 2],
      ['a', 4],
      ['d', 2],
      ['b', 1],
    ]);
    expect(counts({ ...revealed, state: 'closed' }).size).toBe(0);
  });
  it('picks the top three live notes for work items, and those tied with the third', () => {
    const r = ranked(revealed, notes);
    expect([...topPicks(r)]).toEqual(['a', 'c', 'b']);
    expect([...topPicks(r, 1)]).toEqual(['a']);
    const tied = ranked({ ...revealed, results: [1, 2, 3, 4].map((i) => ({ noteId: `n${i}`, count: i === 1 ? 5 : 2 })) }, new Map());
    expect(topPicks(tied).size).toBe(0); // all deleted
    const live = new Map(['n1', 'n2', 'n3', 'n4'].map((id) => [id, note(id, 0, 0)]));
    expect([...topPicks(ranked({ ...revealed, results: [1, 2, 3, 4].map((i) => ({ noteId: `n${i}`, count: i === 1 ? 5 : 2 })) }, live))]).toEqual(['n1', 'n2', 'n3', 'n4']);
  });
});

describe('a vote that ends with the timer', () => {
  const tied = vote({ endsWithTimer: true });
  const running = (endsAt: number) => ({ state: 'running' as const, durationMs: 60_000, endsAt, startedBy: 'a', updatedAt: 0 });
  const paused = (remainingMs: number) => ({ state: 'paused' as const, durationMs: 60_000, remainingMs, startedBy: 'a', updatedAt: 0 });
  it('ends when the timer has no time left, by the server clock', () => {
    expect(endedByTimer(tied, running(10_000), 9_999)).toBe(false);
    expect(endedByTimer(tied, running(10_000), 10_000)).toBe(true);
    expect(endedByTimer(tied, running(10_000), null)).toBe(false); // the clock is not known yet
    expect(endedByTimer(tied, paused(5_000), 1e13)).toBe(false);
    expect(endedByTimer(tied, paused(0), 0)).toBe(true);
    expect(endedByTimer(tied, null, 0)).toBe(true); // stopped
  });
  it('never ends a vote not tied to it, or one already closed', () => {
    expect(endedByTimer(vote(), null, 0)).toBe(false);
    expect(endedByTimer({ ...tied, state: 'revealed' }, null, 0)).toBe(false);
  });
  it('shows an ended vote as closed', () => {
    expect(shownVote(tied, null, 0)?.state).toBe('closed');
    expect(chipText(shownVote(tied, null, 0)!, null)).toBe('Voting closed');
    expect(shownVote(tied, running(10_000), 0)).toBe(tied);
    expect(shownVote(null, null, 0)).toBeNull();
  });
});

describe('itemsBySummary', () => {
  it('maps the live items by summary, so a note made an item is not offered again', () => {
    const item = (id: string, key: string, summary: string, deletedAt?: string) => [id, { id, key, type: 'task', summary, updatedAt: '', deletedAt }] as const;
    const m = itemsBySummary(new Map([item('1', 'CB-1', 'Idea A'), item('2', 'CB-2', 'Idea B', 'x'), item('3', 'CB-3', '')]));
    expect([...m]).toEqual([['Idea A', 'CB-1']]);
  });
});

describe('parseStart', () => {
  const form = { perPerson: '3', perNote: '1', anonymous: true, scope: 'all', endsWithTimer: false };
  it('reads the defaults into the start action', () => {
    expect(parseStart(form)).toEqual({ action: { action: 'start', perPerson: 3, perNote: 1, anonymous: true, scope: { kind: 'all' }, endsWithTimer: false } });
    expect(parseStart({ ...form, scope: 'frame:f1', anonymous: false, endsWithTimer: true })).toMatchObject({ action: { scope: { kind: 'frame', frameId: 'f1' }, anonymous: false, endsWithTimer: true } });
    expect(parseScope('type:idea')).toEqual({ kind: 'type', type: 'idea' });
  });
  it.each([
    ['0', '1', 'perPerson'],
    ['100', '1', 'perPerson'],
    ['2.5', '1', 'perPerson'],
    ['', '1', 'perPerson'],
    ['3', '0', 'perNote'],
    ['3', '4', 'perNote'],
    ['3', 'x', 'perNote'],
  ])('refuses %j dots each, %j per note, naming %s', (perPerson, perNote, field) => {
    expect(parseStart({ ...form, perPerson, perNote })).toMatchObject({ field });
  });
  it('takes the edges', () => {
    expect(parseStart({ ...form, perPerson: '99', perNote: '99' })).toHaveProperty('action');
    expect(parseStart({ ...form, perPerson: '1', perNote: '1' })).toHaveProperty('action');
  });
});
