import { describe, expect, it } from 'vitest';
import type { BoardState } from '../api/types';
import { SyncClient } from '../sync/client';
import { MemoryStore } from '../sync/store';
import { FakeClock, FakeServer, note } from '../sync/testing';
import { emptyState, recover } from './recovery';

const snap: BoardState = {
  board: { id: 'b1', name: 'Recovered', version: 7, updatedAt: '2026-01-01T00:00:00Z' },
  notes: [note('a'), { ...note('b'), content: 'bee' }],
  trackerItems: [],
};

function setup(snapshots: { key: string; timestamp: string }[]) {
  const server = new FakeServer();
  const client = new SyncClient({ boardId: 'b1', transport: server, store: new MemoryStore(), clock: new FakeClock(), newKey: () => crypto.randomUUID() });
  const asked: string[] = [];
  const api = {
    listSnapshots: async () => ({ snapshots }),
    restoreBoard: async (_b: string, key: string) => (asked.push(key), snap),
  };
  return { server, client, api, asked };
}

describe('recover', () => {
  it('rebuilds an empty board from the latest snapshot, as pushes', async () => {
    const { server, client, api, asked } = setup([
      { key: 'snapshots/2026-02-01T00:00:00.000000000Z.md', timestamp: '2026-02-01T00:00:00.000000000Z' },
      { key: 'snapshots/2026-01-01T00:00:00.000000000Z.md', timestamp: '2026-01-01T00:00:00.000000000Z' },
    ]);
    await client.start();
    expect(emptyState(client.getSnapshot())).toBe(true);
    expect(await recover(api, 'b1', client)).toBe('snapshots/2026-02-01T00:00:00.000000000Z.md');
    expect(asked).toEqual(['snapshots/2026-02-01T00:00:00.000000000Z.md']);
    await client.flush();
    expect([...server.rows.keys()].sort()).toEqual(['a', 'b']);
    expect(client.getSnapshot().name).toBe('Recovered');
    client.close();
  });

  it('does nothing on a board with no snapshot', async () => {
    const { server, client, api } = setup([]);
    await client.start();
    expect(await recover(api, 'b1', client)).toBeNull();
    expect(server.rows.size).toBe(0);
    client.close();
  });
});
