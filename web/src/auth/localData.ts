// What the client keeps of a user in the browser, and how logout removes
// it (docs/web-client.md, "Logout on a shared computer").
//
// - Each user has IndexedDB databases of their own, named for their
//   address: the sync store (boards, notes, items, unsent edits, the board
//   list, access answers, marks) and the changelog outbox. The app opens
//   only the databases of the user the server (or, offline, the last login)
//   names, so a copy left behind by a logout that never finished (a tab
//   killed halfway) is never read for anyone else.
// - localStorage holds two keys: who logged in last (to start offline)
//   and the "logout pending" marker of a logout made offline.
// - Logout deletes every database and storage key of the app. The service
//   worker caches only the app shell (never /api/), so its caches stay.
import type { Api } from '../api/api';

/** USER_KEY is localStorage's key of the address that logged in last. */
export const USER_KEY = 'corkboard.user';
/** LOGOUT_PENDING_KEY marks a logout whose server request has not been made yet. */
export const LOGOUT_PENDING_KEY = 'corkboard.logoutPending';
/** PREFIX starts the name of every database and storage key of the app. */
const PREFIX = 'corkboard';
/** LEGACY_STORE and LEGACY_OUTBOX are the shared databases of builds before per-user ones. */
export const LEGACY_STORE = 'corkboard';
export const LEGACY_OUTBOX = 'corkboard-changelog';

/** OFFLINE_LOGOUT is what a logout made offline tells (docs/web-client.md, "Logout on a shared computer"). */
export const OFFLINE_LOGOUT =
  'You are offline, so your session on the server could not be ended yet. Nothing of yours is left on this device, and the session ends as soon as Corkboard is open here with a connection again.';

/** unsentText is the logout question for what has not reached the server. */
export function unsentText(u: { edits: number; history: number }): string {
  const [n, one, many] = u.edits > 0 ? [u.edits, 'change', 'changes'] : [u.history, 'history entry', 'history entries'];
  return `${n} ${n === 1 ? `${one} has` : `${many} have`} not reached the server yet. Log out and discard ${n === 1 ? 'it' : 'them'}?`;
}

/** storeName is the name of email's sync database. */
export const storeName = (email: string) => `corkboard:${email}`;
/** outboxName is the name of email's changelog outbox database. */
export const outboxName = (email: string) => `corkboard-changelog:${email}`;

/** Env is the browser's storage; tests pass their own. */
export interface Env {
  local: Storage;
  session: Storage;
  idb: IDBFactory;
}

/** browserEnv is the page's storage. */
export function browserEnv(): Env {
  return { local: window.localStorage, session: window.sessionStorage, idb: window.indexedDB };
}

/**
 * tryStorage is f(), or fallback where the browser refuses storage (some
 * private modes throw on access): the app then works online only.
 */
function tryStorage<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}

/** lastUser is the address that logged in last on this browser, if any. */
export function lastUser(env: Env): string | null {
  return tryStorage(() => env.local.getItem(USER_KEY), null);
}

/** rememberUser records email as the user to start offline with. */
export function rememberUser(env: Env, email: string): void {
  tryStorage(() => env.local.setItem(USER_KEY, email), undefined);
}

/** logoutPending says whether a logout still has to end the server session. */
export function logoutPending(env: Env): boolean {
  return tryStorage(() => env.local.getItem(LOGOUT_PENDING_KEY) !== null, false);
}

/**
 * beginLogout is the first, synchronous step of a logout: the browser
 * forgets who is logged in and marks the server logout as pending. Both are
 * localStorage writes, done before anything that can fail or be cut short,
 * so a tab killed after this point starts logged out and ends the server
 * session at its next load.
 */
export function beginLogout(env: Env): void {
  tryStorage(() => {
    env.local.setItem(LOGOUT_PENDING_KEY, '1');
    env.local.removeItem(USER_KEY);
  }, undefined);
}

/**
 * loggedInAgain drops a pending logout once a new login succeeded: its
 * cookie replaced the one the logout was to end, so that token is in no
 * browser any more, and ending "the session" now would end the new one.
 * (Login tries the pending logout first; this covers its failing.)
 */
export function loggedInAgain(env: Env): void {
  tryStorage(() => env.local.removeItem(LOGOUT_PENDING_KEY), undefined);
}

/** LogoutResult says whether the server session was ended, or must wait for the network. */
export type LogoutResult = 'done' | 'offline';

/**
 * endServerSession makes the pending server logout, if any: done when the
 * server ended the session or had none (401), offline when it could not be
 * reached (the marker stays for the next try). Another error (a 5xx) keeps
 * the marker too, and counts as offline: the session may still live.
 */
export async function endServerSession(env: Env, api: Pick<Api, 'logout'>): Promise<LogoutResult> {
  if (!logoutPending(env)) return 'done';
  try {
    await api.logout();
  } catch (e) {
    if ((e as { status?: number }).status !== 401) return 'offline';
  }
  tryStorage(() => env.local.removeItem(LOGOUT_PENDING_KEY), undefined);
  return 'done';
}

/** deleteDatabase deletes name, resolving once it is gone (or failed to go). */
function deleteDatabase(idb: IDBFactory, name: string): Promise<void> {
  return new Promise((resolve) => {
    const req = idb.deleteDatabase(name);
    // 'blocked' is not an end: the deletion goes on once the other
    // connections close, which ours do (IdbStore and IdbOutbox close on
    // versionchange), and other tabs of the app follow on USER_KEY's change.
    req.onsuccess = () => resolve();
    req.onerror = () => resolve();
  });
}

/** appDatabases names the app's databases: all of them where the browser lists them, the known ones otherwise. */
async function appDatabases(idb: IDBFactory, known: string[]): Promise<string[]> {
  const names = new Set(known);
  if (typeof idb.databases === 'function') {
    try {
      for (const d of await idb.databases()) if (d.name?.startsWith(PREFIX)) names.add(d.name);
    } catch {
      /* the known names are still deleted */
    }
  }
  return [...names];
}

/**
 * wipeLocalData deletes everything the app keeps of users in this browser:
 * every database of the app (every user's, and the shared ones of older
 * builds), and its localStorage and sessionStorage keys but the logout
 * marker. emails names databases to delete even where the browser cannot
 * list them.
 */
export async function wipeLocalData(env: Env, emails: string[] = []): Promise<void> {
  for (const s of [env.local, env.session]) {
    tryStorage(() => {
      const keys: string[] = [];
      for (let i = 0; i < s.length; i++) keys.push(s.key(i)!);
      keys.filter((k) => k.startsWith(PREFIX) && k !== LOGOUT_PENDING_KEY).forEach((k) => s.removeItem(k));
    }, undefined);
  }
  const known = [LEGACY_STORE, LEGACY_OUTBOX, ...emails.flatMap((e) => [storeName(e), outboxName(e)])];
  await Promise.all((await appDatabases(env.idb, known)).map((n) => deleteDatabase(env.idb, n)));
}

/** databaseExists says whether name exists (false where the browser cannot tell). */
export async function databaseExists(idb: IDBFactory, name: string): Promise<boolean> {
  if (typeof idb.databases !== 'function') return false;
  try {
    return (await idb.databases()).some((d) => d.name === name);
  } catch {
    return false;
  }
}

/** copyDatabase copies every record of every object store of from into to, an existing database with the same stores. */
async function copyDatabase(idb: IDBFactory, from: string, to: string): Promise<void> {
  const src = await request(idb.open(from));
  const dst = await request(idb.open(to));
  try {
    for (const store of Array.from(src.objectStoreNames)) {
      if (!dst.objectStoreNames.contains(store)) continue;
      const tx = src.transaction(store, 'readonly');
      const [keys, values] = await Promise.all([request(tx.objectStore(store).getAllKeys()), request(tx.objectStore(store).getAll())]);
      const out = dst.transaction(store, 'readwrite');
      const os = out.objectStore(store);
      values.forEach((v, i) => (os.keyPath === null ? os.put(v, keys[i]) : os.put(v)));
      await new Promise<void>((resolve, reject) => {
        out.oncomplete = () => resolve();
        out.onerror = () => reject(out.error);
      });
    }
  } finally {
    src.close();
    dst.close();
  }
}

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

/**
 * adoptLegacy moves the shared databases of a build before per-user ones to
 * email's, when they were email's (the old store's "me" value): an update
 * must not lose the edits waiting to sync. They are someone else's
 * otherwise, and stay unread until a logout deletes them. email's own
 * databases must exist already (IdbStore.open and IdbOutbox.open create them).
 */
export async function adoptLegacy(env: Env, email: string): Promise<void> {
  if (!(await databaseExists(env.idb, LEGACY_STORE))) return;
  const old = await request(env.idb.open(LEGACY_STORE));
  let owner: unknown;
  try {
    owner = old.objectStoreNames.contains('values') ? await request(old.transaction('values', 'readonly').objectStore('values').get('me')) : undefined;
  } finally {
    old.close();
  }
  if (owner !== email) return;
  await copyDatabase(env.idb, LEGACY_STORE, storeName(email));
  if (await databaseExists(env.idb, LEGACY_OUTBOX)) await copyDatabase(env.idb, LEGACY_OUTBOX, outboxName(email));
  await Promise.all([deleteDatabase(env.idb, LEGACY_STORE), deleteDatabase(env.idb, LEGACY_OUTBOX)]);
}
