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

  it('rebases on a pull by merging: what others changed and what I changed both survive', async () => {
    const { server, client, clock } = setup();
    server.apply({ notes: { upserted: [note('n1', { title: 'Plan', content: 'one\ntwo\nthree', color: 'yellow' })], deleted: [] } });
    await client.start();
    server.offline = true;
    const shown = client.getSnapshot().notes.get('n1')!;
    client.upsertNote({ ...shown, content: 'one\ntwo\nTHREE', color: 'pink' });
    await settle();
    // Meanwhile someone else moved the note and edited another line.
    server.offline = false;
    server.apply({ notes: { upserted: [note('n1', { title: 'Plan', content: 'ONE\ntwo\nthree', color: 'yellow', x: 100 })], deleted: [] } });
    await client.pull(); // before the retry of our push
    const s = client.getSnapshot();
    expect(s.notes.get('n1')).toMatchObject({ content: 'ONE\ntwo\nTHREE', color: 'pink', x: 100 });
    expect(s.pending).toBe(1);
    // The merged edit sits on the new row: it goes with that row's version,
    // as the same push (same key) as before.
    clock.advance(clock.nextDelay!);
    await settle();
    expect(server.pushes).toHaveLength(2);
    expect(server.pushes[1].key).toBe(server.pushes[0].key);
    expect(server.pushes[1].body.notes.upserted[0]).toMatchObject({ content: 'ONE\ntwo\nTHREE', baseVersion: 2 });
    expect(server.rows.get('n1')).toMatchObject({ content: 'ONE\ntwo\nTHREE', color: 'pink', x: 100 });
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

  it('drops an edit of a locked note the server refused, shows the server copy, says why and pulls (no retry)', async () => {
    const { server, client } = setup();
    server.rows.set('n1', { ...note('n1', { x: 0, locked: true }), version: 1 });
    server.version = 1;
    await client.start();
    const pulls = server.pulls.length;
    server.failPush = [httpError(403, 'Note "n1" is locked by the board\'s owner.', 'notes.upserted[1]')];
    client.batch(() => {
      client.upsertNote(note('ok'));
      client.upsertNote({ ...client.getSnapshot().notes.get('n1')!, x: 500 });
    });
    await settle();
    const s = client.getSnapshot();
    expect(s.notes.get('n1')!.x).toBe(0); // the server's copy again
    expect(s.rejected).toEqual([]);
    expect(s.pending).toBe(0);
    expect(s.undone).toEqual([expect.objectContaining({ id: 'n1', op: 'upsert', message: 'Note "n1" is locked by the board\'s owner.' })]);
    expect(server.rows.has('ok')).toBe(true); // the rest went again
    expect(server.pulls.length).toBeGreaterThan(pulls);
    client.dismissUndone(s.undone[0].seq);
    expect(client.getSnapshot().undone).toEqual([]);
  });

});

/** deferred is a promise resolved by hand. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('SyncClient merging', () => {
  it('pushes each edit with the version of the server copy it was made on', async () => {
    const { server, client } = setup();
    server.apply({ notes: { upserted: [note('n1')], deleted: [] } });
    await client.start();
    client.batch(() => {
      client.upsertNote({ ...client.getSnapshot().notes.get('n1')!, title: 'edited' });
      client.upsertNote(note('n2'));
    });
    await settle();
    const [n1, n2] = server.pushes[0].body.notes.upserted;
    expect(n1).toMatchObject({ id: 'n1', title: 'edited', baseVersion: 1 });
    expect(n1.version).toBeUndefined();
    expect(n2.baseVersion).toBeUndefined();
  });

  it('loses no edit when two people edit the same note at once', async () => {
    const server = new FakeServer();
    server.apply({ notes: { upserted: [note('n1', { content: '- [ ] milk\n- [ ] eggs\n- [ ] bread' })], deleted: [] } });
    const a = setup({ server });
    const b = setup({ server });
    await a.client.start();
    await b.client.start();
    // Neither hears of the other's edit before pushing (no live messages).
    a.client.upsertNote({ ...a.client.getSnapshot().notes.get('n1')!, content: '- [x] milk\n- [ ] eggs\n- [ ] bread' });
    await settle();
    b.client.upsertNote({ ...b.client.getSnapshot().notes.get('n1')!, content: '- [ ] milk\n- [ ] eggs\n- [x] bread', color: 'blue' });
    await settle();
    expect(server.rows.get('n1')).toMatchObject({ content: '- [x] milk\n- [ ] eggs\n- [x] bread', color: 'blue', version: 3 });
    // b's answer (3) was not its version + 1: it pulled the merged row.
    expect(b.client.getSnapshot().notes.get('n1')).toMatchObject({ content: '- [x] milk\n- [ ] eggs\n- [x] bread', color: 'blue' });
    await a.client.pull();
    expect(a.client.getSnapshot().notes.get('n1')?.content).toBe(server.rows.get('n1')?.content);
  });

  it('shows a push on its way merged onto a newer row, and computes the row the server stores', async () => {
    const { server, client, live } = setup();
    server.apply({ notes: { upserted: [note('n1', { title: 'T', content: 'a\nb\nc' })], deleted: [] } });
    await client.start();
    const answer = deferred<void>();
    const realPush = server.push.bind(server);
    server.push = async (id, body, key) => {
      await answer.promise;
      return realPush(id, body, key);
    };
    client.upsertNote({ ...client.getSnapshot().notes.get('n1')!, content: 'A\nb\nc' });
    await settle();
    // Someone else's change arrives while ours is on its way.
    server.apply({ notes: { upserted: [{ ...server.rows.get('n1')!, content: 'a\nb\nC', x: 40, baseVersion: 1 }], deleted: [] } });
    live.emit(server.liveChanges());
    expect(client.getSnapshot().notes.get('n1')).toMatchObject({ content: 'A\nb\nC', x: 40 }); // no flicker back to "a"
    const shown: string[] = [];
    client.onChange(() => shown.push(client.getSnapshot().notes.get('n1')!.content));
    answer.resolve();
    await settle();
    // Our push became version 3 right after 2: the client merged it as the server did, without a pull.
    expect(client.getSnapshot().version).toBe(3);
    expect(server.pulls).toEqual([0]);
    const { updatedAt: _u, ...stored } = server.rows.get('n1')!;
    expect(client.getSnapshot().notes.get('n1')).toMatchObject(stored);
    expect(shown.every((c) => c === 'A\nb\nC')).toBe(true);
  });

  it('holds an edit made on top of a push on its way until that push lands', async () => {
    const { server, client } = setup();
    server.apply({ notes: { upserted: [note('n1', { color: 'yellow' })], deleted: [] } });
    await client.start();
    const answer = deferred<void>();
    const realPush = server.push.bind(server);
    server.push = async (id, body, key) => {
      await answer.promise;
      return realPush(id, body, key);
    };
    client.upsertNote({ ...client.getSnapshot().notes.get('n1')!, color: 'pink' });
    await settle();
    client.upsertNote({ ...client.getSnapshot().notes.get('n1')!, color: 'yellow' }); // undone at once
    expect(client.getSnapshot().notes.get('n1')?.color).toBe('yellow');
    answer.resolve();
    await settle();
    expect(server.pushes.map((p) => p.body.notes.upserted[0])).toMatchObject([
      { color: 'pink', baseVersion: 1 },
      { color: 'yellow', baseVersion: 2 },
    ]);
    expect(server.rows.get('n1')?.color).toBe('yellow');
    expect(client.getSnapshot().notes.get('n1')?.color).toBe('yellow');
  });

  it('keeps an edit of a note deleted by someone else, and revives it', async () => {
    const { server, client, clock } = setup();
    server.apply({ notes: { upserted: [note('n1')], deleted: [] } });
    await client.start();
    server.offline = true;
    client.upsertNote({ ...client.getSnapshot().notes.get('n1')!, title: 'still needed' });
    await settle();
    server.offline = false;
    server.apply({ notes: { upserted: [], deleted: ['n1'] } });
    await client.pull(); // before the retry of our push
    expect(client.getSnapshot().notes.get('n1')?.title).toBe('still needed');
    clock.advance(clock.nextDelay!);
    await settle();
    expect(server.rows.get('n1')?.title).toBe('still needed');
    expect(server.events.get(3)).toEqual([{ kind: 'revived', table: 'note', id: 'n1', version: 2 }]);
  });

  it('pulls after a replayed answer instead of taking its rows as stored', async () => {
    const { server, client, live } = setup();
    await client.start();
    const realPush = server.push.bind(server);
    let lose = true;
    server.push = async (id, body, key) => {
      const r = await realPush(id, body, key);
      if (lose) {
        lose = false;
        throw httpError(0, 'network');
      }
      return r;
    };
    client.upsertNote(note('n1', { title: 'once' }));
    await settle();
    live.status('online'); // pushes again at once, before any pull
    await settle();
    expect(server.pushes).toHaveLength(2);
    expect(server.pulls).toEqual([0, 0]);
    expect(client.getSnapshot()).toMatchObject({ version: 1, pending: 0 });
  });
});

describe('SyncClient marks', () => {
  it('marks an overlap of my change, keeps it across a reload, until dismissed', async () => {
    const store = new MemoryStore();
    const server = new FakeServer();
    server.apply({ notes: { upserted: [note('n1', { content: 'plan' })], deleted: [] } });
    const a = setup({ server, store });
    await a.client.start();
    a.client.upsertNote({ ...a.client.getSnapshot().notes.get('n1')!, content: 'my plan' });
    await settle();
    expect(server.version).toBe(2);
    // Someone offline since version 1 rewrote the same line: mine (2) loses it.
    server.apply({ notes: { upserted: [note('n1', { content: 'their plan', baseVersion: 1 })], deleted: [] } });
    a.live.emit(server.liveChanges());
    const want = [{ table: 'note', id: 'n1', kind: 'overlap', version: 2, logKey: 'log/2-n1' }];
    expect(a.client.marks()).toEqual(want);
    expect(a.client.getSnapshot().marks).toEqual(want);
    await a.client.whenIdle();
    a.client.close();

    const b = setup({ server, store });
    await b.client.start();
    expect(b.client.marks()).toEqual(want);
    b.client.dismissMark('n1');
    expect(b.client.getSnapshot().marks).toEqual([]);
    await b.client.whenIdle();
    expect((await store.getValue<{ marks: unknown[] }>('marks:b1'))?.marks).toEqual([]);
  });

  it('marks a note I deleted that someone’s offline edit revived, and not the changes of others', async () => {
    const { server, client, live } = setup();
    server.apply({ notes: { upserted: [note('n1'), note('n2')], deleted: [] } });
    await client.start();
    client.deleteNote('n1');
    await settle();
    server.apply({ notes: { upserted: [note('n1', { title: 'offline edit', baseVersion: 1 })], deleted: [] } });
    live.emit({ ...server.liveChanges(), events: [...server.events.get(3)!, { kind: 'overlap', table: 'note', id: 'n2', version: 1, logKey: 'x' }] });
    expect(client.marks()).toEqual([{ table: 'note', id: 'n1', kind: 'revived', version: 2 }]);
    expect(client.getSnapshot().notes.get('n1')?.title).toBe('offline edit');
  });

  it('takes the events of a push another node applied from a message of their own', async () => {
    const { server, client, live } = setup();
    server.apply({ notes: { upserted: [note('n1')], deleted: [] } });
    await client.start();
    client.deleteNote('n1');
    await settle();
    live.emit({ type: 'events', events: [{ kind: 'revived', table: 'note', id: 'n1', version: 2, logKey: 'log/k' }, { kind: 'overlap', table: 'note', id: 'n9', version: 1 }] });
    expect(client.marks()).toEqual([{ table: 'note', id: 'n1', kind: 'revived', version: 2, logKey: 'log/k' }]);
  });
});

describe('SyncClient: edits made over time', () => {
  it('pushes a work item form on the item as the form opened, so fields others changed meanwhile are kept', async () => {
    const { server, client } = setup();
    const item = { id: 'i1', key: 'CB-1', type: 'task', summary: 'Login', status: 'todo', updatedAt: '' };
    server.apply({ notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [item], deleted: [] } });
    await client.start();
    const opened = client.getSnapshot().items.get('i1')!;
    // Someone moves the item on while my form is open…
    server.apply({ notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [{ ...item, status: 'done', baseVersion: 1 }], deleted: [] } });
    await client.pull();
    // …and I save the form, which still holds status "todo".
    client.upsertItem({ ...opened, summary: 'Login by code' }, opened);
    await settle();
    expect(server.pushes.at(-1)?.body.trackerItems?.upserted[0]).toMatchObject({ baseVersion: 1 });
    expect(server.items.get('i1')).toMatchObject({ summary: 'Login by code', status: 'done' });
  });
});

describe('SyncClient notifications', () => {
  it('tells React at most once per frame, and not about pointers', async () => {
    const due: (() => void)[] = [];
    const frame = (cb: () => void) => void due.push(cb);
    const server = new FakeServer();
    const live = new FakeLive();
    const client = new SyncClient({ boardId: 'b1', transport: server, store: new MemoryStore(), live, clock: new FakeClock(), newKey: () => `key-${++keyN}`, frame });
    await client.start();
    due.splice(0).forEach((cb) => cb());
    let board = 0;
    let presence = 0;
    client.onChange(() => board++);
    client.presence.onChange(() => presence++);
    for (let v = 1; v <= 5; v++) live.emit({ type: 'changes', since: v - 1, notes: [{ ...note(`n${v}`), version: v }], serverVersion: v });
    client.upsertNote(note('mine'));
    expect(board).toBe(0);
    due.splice(0).forEach((cb) => cb());
    expect(board).toBe(1);
    expect(client.getSnapshot().notes.size).toBe(6);
    live.emit({ type: 'hello', serverVersion: 6, you: { id: 'me', email: 'a@x', color: '#111', canEdit: true }, present: [{ id: 'p', email: 'b@x', color: '#222' }] });
    due.splice(0).forEach((cb) => cb());
    board = presence = 0;
    for (let i = 0; i < 30; i++) live.emit({ type: 'pointer', id: 'p', email: 'b@x', color: '#222', x: i, y: i });
    due.splice(0).forEach((cb) => cb());
    expect(presence).toBe(1);
    expect(board).toBe(0);
    expect(client.presence.getSnapshot().peers.get('p')?.x).toBe(29);
    expect(client.getSnapshot().canEdit).toBe(true);
    client.close();
  });

  it('turns editable, and back, when an access message says so (a plan change)', async () => {
    const due: (() => void)[] = [];
    const live = new FakeLive();
    const client = new SyncClient({ boardId: 'b1', transport: new FakeServer(), store: new MemoryStore(), live, clock: new FakeClock(), newKey: () => `key-${++keyN}`, frame: (cb) => void due.push(cb) });
    await client.start();
    live.emit({ type: 'hello', serverVersion: 0, you: { id: 'me', email: 'a@x', color: '#111', canEdit: false }, present: [] });
    due.splice(0).forEach((cb) => cb());
    expect(client.getSnapshot().canEdit).toBe(false);
    let board = 0;
    client.onChange(() => board++);
    live.emit({ type: 'access', canEdit: true });
    due.splice(0).forEach((cb) => cb());
    expect(board).toBe(1);
    expect(client.getSnapshot().canEdit).toBe(true);
    live.emit({ type: 'access', canEdit: false });
    due.splice(0).forEach((cb) => cb());
    expect(board).toBe(2);
    expect(client.getSnapshot().canEdit).toBe(false);
    client.close();
  });

  it('announces my editor over the live channel, again after a reconnect', async () => {
    const { client, live } = setup();
    await client.start();
    client.presence.setEditing('n1');
    expect(live.sent).toEqual([{ type: 'editing', noteId: 'n1' }]);
    live.emit({ type: 'hello', serverVersion: 0, you: { id: 'me2', email: 'a@x', color: '#111', canEdit: true }, present: [{ id: 'p', email: 'b@x', color: '#222', editing: 'n2' }] });
    expect(live.sent).toEqual([{ type: 'editing', noteId: 'n1' }, { type: 'editing', noteId: 'n1' }]);
    expect(client.presence.editorsOf('n2')).toEqual([{ id: 'p', email: 'b@x', color: '#222' }]);
    live.status('offline');
    expect(client.presence.editorsOf('n2')).toEqual([]);
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

  it('keeps the base of an offline edit across a reload, and merges with it', async () => {
    const store = await IdbStore.open('base-reload-test');
    const server = new FakeServer();
    server.apply({ notes: { upserted: [note('n1', { content: 'a\nb\nc' })], deleted: [] } });
    const a = setup({ store, server });
    await a.client.start();
    server.offline = true;
    a.client.upsertNote({ ...a.client.getSnapshot().notes.get('n1')!, content: 'a\nb\nC' });
    await settle();
    await a.client.whenIdle();
    a.client.close();
    const [kept] = (await store.load('b1')).pending;
    expect(kept).toMatchObject({ base: { content: 'a\nb\nc', version: 1 }, baseVersion: 1 });

    // Meanwhile, someone else changes another line.
    server.offline = false;
    server.apply({ notes: { upserted: [{ ...server.rows.get('n1')!, content: 'A\nb\nc' }], deleted: [] } });
    const b = setup({ store, server });
    await b.client.start();
    await settle();
    await b.client.whenIdle();
    expect(server.rows.get('n1')?.content).toBe('A\nb\nC');
    expect(b.client.getSnapshot()).toMatchObject({ pending: 0, version: 3 });
    expect(b.client.getSnapshot().notes.get('n1')?.content).toBe('A\nb\nC');
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
