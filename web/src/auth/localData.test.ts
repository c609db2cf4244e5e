import { describe, expect, it } from 'vitest';
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { ApiError } from '../api/api';
import { createServices } from '../app/services';
import { IdbStore } from '../sync/idbStore';
import { IdbOutbox } from '../history/outbox';
import { note } from '../sync/testing';
import {
  adoptLegacy,
  beginLogout,
  endServerSession,
  lastUser,
  loggedInAgain,
  LEGACY_OUTBOX,
  LEGACY_STORE,
  LOGOUT_PENDING_KEY,
  logoutPending,
  outboxName,
  rememberUser,
  storeName,
  unsentText,
  USER_KEY,
  wipeLocalData,
  type Env,
} from './localData';
import type { Api } from '../api/api';

/** MapStorage is a Storage in memory. */
class MapStorage implements Storage {
  private m = new Map<string, string>();
  get length() {
    return this.m.size;
  }
  clear() {
    this.m.clear();
  }
  getItem(k: string) {
    return this.m.get(k) ?? null;
  }
  key(i: number) {
    return [...this.m.keys()][i] ?? null;
  }
  removeItem(k: string) {
    this.m.delete(k);
  }
  setItem(k: string, v: string) {
    this.m.set(k, String(v));
  }
}

/** newEnv is a fresh browser: its own IndexedDB and storages. */
function newEnv(): Env {
  return { local: new MapStorage(), session: new MapStorage(), idb: new IDBFactory() };
}

/** create makes database name with one store, on idb. */
function create(idb: IDBFactory, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = idb.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore('x');
    req.onsuccess = () => (req.result.close(), resolve());
    req.onerror = () => reject(req.error);
  });
}

async function names(env: Env): Promise<string[]> {
  return (await env.idb.databases()).map((d) => d.name!).sort();
}

// The services open IdbStore and IdbOutbox on the global indexedDB, so the
// tests that use them run on the global factory with names of their own.
function globalEnv(): Env {
  return { local: new MapStorage(), session: new MapStorage(), idb: indexedDB };
}

const fakeApi = (logout: () => Promise<{ ok: true }>) => ({ logout }) as Pick<Api, 'logout'>;

describe('logout', () => {
  it('beginLogout forgets the user and marks the server logout as pending, at once', () => {
    const env = newEnv();
    rememberUser(env, 'alice@example.com');
    beginLogout(env);
    expect(lastUser(env)).toBeNull();
    expect(logoutPending(env)).toBe(true);
  });

  it.each([
    { name: 'OK', answer: () => Promise.resolve({ ok: true as const }), want: 'done', pending: false },
    { name: 'NoSessionAnyMore', answer: () => Promise.reject(new ApiError(401, 'Not logged in.')), want: 'done', pending: false },
    { name: 'Offline', answer: () => Promise.reject(new ApiError(0, 'offline')), want: 'offline', pending: true },
    { name: 'ServerError', answer: () => Promise.reject(new ApiError(503, 'down')), want: 'offline', pending: true },
  ])('endServerSession $name', async ({ answer, want, pending }) => {
    const env = newEnv();
    beginLogout(env);
    expect(await endServerSession(env, fakeApi(answer))).toBe(want);
    expect(logoutPending(env)).toBe(pending);
  });

  it('a new login drops the pending logout, which would end the new session', async () => {
    const env = newEnv();
    beginLogout(env);
    loggedInAgain(env);
    let asked = 0;
    expect(await endServerSession(env, fakeApi(async () => (asked++, { ok: true })))).toBe('done');
    expect(asked).toBe(0);
  });

  it('endServerSession asks nothing without a pending logout', async () => {
    const env = newEnv();
    let asked = 0;
    expect(await endServerSession(env, fakeApi(async () => (asked++, { ok: true })))).toBe('done');
    expect(asked).toBe(0);
  });

  it('wipeLocalData deletes every database and key of the app, of every user, and keeps the marker and what is not ours', async () => {
    const env = newEnv();
    for (const n of [storeName('alice@example.com'), outboxName('alice@example.com'), storeName('bob@example.com'), LEGACY_STORE, LEGACY_OUTBOX, 'other-app']) {
      await create(env.idb, n);
    }
    rememberUser(env, 'alice@example.com');
    env.session.setItem('corkboard.draft', 'x');
    env.local.setItem('other-app.key', 'kept');
    beginLogout(env);
    await wipeLocalData(env, ['alice@example.com']);
    expect(await names(env)).toEqual(['other-app']);
    expect(env.local.getItem(LOGOUT_PENDING_KEY)).toBe('1');
    expect(env.local.getItem('other-app.key')).toBe('kept');
    expect(env.local.getItem(USER_KEY)).toBeNull();
    expect(env.session.length).toBe(0);
  });

  it('wipeLocalData goes through while the databases are open (they close themselves)', async () => {
    const env = globalEnv();
    const store = await IdbStore.open(storeName('open@example.com'));
    const box = await IdbOutbox.open(outboxName('open@example.com'));
    await store.setValue('boards', ['secret']);
    await wipeLocalData(env, ['open@example.com']);
    const left = (await indexedDB.databases()).map((d) => d.name);
    expect(left).not.toContain(storeName('open@example.com'));
    expect(left).not.toContain(outboxName('open@example.com'));
    await expect(store.getValue('boards')).rejects.toThrow();
    void box;
  });
});

describe('a copy per user', () => {
  it('what one user fetched is not read for another', async () => {
    const env = globalEnv();
    const api = {} as Api;
    const alice = await createServices(api, 'alice-u@example.com', env);
    await alice.store.setValue('access:b1', { hasAccess: true });
    await alice.store.applyServer('b1', { version: 3, putNotes: [note('n1', { title: 'Alice secret' })], deleteNotes: [], putItems: [], deleteItems: [] });
    const bob = await createServices(api, 'bob-u@example.com', env);
    expect(await bob.store.getValue('access:b1')).toBeUndefined();
    expect((await bob.store.load('b1')).notes).toEqual([]);
    // Alice's copy is still hers when she comes back.
    expect((await alice.store.load('b1')).notes.map((n) => n.title)).toEqual(['Alice secret']);
    alice.close();
    bob.close();
  });

  it('unsent counts the rows with unsent edits, over every board, and the outbox entries', async () => {
    const env = globalEnv();
    const s = await createServices({} as Api, 'count@example.com', env);
    const at = '2026-01-01T00:00:00Z';
    // Two edits of n1 (one row), one of n2 on b1; one of n1 on b2 (another board's row).
    await s.store.putPending('b1', [
      { seq: 1, kind: 'note', id: 'n1', op: 'upsert', at },
      { seq: 2, kind: 'note', id: 'n1', op: 'upsert', at, afterSeq: 1 },
      { seq: 3, kind: 'note', id: 'n2', op: 'delete', at },
    ]);
    await s.store.putPending('b2', [{ seq: 1, kind: 'note', id: 'n1', op: 'upsert', at, rejected: { status: 400, message: 'no' } }]);
    expect(await s.unsent()).toEqual({ edits: 3, history: 0 });
    s.close();
  });

  it('a shared database of an older build is moved to its owner, and left alone for anyone else', async () => {
    const env = globalEnv();
    const legacy = await IdbStore.open(LEGACY_STORE);
    await legacy.setValue('me', 'old@example.com');
    await legacy.putPending('b1', [{ seq: 1, kind: 'note', id: 'n1', op: 'upsert', at: '2026-01-01T00:00:00Z' }]);
    legacy.close();
    const box = await IdbOutbox.open(LEGACY_OUTBOX);
    await box.put([{ boardId: 'b1', seq: 1, entry: { action: 'created', noteId: 'n1' } as never }]);
    box.close();

    const other = await createServices({} as Api, 'someone@example.com', env);
    expect(await other.unsent()).toEqual({ edits: 0, history: 0 });
    other.close();
    expect((await indexedDB.databases()).map((d) => d.name)).toContain(LEGACY_STORE);

    const owner = await createServices({} as Api, 'old@example.com', env);
    expect(await owner.unsent()).toEqual({ edits: 1, history: 1 });
    expect((await owner.store.load('b1')).pending.map((e) => e.id)).toEqual(['n1']);
    owner.close();
    const left = (await indexedDB.databases()).map((d) => d.name);
    expect(left).not.toContain(LEGACY_STORE);
    expect(left).not.toContain(LEGACY_OUTBOX);
    await adoptLegacy(env, 'old@example.com'); // nothing left to move: a no-op
  });
});

describe('unsentText', () => {
  it.each([
    { u: { edits: 3, history: 5 }, want: '3 changes have not reached the server yet. Log out and discard them?' },
    { u: { edits: 1, history: 0 }, want: '1 change has not reached the server yet. Log out and discard it?' },
    { u: { edits: 0, history: 2 }, want: '2 history entries have not reached the server yet. Log out and discard them?' },
  ])('$want', ({ u, want }) => {
    expect(unsentText(u)).toBe(want);
  });
});
