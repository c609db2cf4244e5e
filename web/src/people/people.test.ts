import { describe, expect, it } from 'vitest';
import type { Presence } from '../sync/presence';
import { initialsOf, peopleOf, personLabel, shownOf, summaryLabel } from './people';

const me = { id: 'me1', email: 'ada@x.io', color: '#000' };
function peers(...ps: (Partial<Presence> & { id: string; email: string })[]): Map<string, Presence> {
  return new Map(ps.map((p) => [p.id, { color: '#111', seen: 0, ...p }]));
}

describe('initialsOf', () => {
  it.each([
    ['ana.lopez@x.io', 'AL'],
    ['ana@x.io', 'An'],
    ['b@x.io', 'B'],
    ['jean-luc+work@x.io', 'JL'],
    ['noatsign', 'No'],
  ])('%s → %s', (email, want) => expect(initialsOf(email)).toBe(want));
});

describe('peopleOf', () => {
  it('puts me first and dedupes connections by e-mail (my other tab is me)', () => {
    const p = peopleOf({ me, peers: peers({ id: 'c1', email: 'ben@x.io' }, { id: 'c2', email: 'ben@x.io' }, { id: 'c3', email: 'ada@x.io' }, { id: 'c4', email: 'cat@x.io' }), count: 4 });
    expect(p.list.map((x) => [x.email, x.me, x.ids])).toEqual([
      ['ada@x.io', true, []],
      ['ben@x.io', false, ['c1', 'c2']],
      ['cat@x.io', false, ['c4']],
    ]);
    expect(p.total).toBe(3);
    expect(p.unlisted).toBe(0);
    expect(summaryLabel(p)).toBe('3 people here');
    expect(personLabel(p.list[0])).toBe('ada@x.io (you)');
  });

  it('is idle only when every connection is idle, and follows an active connection first', () => {
    const p = peopleOf({ me, peers: peers({ id: 'c1', email: 'ben@x.io', idle: true }, { id: 'c2', email: 'ben@x.io' }, { id: 'c3', email: 'abe@x.io', idle: true }), count: 3 });
    const ben = p.list.find((x) => x.email === 'ben@x.io')!;
    expect(ben.idle).toBe(false);
    expect(ben.ids).toEqual(['c2', 'c1']);
    const abe = p.list.find((x) => x.email === 'abe@x.io')!;
    expect(abe.idle).toBe(true);
    expect(personLabel(abe)).toBe('abe@x.io, idle');
    // Active before idle, though abe sorts first by name.
    expect(p.list.map((x) => x.email)).toEqual(['ada@x.io', 'ben@x.io', 'abe@x.io']);
  });

  it('counts the connections the server has and the page does not hold yet', () => {
    const p = peopleOf({ me, peers: peers({ id: 'c1', email: 'ben@x.io' }), count: 150 });
    expect(p.unlisted).toBe(149);
    expect(p.total).toBe(151);
  });

  it('shows nobody before hello', () => {
    expect(peopleOf({ me: null, peers: new Map(), count: 0 })).toEqual({ list: [], unlisted: 0, total: 0 });
  });
});

describe('shownOf', () => {
  const p = peopleOf({ me, peers: peers({ id: 'c1', email: 'b@x.io' }, { id: 'c2', email: 'c@x.io' }, { id: 'c3', email: 'd@x.io' }, { id: 'c4', email: 'e@x.io' }), count: 4 });
  it('shows everyone when they fit, else one fewer and +N', () => {
    expect(shownOf(p, 5)).toMatchObject({ more: 0 });
    expect(shownOf(p, 5).shown).toHaveLength(5);
    expect(shownOf(p, 4).shown.map((x) => x.email)).toEqual(['ada@x.io', 'b@x.io', 'c@x.io']);
    expect(shownOf(p, 4).more).toBe(2);
    expect(shownOf(p, 2)).toMatchObject({ more: 4 });
    expect(shownOf(p, 1).shown).toHaveLength(1);
  });
});
