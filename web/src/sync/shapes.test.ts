// Connectors and frames (issue 24) go through the sync engine exactly as
// notes do: queued, pushed in their own envelope keys, pulled, merged and
// live-updated, kept in the local store.
import { describe, expect, it } from 'vitest';
import 'fake-indexeddb/auto';
import { SyncClient } from './client';
import { IdbStore } from './idbStore';
import { mergeConnector, mergeFrame } from './merge';
import { MemoryStore, type LocalStore } from './store';
import { FakeClock, FakeLive, FakeServer, connector, frame, httpError, note, settle } from './testing';

let keyN = 0;
function setup(o: { store?: LocalStore; server?: FakeServer } = {}) {
  const server = o.server ?? new FakeServer();
  const store = o.store ?? new MemoryStore();
  const live = new FakeLive();
  const client = new SyncClient({ boardId: 'b1', transport: server, store, live, clock: new FakeClock(), newKey: () => `k${++keyN}` });
  return { server, store, live, client };
}

describe('connectors and frames in the sync client', () => {
  it('pushes them under their own keys, and a push of notes alone carries neither key', async () => {
    const { server, client } = setup();
    await client.start();
    client.upsertNote(note('a'));
    await settle();
    expect(Object.keys(server.pushes[0].body).sort()).toEqual(['clientVersion', 'notes', 'trackerItems']);
    client.batch(() => {
      client.upsertConnector(connector('c1', 'a', 'b', { label: 'needs' }));
      client.upsertFrame(frame('f1', { title: 'Risks' }));
    });
    await settle();
    const body = server.pushes[1].body;
    expect(body.connectors?.upserted.map((c) => c.label)).toEqual(['needs']);
    expect(body.frames?.upserted.map((f) => f.title)).toEqual(['Risks']);
    expect(body.notes).toEqual({ upserted: [], deleted: [] });
    const s = client.getSnapshot();
    expect(s.pending).toBe(0);
    expect(s.connectors.get('c1')?.version).toBe(2);
    expect(s.frames.get('f1')?.title).toBe('Risks');
  });

  it('pulls them, and a live change updates and deletes them', async () => {
    const { server, client, live } = setup();
    server.apply({ notes: { upserted: [note('a'), note('b')], deleted: [] }, connectors: { upserted: [connector('c1', 'a', 'b')], deleted: [] }, frames: { upserted: [frame('f1')], deleted: [] } });
    await client.start();
    expect([...client.getSnapshot().connectors.keys()]).toEqual(['c1']);
    expect([...client.getSnapshot().frames.keys()]).toEqual(['f1']);
    server.apply({ notes: { upserted: [], deleted: [] }, connectors: { upserted: [], deleted: ['c1'] }, frames: { upserted: [{ ...frame('f1'), x: 300 }], deleted: [] } });
    live.emit(server.liveChanges());
    const s = client.getSnapshot();
    expect(s.connectors.size).toBe(0);
    expect(s.frames.get('f1')?.x).toBe(300);
  });

  it('queues them offline, keeps them over a reload (IndexedDB), and sends them when back', async () => {
    const store = await IdbStore.open('shapes-offline');
    const server = new FakeServer();
    const first = setup({ store, server });
    await first.client.start();
    server.offline = true;
    first.client.upsertFrame(frame('f1', { title: 'Offline frame' }));
    first.client.upsertConnector(connector('c1', 'a', 'f1'));
    await settle();
    await first.client.whenIdle();
    first.client.close();
    server.offline = false;
    const second = setup({ store, server });
    await second.client.start();
    await settle();
    expect(server.frames.get('f1')?.title).toBe('Offline frame');
    expect(server.connectors.get('c1')?.to).toBe('f1');
    expect(second.client.getSnapshot().pending).toBe(0);
    await second.client.whenIdle();
    const kept = await store.load('b1');
    expect(kept.frames.map((f) => f.id)).toEqual(['f1']);
    expect(kept.connectors.map((c) => c.id)).toEqual(['c1']);
  });

  it('merges an unsent frame move onto a rename that arrives first', async () => {
    const { server, client, live } = setup();
    server.apply({ notes: { upserted: [], deleted: [] }, frames: { upserted: [frame('f1', { title: 'Old' })], deleted: [] } });
    await client.start();
    server.offline = true;
    client.upsertFrame({ ...client.getSnapshot().frames.get('f1')!, x: 500, y: 40 });
    await settle();
    server.offline = false;
    server.apply({ notes: { upserted: [], deleted: [] }, frames: { upserted: [{ ...frame('f1', { title: 'New' }), baseVersion: 1 }], deleted: [] } });
    live.emit(server.liveChanges());
    const f = client.getSnapshot().frames.get('f1')!;
    expect([f.title, f.x, f.y]).toEqual(['New', 500, 40]);
  });

  it('marks only the refused connector when a 400 names it', async () => {
    const { server, client } = setup();
    await client.start();
    server.failPush.push(httpError(400, 'label too long', 'connectors.upserted[1].label'));
    client.batch(() => {
      client.upsertConnector(connector('ok', 'a', 'b'));
      client.upsertConnector(connector('bad', 'a', 'b', { label: 'x'.repeat(10) }));
    });
    await settle();
    const s = client.getSnapshot();
    expect(s.rejected.map((e) => e.id)).toEqual(['bad']);
    expect(server.connectors.has('ok')).toBe(true);
  });
});

describe('mergeConnector and mergeFrame', () => {
  it('keeps both sides of a connector where they changed different fields', () => {
    const base = connector('c', 'a', 'b');
    const m = mergeConnector(base, { ...base, label: 'theirs' }, { ...base, style: 'line', dash: 'dashed', updatedAt: 'mine' });
    expect(m.merged).toMatchObject({ label: 'theirs', style: 'line', dash: 'dashed', updatedAt: 'mine' });
    expect(m.overlap).toBe(false);
  });

  it('moves a frame and resizes it apart, and mine wins a field both changed', () => {
    const base = frame('f', { x: 0, y: 0, w: 600, h: 400 });
    const m = mergeFrame(base, { ...base, w: 800, h: 500, title: 'theirs' }, { ...base, x: 50, y: 60, title: 'mine', locked: true });
    expect(m.merged).toMatchObject({ x: 50, y: 60, w: 800, h: 500, title: 'mine', locked: true });
  });
});
