import { describe, expect, it } from 'vitest';
import 'fake-indexeddb/auto';
import { SyncClient, MAX_UPSERTS } from './client';
import { MemoryStore, type LocalStore } from './store';
import { IdbStore } from './idbStore';
import { FakeClock, FakeLive, FakeServer, httpError, note, settle } from './testing';

let keyN = 0;
function setup(o: { store?: LocalStore; server?: FakeServer; live?: FakeLive } = {}) {
  const server = o.server ?? new FakeServer();
  const store = o.store ?? new MemoryStore();
  const clock = new FakeClock();
  const live = o.live ?? new FakeLive();
  const client = new SyncClient({ boardId: 'b1', transport: server, store, live, clock, newKey: () => `key-${++keyN}` });
  return { server, store, clock, live, client };
}

describe('SyncClient', () => {
  it('loads, pulls the board, then goes live', async () => {
    const { server, client, live } = setup();
    server.apply({ notes: { upserted: [note('n1')], deleted: [] } });
    await client.start();
    const s = client.getSnapshot();
    expect(s.version).toBe(1);
    expect([...s.notes.keys()]).toEqual(['n1']);
    expect(server.pulls).toEqual([0]);
    expect(live.connected).toBe(1);
  });

  it('pushes an edit with an idempotency key and takes the new version', async () => {
    const { server, client } = setup();
    await client.start();
    client.upsertNote(note('n1', { title: 'Hello' }));
    expect(client.getSnapshot().pending).toBe(1);
    await settle();
    expect(server.pushes).toHaveLength(1);
    expect(server.pushes[0].key).toMatch(/^key-/);
    expect(server.pushes[0].body.notes.upserted[0].title).toBe('Hello');
    const s = client.getSnapshot();
    expect(s.pending).toBe(0);
    expect(s.version).toBe(1);
    expect(s.notes.get('n1')?.title).toBe('Hello');
  });

  it('renames the board, and keeps the name once pushed', async () => {
    const { server, client } = setup();
    await client.start();
    client.rename('Roadmap');
    expect(client.getSnapshot().name).toBe('Roadmap');
    await settle();
    expect(server.pushes[0].body.board?.name).toBe('Roadmap');
    expect(client.getSnapshot().pending).toBe(0);
    expect(client.getSnapshot().name).toBe('Roadmap');
  });

  it('keeps fields it does not know', async () => {
    const { server, client } = setup();
    server.apply({ notes: { upserted: [note('n1', { owner: 'other-client', tags: ['a'] })], deleted: [] } });
    await client.start();
    const n = client.getSnapshot().notes.get('n1')!;
    client.upsertNote({ ...n, title: 'Edited' });
    await settle();
    const sent = server.pushes[0].body.notes.upserted[0];
    expect(sent.owner).toBe('other-client');
    expect(sent.tags).toEqual(['a']);
    expect(sent.version).toBeUndefined();
  });

  it('coalesces edits of one row that wait together', async () => {
    const { server, client } = setup();
    server.offline = true;
    await client.start();
    client.upsertNote(note('n1', { title: 'a' }));
    client.upsertNote(note('n1', { title: 'b' }));
    client.deleteNote('n2');
    client.upsertNote(note('n2', { title: 'back' }));
    expect(client.getSnapshot().pending).toBe(2);
  });

  it('splits a large queue into pushes of at most 500 upserts, in order', async () => {
    const { server, client, clock } = setup();
    server.offline = true;
    await client.start();
    client.batch(() => {
      for (let i = 0; i < 1201; i++) client.upsertNote(note(`n${i}`));
    });
    await settle();
    server.offline = false;
    server.pushes = [];
    clock.advance(clock.nextDelay!);
    await settle();
    expect(server.pushes.map((p) => p.body.notes.upserted.length)).toEqual([MAX_UPSERTS, MAX_UPSERTS, 201]);
    expect(new Set(server.pushes.map((p) => p.key)).size).toBe(3);
    expect(server.pushes[2].body.notes.upserted.at(-1)!.id).toBe('n1200');
    expect(client.getSnapshot().pending).toBe(0);
    expect(server.rows.size).toBe(1201);
  });

  it('retries a failed push after a backoff, with the same key, and applies it once', async () => {
    const { server, client, clock } = setup();
    await client.start();
    // The push is applied but the answer is lost (a timeout or a dropped connection).
    const realPush = server.push.bind(server);
    let lost = true;
    server.push = async (id, body, key) => {
      const r = await realPush(id, body, key);
      if (lost) {
        lost = false;
        throw httpError(0, 'network');
      }
      return r;
    };
    client.upsertNote(note('n1'));
    await settle();
    expect(server.pushes).toHaveLength(1);
    expect(client.getSnapshot().pending).toBe(1);
    const delay = clock.nextDelay!;
    expect(delay).toBeGreaterThanOrEqual(500);
    expect(delay).toBeLessThanOrEqual(1000);
    clock.advance(delay);
    await settle();
    expect(server.pushes).toHaveLength(2);
    expect(server.pushes[1].key).toBe(server.pushes[0].key);
    expect(server.version).toBe(1); // replayed, not applied twice
    expect(client.getSnapshot().pending).toBe(0);
  });

  it('pushes at once when the live channel comes back, without waiting for the backoff', async () => {
    const { server, client, clock, live } = setup();
    await client.start();
    server.offline = true;
    client.upsertNote(note('n1'));
    await settle();
    expect(clock.pendingTimers).toBe(1);
    server.offline = false;
    live.status('online');
    await settle();
    expect(client.getSnapshot().pending).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('backs off longer after each failure and honours Retry-After', async () => {
    const { server, client, clock } = setup();
    await client.start();
    server.failPush = [httpError(503), httpError(503), httpError(429, 'slow down', undefined, 20)];
    client.upsertNote(note('n1'));
    await settle();
    const d1 = clock.nextDelay!;
    clock.advance(d1);
    await settle();
    const d2 = clock.nextDelay!;
    clock.advance(d2);
    await settle();
    const d3 = clock.nextDelay!;
    expect(d2).toBeGreaterThan(d1);
    expect(d3).toBeGreaterThanOrEqual(20_000);
    clock.advance(d3);
    await settle();
    expect(client.getSnapshot().pending).toBe(0);
  });

  it('rebases on a pull: a newer server row wins, a newer local edit stays', async () => {
    const { server, client, clock } = setup();
    await client.start();
    server.offline = true;
    client.upsertNote(note('old', { title: 'mine, early' }));
    clock.advance(60_000);
    client.upsertNote(note('new', { title: 'mine, late' }));
    await settle();
    // Meanwhile someone else edited both, between our two edits.
    const between = new Date(clock.now() - 30_000).toISOString();
    server.offline = false;
    server.apply({ notes: { upserted: [note('old', { title: 'theirs', updatedAt: between }), note('new', { title: 'theirs', updatedAt: between })], deleted: [] } });
    server.failPush = [httpError(503)]; // keep our edits unsent for the pull
    await client.pull();
    const s = client.getSnapshot();
    expect(s.notes.get('old')?.title).toBe('theirs');
    expect(s.notes.get('new')?.title).toBe('mine, late');
    expect(s.pending).toBe(1);
  });

  it('replaces its copy on a reset and keeps unsent edits', async () => {
    const { server, client, live } = setup();
    server.apply({ notes: { upserted: [note('gone'), note('kept')], deleted: [] } });
    await client.start();
    server.offline = true;
    client.upsertNote(note('mine'));
    await settle();
    live.emit({ type: 'changes', reset: true, since: 1, notes: [{ ...note('kept'), version: 9 }], deletedNoteIds: [], trackerItems: [], deletedTrackerItemIds: [], serverVersion: 9 });
    const s = client.getSnapshot();
    expect([...s.notes.keys()].sort()).toEqual(['kept', 'mine']);
    expect(s.version).toBe(9);
  });

  it('applies live changes in order, skips old ones and pulls after a gap', async () => {
    const { server, client, live } = setup();
    await client.start();
    live.emit({ type: 'changes', since: 0, notes: [{ ...note('a'), version: 1 }], serverVersion: 1 });
    expect(client.getSnapshot().notes.has('a')).toBe(true);
    live.emit({ type: 'changes', since: 0, notes: [{ ...note('dup'), version: 1 }], serverVersion: 1 });
    expect(client.getSnapshot().notes.has('dup')).toBe(false);
    server.version = 1;
    server.apply({ notes: { upserted: [note('b'), note('c')], deleted: [] } });
    server.apply({ notes: { upserted: [], deleted: ['b'] } });
    live.emit({ type: 'changes', since: 2, deletedNoteIds: ['b'], serverVersion: 3 });
    await settle();
    expect(server.pulls.at(-1)).toBe(1);
    const s = client.getSnapshot();
    expect(s.version).toBe(3);
    expect(s.notes.has('c')).toBe(true);
  });

  it('pulls after a resync close (4008)', async () => {
    const { server, client, live } = setup();
    await client.start();
    server.apply({ notes: { upserted: [note('missed')], deleted: [] } });
    live.closeWith(4008);
    await settle();
    expect(server.pulls).toEqual([0, 0]);
    expect(client.getSnapshot().notes.has('missed')).toBe(true);
  });

  it('keeps a refused edit, says why, and sends the others', async () => {
    const { server, client } = setup();
    await client.start();
    server.failPush = [httpError(400, 'notes.upserted[1].content must be at most 30000 characters (got 30001).', 'notes.upserted[1].content')];
    client.batch(() => {
      client.upsertNote(note('ok1'));
      client.upsertNote(note('bad', { content: 'x'.repeat(30001) }));
      client.upsertNote(note('ok2'));
    });
    await settle();
    const s = client.getSnapshot();
    expect(s.pending).toBe(1);
    expect(s.rejected).toHaveLength(1);
    expect(s.rejected[0].id).toBe('bad');
    expect(s.rejected[0].rejected?.message).toContain('30000');
    expect(s.notes.has('bad')).toBe(true); // still shown
    expect([...server.rows.keys()].sort()).toEqual(['ok1', 'ok2']);
    // A new edit of the refused row replaces the refused one.
    client.upsertNote(note('bad', { content: 'short now' }));
    await settle();
    expect(client.getSnapshot().pending).toBe(0);
    expect(server.rows.get('bad')?.content).toBe('short now');
  });

  it('discards a refused edit when asked', async () => {
    const { server, client } = setup();
    await client.start();
    server.failPush = [httpError(400, 'bad', 'notes.upserted[0].title')];
    client.upsertNote(note('x'));
    await settle();
    const [r] = client.getSnapshot().rejected;
    client.discardRejected(r.seq);
    expect(client.getSnapshot().pending).toBe(0);
    expect(client.getSnapshot().notes.has('x')).toBe(false);
  });

  it('marks every edit of a push refused with 403', async () => {
    const { server, client } = setup();
    await client.start();
    server.failPush = [httpError(403, 'You can only view this board.')];
    client.batch(() => {
      client.upsertNote(note('n1'));
      client.deleteNote('n2');
    });
    await settle();
    expect(client.getSnapshot().rejected).toHaveLength(2);
  });

  it('sends pointers at most every 50 ms, the latest position last', async () => {
    const { client, clock, live } = setup();
    await client.start();
    client.sendPointer(1, 1);
    client.sendPointer(2, 2);
    clock.advance(0);
    client.sendPointer(3, 3);
    client.sendPointer(4, 4);
    clock.advance(49);
    expect(live.sent).toEqual([{ type: 'pointer', x: 2, y: 2 }]);
    clock.advance(1);
    expect(live.sent.at(-1)).toEqual({ type: 'pointer', x: 4, y: 4 });
  });

  it('tracks who is here', async () => {
    const { client, live } = setup();
    await client.start();
    live.emit({ type: 'hello', serverVersion: 0, you: { id: 'me', email: 'a@x', color: '#111', canEdit: true }, present: [{ id: 'p', email: 'b@x', color: '#222' }] });
    live.emit({ type: 'pointer', id: 'p', email: 'b@x', color: '#222', x: 5, y: 6 });
    expect(client.getSnapshot().peers.get('p')?.x).toBe(5);
    live.emit({ type: 'leave', id: 'p', email: 'b@x', color: '#222' });
    expect(client.getSnapshot().peers.size).toBe(0);
    expect(client.getSnapshot().canEdit).toBe(true);
  });
});

describe('SyncClient writing a full pull', () => {
  for (const how of ['drawn', 'timeout'] as const) {
    it(`waits for the board to be drawn before storing it (${how})`, async () => {
      const server = new FakeServer();
      server.apply({ notes: { upserted: Array.from({ length: 150 }, (_, i) => note(`n${i}`)), deleted: [] } });
      const store = new MemoryStore();
      const clock = new FakeClock();
      const client = new SyncClient({ boardId: 'b1', transport: server, store, live: new FakeLive(), clock, newKey: () => `key-${++keyN}`, waitForDrawing: true, drawWait: 3000 });
      await client.start();
      await settle();
      clock.advance(0);
      await settle();
      expect(client.getSnapshot().notes.size).toBe(150); // shown at once
      expect((await store.load('b1')).notes).toHaveLength(0); // stored later
      if (how === 'drawn') client.drawn();
      else clock.advance(3000);
      await settle();
      clock.advance(0); // the idle moment after it
      await client.whenIdle();
      expect((await store.load('b1')).notes).toHaveLength(150);
      client.close();
    });
  }
});

describe('SyncClient on IndexedDB', () => {
  it('keeps the board and the offline queue across a reload', async () => {
    const store = await IdbStore.open('reload-test');
    const server = new FakeServer();
    server.apply({ notes: { upserted: [note('n1', { title: 'from server' })], deleted: [] } });
    const a = setup({ store, server });
    await a.client.start();
    server.offline = true;
    a.client.upsertNote(note('offline', { title: 'written offline' }));
    a.client.deleteNote('n1');
    await settle();
    await a.client.whenIdle();
    a.client.close();

    // A new page on the same database, still offline: the board opens.
    const b = setup({ store, server });
    await b.client.start();
    let s = b.client.getSnapshot();
    expect(s.pending).toBe(2);
    expect(s.notes.get('offline')?.title).toBe('written offline');
    expect(s.notes.has('n1')).toBe(false);

    // Back online: the interrupted push goes again with its key.
    const firstKey = server.pushes[0].key;
    server.offline = false;
    b.clock.advance(b.clock.nextDelay!);
    await settle();
    await b.client.whenIdle();
    expect(server.pushes.filter((p) => p.key === firstKey)).toHaveLength(2);
    s = b.client.getSnapshot();
    expect(s.pending).toBe(0);
    expect(server.rows.has('offline')).toBe(true);
    expect(server.rows.has('n1')).toBe(false);
    const cached = await store.load('b1');
    expect(cached.pending).toHaveLength(0);
    expect(cached.version).toBe(3); // two pushes: the interrupted one, then the delete
    b.client.close();
    store.close();
  });

  it('writes a big reset in chunks and ends with the full state', async () => {
    const store = await IdbStore.open('chunk-test');
    await store.applyServer('b1', { version: 2, putNotes: [note('old')], deleteNotes: [], putItems: [], deleteItems: [] });
    const many = Array.from({ length: 1200 }, (_, i) => note(`n${i}`));
    await store.applyServer('b1', { version: 9, reset: true, putNotes: many, deleteNotes: [], putItems: [], deleteItems: [] });
    const b = await store.load('b1');
    expect(b.version).toBe(9);
    expect(b.notes).toHaveLength(1200);
    expect(b.notes.some((n) => n.id === 'old')).toBe(false);
    store.close();
  });

  it('replaces rows on a reset in the store', async () => {
    const store = await IdbStore.open('reset-test');
    await store.applyServer('b1', { version: 3, putNotes: [note('a'), note('b')], deleteNotes: [], putItems: [], deleteItems: [] });
    await store.applyServer('b2', { version: 1, putNotes: [note('other')], deleteNotes: [], putItems: [], deleteItems: [] });
    await store.applyServer('b1', { version: 7, reset: true, putNotes: [note('c')], deleteNotes: [], putItems: [], deleteItems: [] });
    expect((await store.load('b1')).notes.map((n) => n.id)).toEqual(['c']);
    expect((await store.load('b2')).notes.map((n) => n.id)).toEqual(['other']);
    store.close();
  });
});
