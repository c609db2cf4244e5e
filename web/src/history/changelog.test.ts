import { describe, expect, it } from 'vitest';
import 'fake-indexeddb/auto';
import type { LogEntry, Note } from '../api/types';
import { FakeClock, note } from '../sync/testing';
import { ChangelogClient, DEBOUNCE, FLUSH_EVERY, feedFrom, type LogSender } from './changelog';
import { SyncClient } from '../sync/client';
import { MemoryStore } from '../sync/store';
import { FakeServer } from '../sync/testing';
import { renderNote, renderRename } from './format';
import { IdbOutbox, MemoryOutbox, type Outbox } from './outbox';

/** FakeLog records what reached the server; fail makes the next posts fail with that status. */
class FakeLog implements LogSender {
  posts: LogEntry[][] = [];
  fail: { status: number; field?: string } | null = null;
  async postLog(_boardId: string, entries: LogEntry[]) {
    if (this.fail) throw Object.assign(new Error('refused'), this.fail);
    this.posts.push(entries);
    return { ok: true };
  }
  get entries() {
    return this.posts.flat();
  }
}

function setup(o: { outbox?: Outbox; server?: FakeLog; beacon?: (b: string) => boolean } = {}) {
  const clock = new FakeClock();
  const server = o.server ?? new FakeLog();
  const outbox = o.outbox ?? new MemoryOutbox();
  const notes = new Map<string, Note>();
  let name = 'Board';
  const log = new ChangelogClient({
    boardId: 'b1',
    sender: server,
    outbox,
    clock,
    current: (id) => notes.get(id),
    currentName: () => name,
    beacon: o.beacon,
  });
  return {
    clock,
    server,
    outbox,
    notes,
    log,
    rename: (n: string) => {
      name = n;
      log.boardRenamed();
    },
  };
}

describe('ChangelogClient', () => {
  it('logs create_note at once with the note snapshot', async () => {
    const { log, server } = setup();
    await log.start();
    const n = note('n1');
    log.noteCreated(n);
    await log.whenIdle();
    expect(server.entries).toEqual([{ noteId: 'n1', action: 'create_note', content: renderNote(n) }]);
  });

  it('logs delete_note at once with the pre-deletion snapshot, dropping a waiting update', async () => {
    const { log, server, notes, clock } = setup();
    await log.start();
    const n = { ...note('n1'), content: 'last words' };
    notes.set('n1', n);
    log.noteUpdated('n1');
    notes.delete('n1');
    log.noteDeleted(n);
    await log.whenIdle();
    clock.advance(DEBOUNCE * 2);
    await log.whenIdle();
    expect(server.entries).toEqual([{ noteId: 'n1', action: 'delete_note', content: renderNote(n) }]);
  });

  it('debounces update_note 15 s per note and takes the snapshot when it fires', async () => {
    const { log, server, notes, clock } = setup();
    await log.start();
    for (let i = 1; i <= 20; i++) {
      notes.set('n1', { ...note('n1'), content: 'a'.repeat(i) });
      log.noteUpdated('n1');
      clock.advance(1000); // a keystroke a second
    }
    notes.set('n2', { ...note('n2'), content: 'other' });
    log.noteUpdated('n2');
    clock.advance(DEBOUNCE - 1001);
    await log.whenIdle();
    expect(server.entries).toEqual([]); // 14.999 s after the last keystroke of n1
    clock.advance(1);
    await log.whenIdle();
    expect(server.entries).toEqual([{ noteId: 'n1', action: 'update_note', content: renderNote(notes.get('n1')!) }]);
    notes.set('n2', { ...note('n2'), content: 'changed while waiting' });
    clock.advance(1000);
    await log.whenIdle();
    expect(server.entries.map((e) => [e.noteId, e.action])).toEqual([
      ['n1', 'update_note'],
      ['n2', 'update_note'],
    ]);
    expect(server.entries[1].content).toContain('changed while waiting');
  });

  it('does not log an update of a note gone when the wait ends', async () => {
    const { log, server, notes, clock } = setup();
    await log.start();
    notes.set('n1', note('n1'));
    log.noteUpdated('n1');
    notes.delete('n1'); // deleted by someone else
    clock.advance(DEBOUNCE);
    await log.whenIdle();
    expect(server.entries).toEqual([]);
  });

  it('debounces rename_board 15 s and logs the last name', async () => {
    const { log, server, clock, rename } = setup();
    await log.start();
    rename('A');
    clock.advance(10_000);
    rename('AB');
    clock.advance(DEBOUNCE - 1);
    await log.whenIdle();
    expect(server.entries).toEqual([]);
    clock.advance(1);
    await log.whenIdle();
    expect(server.entries).toEqual([{ noteId: '', action: 'rename_board', content: renderRename('AB') }]);
  });

  it('keeps entries while offline and sends them with the 30 s flush, once', async () => {
    const { log, server, clock } = setup();
    await log.start();
    server.fail = { status: 0 };
    log.noteCreated(note('n1'));
    log.noteCreated(note('n2'));
    await log.whenIdle();
    expect(log.pending).toBe(2);
    server.fail = null;
    clock.advance(FLUSH_EVERY - 1);
    await log.whenIdle();
    expect(server.entries).toEqual([]);
    clock.advance(1);
    await log.whenIdle();
    expect(server.entries.map((e) => e.noteId)).toEqual(['n1', 'n2']);
    clock.advance(FLUSH_EVERY * 3);
    await log.whenIdle();
    expect(server.entries).toHaveLength(2);
    expect(log.pending).toBe(0);
  });

  it('drops an entry the server refuses and sends the others', async () => {
    const { log, server } = setup();
    await log.start();
    server.fail = { status: 0 };
    log.noteCreated(note('n1'));
    log.noteCreated(note('bad'));
    log.noteCreated(note('n3'));
    await log.whenIdle();
    let refused = false;
    server.postLog = async (_b, entries) => {
      const i = entries.findIndex((e) => e.noteId === 'bad');
      if (i >= 0) {
        refused = true;
        throw Object.assign(new Error('bad'), { status: 400, field: `entries[${i}].content` });
      }
      server.posts.push(entries);
      return { ok: true };
    };
    await log.send();
    expect(refused).toBe(true);
    expect(server.entries.map((e) => e.noteId)).toEqual(['n1', 'n3']);
    expect(log.pending).toBe(0);
  });

  it('on unload fires the waits early and sends everything in a beacon', async () => {
    const beacons: string[] = [];
    const { log, server, notes, outbox, rename } = setup({ beacon: (b) => (beacons.push(b), true) });
    await log.start();
    server.fail = { status: 0 };
    log.noteCreated(note('n1'));
    notes.set('n2', note('n2'));
    log.noteUpdated('n2');
    rename('New name');
    await log.whenIdle();
    log.unload();
    await log.whenIdle();
    expect(beacons).toHaveLength(1);
    const body = JSON.parse(beacons[0]) as { entries: LogEntry[] };
    expect(body.entries.map((e) => [e.noteId, e.action])).toEqual([
      ['n1', 'create_note'],
      ['n2', 'update_note'],
      ['', 'rename_board'],
    ]);
    expect(await outbox.load('b1')).toEqual([]);
    expect(log.pending).toBe(0);
  });

  it('keeps what a refused beacon held for the next session', async () => {
    const outbox = new MemoryOutbox();
    const first = setup({ outbox, beacon: () => false });
    await first.log.start();
    first.server.fail = { status: 0 };
    first.log.noteCreated(note('n1'));
    await first.log.whenIdle();
    first.log.unload();
    await first.log.whenIdle();
    const second = setup({ outbox });
    await second.log.start();
    await second.log.whenIdle();
    expect(second.server.entries.map((e) => e.noteId)).toEqual(['n1']);
    expect(await outbox.load('b1')).toEqual([]);
  });

  it('splits beacons under the 64 KiB quota', async () => {
    const beacons: string[] = [];
    const { log, server } = setup({ beacon: (b) => (beacons.push(b), true) });
    await log.start();
    server.fail = { status: 0 };
    for (let i = 0; i < 5; i++) log.noteCreated({ ...note(`n${i}`), content: 'x'.repeat(20_000) });
    await log.whenIdle();
    log.unload();
    expect(beacons.length).toBeGreaterThan(1);
    expect(beacons.every((b) => new TextEncoder().encode(b).length < 64 * 1024)).toBe(true);
    expect(beacons.flatMap((b) => (JSON.parse(b) as { entries: LogEntry[] }).entries.map((e) => e.noteId))).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
  });

  it('on close fires the waits early, sends by fetch and stops its timers', async () => {
    const { log, server, notes, clock } = setup();
    await log.start();
    notes.set('n1', note('n1'));
    log.noteUpdated('n1');
    await log.close();
    expect(server.entries.map((e) => [e.noteId, e.action])).toEqual([['n1', 'update_note']]);
    expect(clock.pendingTimers).toBe(0);
    await log.close(); // idempotent
  });

  it('keeps entries logged offline in IndexedDB and sends them in a later session, once', async () => {
    const name = `outbox-${Math.random()}`;
    const box1 = await IdbOutbox.open(name);
    const first = setup({ outbox: box1 });
    await first.log.start();
    first.server.fail = { status: 0 };
    first.log.noteCreated(note('n1'));
    first.log.noteDeleted(note('n2'));
    await first.log.whenIdle();
    box1.close(); // the tab is gone without a beacon

    const box2 = await IdbOutbox.open(name);
    const second = setup({ outbox: box2 });
    await second.log.start();
    await second.log.whenIdle();
    expect(second.server.entries.map((e) => [e.noteId, e.action])).toEqual([
      ['n1', 'create_note'],
      ['n2', 'delete_note'],
    ]);
    expect(await box2.load('b1')).toEqual([]);
    second.clock.advance(FLUSH_EVERY);
    await second.log.whenIdle();
    expect(second.server.entries).toHaveLength(2);
    box2.close();
  });
});

describe('ChangelogClient, starting', () => {
  it('does not send twice an entry logged and sent while the outbox was being read', async () => {
    const box = new MemoryOutbox();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let stored!: () => void;
    const put = new Promise<void>((r) => (stored = r));
    const slow: Outbox = {
      put: async (q) => {
        await box.put(q);
        stored();
      },
      remove: (b, s) => box.remove(b, s),
      count: () => box.count(),
      load: async (b) => {
        await put; // the read sees the entry…
        const rows = await box.load(b);
        await gate; // …and answers after it was sent and removed
        return rows;
      },
    };
    const { log, server } = setup({ outbox: slow });
    const started = log.start();
    log.noteCreated(note('n1'));
    await log.whenIdle(); // sent, acknowledged and removed…
    release(); // …but the read began before the removal
    await started;
    await log.whenIdle();
    expect(server.entries.map((e) => e.noteId)).toEqual(['n1']);
  });
});

describe('feedFrom', () => {
  it("logs the sync client's local edits by the rules", async () => {
    const clock = new FakeClock();
    const sync = new SyncClient({ boardId: 'b1', transport: new FakeServer(), store: new MemoryStore(), clock, newKey: () => crypto.randomUUID() });
    const server = new FakeLog();
    const log = new ChangelogClient({
      boardId: 'b1',
      sender: server,
      outbox: new MemoryOutbox(),
      clock,
      current: (id) => sync.getSnapshot().notes.get(id),
      currentName: () => sync.getSnapshot().name,
    });
    feedFrom(sync, log);
    await sync.start();
    await log.start();
    sync.upsertNote({ ...note('n1'), content: 'one' });
    await log.whenIdle();
    expect(server.entries.map((e) => e.action)).toEqual(['create_note']);
    for (const c of ['tw', 'two']) sync.upsertNote({ ...sync.getSnapshot().notes.get('n1')!, content: c });
    sync.rename('Renamed');
    clock.advance(DEBOUNCE);
    await log.whenIdle();
    expect(server.entries.map((e) => e.action)).toEqual(['create_note', 'update_note', 'rename_board']);
    expect(server.entries[1].content).toMatch(/\n\ntwo\n$/);
    sync.deleteNote('n1');
    await log.whenIdle();
    expect(server.entries[3].action).toBe('delete_note');
    expect(server.entries[3].content).toMatch(/\n\ntwo\n$/);
    sync.close();
    await log.close();
  });
});
