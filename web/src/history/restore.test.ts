import { describe, expect, it } from 'vitest';
import type { BoardState } from '../api/types';
import { SyncClient } from '../sync/client';
import { MemoryStore } from '../sync/store';
import { FakeClock, FakeServer, note } from '../sync/testing';
import { applyPlan, describePlan, planRestore } from './restore';

const past = (notes: BoardState['notes'], name = 'Board'): BoardState => ({
  board: { id: 'b1', name, version: 3, updatedAt: '2026-01-01T00:00:00Z' },
  notes,
  trackerItems: [],
});

describe('planRestore', () => {
  it('finds the notes added, changed and removed, ignoring versions and times', () => {
    const now = new Map([
      ['same', { ...note('same'), version: 9, updatedAt: '2026-11-01T00:00:00Z' }],
      ['edited', { ...note('edited'), content: 'new' }],
      ['extra', note('extra')],
    ]);
    const p = planRestore({ notes: now, items: new Map(), name: 'Board' }, past([{ ...note('same'), version: 2 }, { ...note('edited'), content: 'old' }, note('gone')]));
    expect(p.notes.add.map((n) => n.id)).toEqual(['gone']);
    expect(p.notes.change.map((n) => n.id)).toEqual(['edited']);
    expect(p.notes.remove).toEqual(['extra']);
    expect(p.rename).toBeNull();
    expect(describePlan(p)).toBe('This will add 1 note, change 1 note, remove 1 note.');
  });

  it('says when nothing would change', () => {
    const p = planRestore({ notes: new Map([['a', note('a')]]), items: new Map(), name: 'B' }, past([note('a')], 'B'));
    expect(describePlan(p)).toBe('The board already equals this snapshot: nothing will change.');
  });

  it('applied through the sync client, makes the board equal the snapshot', async () => {
    const server = new FakeServer();
    server.apply({ notes: { upserted: [note('keep'), { ...note('edit'), content: 'now' }, note('drop')], deleted: [] } });
    const client = new SyncClient({ boardId: 'b1', transport: server, store: new MemoryStore(), clock: new FakeClock(), newKey: () => crypto.randomUUID() });
    await client.start();
    const target = past([note('keep'), { ...note('edit'), content: 'then' }, note('back')], 'Old name');
    const s = client.getSnapshot();
    applyPlan(client, planRestore(s, target));
    await client.flush();
    const after = client.getSnapshot();
    expect([...after.notes.keys()].sort()).toEqual(['back', 'edit', 'keep']);
    expect(after.notes.get('edit')!.content).toBe('then');
    expect(after.name).toBe('Old name');
    expect(after.pending).toBe(0);
    expect([...server.rows.keys()].sort()).toEqual(['back', 'edit', 'keep']);
    client.close();
  });
});
