import { describe, expect, it } from 'vitest';
import type { Note, TrackerItem } from '../../api/types';
import { note } from '../../sync/testing';
import { cut, MAX_CONTEXT_NOTES } from '../boardContext';
import { buildBoardState, currentPhase, CONTEXT_CHARS } from './context';

const map = <T extends { id: string }>(rows: T[]) => new Map(rows.map((r) => [r.id, r]));

describe('buildBoardState', () => {
  it('sends each note with its first 600 code points and nothing of other clients', () => {
    const long = '😀'.repeat(CONTEXT_CHARS + 10);
    const s = buildBoardState({ name: 'Launch', notes: map([note('n1', { title: 'T', content: long, x: 5, y: 6, owner: 'x' })]), items: new Map() });
    expect(s.name).toBe('Launch');
    expect(s.notes).toEqual([{ id: 'n1', title: 'T', content: '😀'.repeat(CONTEXT_CHARS), color: 'yellow', type: 'sticky', x: 5, y: 6 }]);
    expect(s.trackerItems).toBeUndefined();
  });

  it('keeps the 2,000 most recently changed notes of a bigger board', () => {
    const notes: Note[] = [];
    for (let i = 0; i < MAX_CONTEXT_NOTES + 5; i++) notes.push(note(`n${i}`, { updatedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() }));
    const s = buildBoardState({ name: '', notes: map(notes), items: new Map() });
    expect(s.notes).toHaveLength(MAX_CONTEXT_NOTES);
    const ids = new Set(s.notes.map((n) => n.id));
    for (let i = 0; i < 5; i++) expect(ids.has(`n${i}`)).toBe(false);
    expect(ids.has(`n${MAX_CONTEXT_NOTES + 4}`)).toBe(true);
  });

  it('sends work items with their own fields', () => {
    const item: TrackerItem = { id: 'i1', key: 'CB-1', type: 'story', summary: 'Log in', description: 'd'.repeat(700), status: 'todo', updatedAt: '', priority: 'high' };
    const s = buildBoardState({ name: '', notes: new Map(), items: map([item]) });
    expect(s.trackerItems).toEqual([{ id: 'i1', key: 'CB-1', type: 'story', summary: 'Log in', description: 'd'.repeat(600), status: 'todo' }]);
  });
});

describe('currentPhase', () => {
  it('is the current phase with its name and description, or null', () => {
    const phases = { phases: [{ id: 'p1', name: 'Discovery', description: 'Learn', color: 'red' }, { id: 'p2', name: 'Build' }], currentPhaseId: 'p1' };
    expect(currentPhase(phases)).toEqual({ id: 'p1', name: 'Discovery', description: 'Learn' });
    expect(currentPhase({ ...phases, currentPhaseId: '' })).toBeNull();
    expect(currentPhase(undefined)).toBeNull();
    expect(currentPhase({ phases: [{ id: 'p9' }], currentPhaseId: 'p9' })).toEqual({ id: 'p9', name: 'p9' });
  });
});

describe('cut', () => {
  it('counts code points', () => {
    expect(cut('a😀b', 2)).toBe('a😀');
    expect(cut('abc', 5)).toBe('abc');
  });
});
