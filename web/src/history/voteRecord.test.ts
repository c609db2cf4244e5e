import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Frame } from '../api/types';
import { actionLabel, cells, goUnquote, isVoteAction, logActionText, parseVoteRecord, voteSummary } from './voteRecord';

// Vote records written by the server's persist.RenderVote (a throwaway Go
// program rendered these votes: testdata/vote-go.json), so the parser reads
// what the server really stores, escapes and all.
const fromGo = Object.fromEntries((JSON.parse(readFileSync(new URL('./testdata/vote-go.json', import.meta.url), 'utf8')) as { name: string; md: string }[]).map((r) => [r.name, r.md]));

const frame = (id: string, title: string): Frame => ({ id, title, x: 0, y: 0, w: 100, h: 100, color: 'gray', locked: false, updatedAt: '' });
const frames = new Map([['f1', frame('f1', 'Ideas')]]);

describe('parseVoteRecord', () => {
  it('reads a started vote: its fields, no results', () => {
    const r = parseVoteRecord(fromGo.start);
    expect(r).toEqual({
      vote: 'vK3M9QX2A7TB4LN8C',
      state: 'open',
      scope: { kind: 'frame', frameId: 'f1' },
      scopeText: 'frame f1',
      perPerson: 3,
      perNote: 1,
      anonymous: false,
      endsWithTimer: false,
      startedBy: 'ada@example.com',
      startedAt: '2026-11-22T10:01:00Z',
      voters: 0,
      dots: 0,
      results: [],
    });
  });

  it('reads the ranking of a revealed vote: shared ranks, escaped pipes and backslashes, parentheses in a title, deleted and untitled notes', () => {
    const r = parseVoteRecord(fromGo.revealed);
    expect(r.state).toBe('revealed');
    expect(r.scope).toEqual({ kind: 'type', type: 'idea' });
    expect(r.startedBy).toBe('ädä "q"@example.com');
    expect([r.perNote, r.endsWithTimer, r.voters, r.dots]).toEqual([2, true, 3, 9]);
    expect(r.results).toEqual([
      { rank: 1, title: 'Ship the sync fix', noteId: 'n7', count: 3, voters: ['ana@example.com', 'bo@example.com'], deleted: false },
      { rank: 2, title: 'Retro | actions \\ back (v2)', noteId: 'n2', count: 2, voters: ['ana@example.com'], deleted: false },
      { rank: 2, title: 'Two lines and tabs 🎉', noteId: 'n|3', count: 2, voters: ['cy@example.com'], deleted: false },
      { rank: 4, title: '(deleted)', noteId: 'gone', count: 1, voters: ['bo@example.com'], deleted: true },
      { rank: 4, title: 'Untitled note', noteId: 'empty', count: 1, voters: ['cy@example.com'], deleted: false },
    ]);
  });

  it('reads an anonymous vote with no voters column, and a vote nobody voted in', () => {
    const a = parseVoteRecord(fromGo.anonymous);
    expect(a.anonymous).toBe(true);
    expect(a.scope).toEqual({ kind: 'all' });
    expect(a.results).toEqual([{ rank: 1, title: 'Ship the sync fix', noteId: 'n7', count: 3, voters: [], deleted: false }]);
    expect(parseVoteRecord(fromGo.nobody).results).toEqual([]);
  });

  it('skips fields it does not know and reads CR LF', () => {
    const md = fromGo.start.replace('dots: 0\n', 'dots: 0\nlater: "a newer field"\n').replaceAll('\n', '\r\n');
    expect(parseVoteRecord(md).vote).toBe('vK3M9QX2A7TB4LN8C');
  });

  it('keeps a scope it does not know as the record words it', () => {
    const r = parseVoteRecord(fromGo.start.replace('"frame f1"', '"tag urgent"'));
    expect(r.scope).toBeNull();
    expect(voteSummary('start_vote', r, frames)).toBe('on tag urgent · 3 dots each');
  });

  it.each([
    ['a note snapshot', "---\nid: 'n1'\ntitle: 'x'\n---\n\ntext\n"],
    ['a rename record', "---\nname: 'Board'\n---\n"],
    ['plain text', 'hello'],
    ['an unclosed front matter', '---\nvote: "v1"\n'],
  ])('refuses %s', (_, md) => {
    expect(() => parseVoteRecord(md)).toThrow(/Not a vote record/);
  });
});

describe('goUnquote', () => {
  it.each([
    ['"plain"', 'plain'],
    ['"a\\"b\\\\c"', 'a"b\\c'],
    ['"\\n\\t\\a\\v\\x01"', '\n\t\x07\v\x01'],
    ['"\\u2028\\U0001f600"', '\u2028😀'],
    ['"ünïcode"', 'ünïcode'],
  ])('%s', (q, want) => {
    expect(goUnquote(q)).toBe(want);
  });

  it.each(['plain', '"open', '"a"b"', '"\\q"', '"\\x1"', '"\\U00110000"', '"\\'])('refuses %s', (q) => {
    expect(goUnquote(q)).toBeNull();
  });
});

describe('cells', () => {
  it('splits at unescaped pipes only', () => {
    expect(cells('| 1 | a \\| b \\\\ (n\\|2) | 3 |  |')).toEqual(['1', 'a | b \\ (n|2)', '3', '']);
  });
});

describe('labels', () => {
  it('names every action, the vote ones in words, and never says "undefined"', () => {
    expect(logActionText).toEqual({
      create_note: 'Created',
      update_note: 'Edited',
      delete_note: 'Deleted',
      rename_board: 'Renamed',
      start_vote: 'Vote started',
      reveal_vote: 'Vote results',
    });
    expect(actionLabel('reveal_vote')).toBe('Vote results');
    expect(actionLabel('close_vote')).toBe('close vote');
  });

  it('tells the vote actions from the others', () => {
    expect(['start_vote', 'reveal_vote', 'delete_note', 'rename_board', ''].map(isVoteAction)).toEqual([true, true, false, false, false]);
  });

  it('summarises a start: the scope by name, the dots, the options', () => {
    expect(voteSummary('start_vote', parseVoteRecord(fromGo.start), frames)).toBe('on the notes in “Ideas” · 3 dots each');
    expect(voteSummary('start_vote', parseVoteRecord(fromGo.start), new Map())).toBe('on the notes of a deleted frame · 3 dots each');
    expect(voteSummary('start_vote', parseVoteRecord(fromGo.revealed), frames)).toBe('on the idea notes · 3 dots each · up to 2 on a note · ends with the timer');
    expect(voteSummary('start_vote', parseVoteRecord(fromGo.anonymous), frames)).toBe('on all notes · 3 dots each · up to 2 on a note · anonymous · ends with the timer');
  });

  it('summarises results: the totals and the first note', () => {
    expect(voteSummary('reveal_vote', parseVoteRecord(fromGo.revealed), frames)).toBe('9 dots from 3 people · first: Ship the sync fix (3 dots)');
    expect(voteSummary('reveal_vote', parseVoteRecord(fromGo.anonymous), frames)).toBe('3 dots from 1 person · first: Ship the sync fix (3 dots)');
    expect(voteSummary('reveal_vote', parseVoteRecord(fromGo.nobody), frames)).toBe('Nobody voted.');
  });
});
