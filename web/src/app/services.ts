// The app's services: the API module, the local store of the user logged in
// and a factory for a board's sync client. Built for each user who logs in
// (their own databases, auth/localData.ts); the login screen gets guest
// services that keep nothing. Components get them from context.
import { createContext, useContext } from 'react';
import { liveUrl, type Api } from '../api/api';
import { IdbStore } from '../sync/idbStore';
import { MemoryStore, type LocalStore } from '../sync/store';
import { SyncClient } from '../sync/client';
import { LiveSocket, browserEnvironment, type SocketLike } from '../sync/socket';
import { ChangelogClient, feedFrom } from '../history/changelog';
import { IdbOutbox, MemoryOutbox, type Outbox } from '../history/outbox';
import { logUrl } from '../api/api';
import { adoptLegacy, outboxName, storeName, type Env } from '../auth/localData';

/** Unsent is what has not reached the server: board edits and changelog entries. */
export interface Unsent {
  edits: number;
  history: number;
}

export interface Services {
  api: Api;
  store: LocalStore;
  openBoard(boardId: string): SyncClient;
  /**
   * openChangelog starts the board's changelog fed by the client's local
   * edits; the returned close ends it (flushing what waits).
   */
  openChangelog(client: SyncClient): () => void;
  /** unsent counts what has not reached the server, over every board (asked before logout). */
  unsent(): Promise<Unsent>;
  /** close closes the databases (before a logout deletes them); safe twice. */
  close(): void;
}

/**
 * createServices builds the services of email: their own databases, into
 * which a shared database of an older build is moved first when it was
 * theirs.
 */
export async function createServices(api: Api, email: string, env: Env): Promise<Services> {
  let store: LocalStore & { close?(): void };
  let outbox: Outbox & { close?(): void };
  try {
    const [s, o] = await Promise.all([IdbStore.open(storeName(email)), IdbOutbox.open(outboxName(email))]);
    store = s;
    outbox = o;
    await adoptLegacy(env, email).catch((err) => console.error('corkboard: moving the local copy of an older build failed', err));
  } catch {
    // No IndexedDB (some private windows): online only.
    store = new MemoryStore();
    outbox = new MemoryOutbox();
  }
  return servicesOn(api, store, outbox);
}

/** guestServices are the services of the login screen: the API, and a store that keeps nothing. */
export function guestServices(api: Api): Services {
  return servicesOn(api, new MemoryStore(), new MemoryOutbox());
}

/**
 * linkServices are the services of a read-only link's page: api made with
 * linkFetch, a store that keeps nothing on the device (the holder is
 * nobody the device knows), the live socket opened with the link, and no
 * changelog (a link cannot edit).
 */
export function linkServices(api: Api, token: string): Services {
  const s = servicesOn(api, new MemoryStore(), new MemoryOutbox(), token);
  return { ...s, openChangelog: () => () => {} };
}

function servicesOn(api: Api, store: LocalStore & { close?(): void }, outbox: Outbox & { close?(): void }, link?: string): Services {
  return {
    api,
    store,
    async unsent() {
      const [edits, history] = await Promise.all([store.countPending().catch(() => 0), outbox.count().catch(() => 0)]);
      return { edits, history };
    },
    close() {
      store.close?.();
      outbox.close?.();
    },
    openBoard(boardId) {
      let client: SyncClient | null = null;
      const live = new LiveSocket({
        url: () => liveUrl(boardId, client?.getVersion() ?? 0, location, link),
        open: (url) => new WebSocket(url) as unknown as SocketLike,
        env: browserEnvironment(),
      });
      client = new SyncClient({ boardId, transport: api, store, live, waitForDrawing: true });
      return client;
    },
    openChangelog(client) {
      const boardId = client.boardId;
      const log = new ChangelogClient({
        boardId,
        sender: api,
        outbox,
        current: (id) => client.getSnapshot().notes.get(id),
        currentName: () => client.getSnapshot().name,
        // A string body goes as text/plain: a simple request, so no
        // preflight, and POST /log needs no Content-Type (docs/changelog.md).
        beacon: (body) => navigator.sendBeacon(logUrl(boardId), body),
      });
      const unfeed = feedFrom(client, log);
      const onHide = () => log.unload();
      window.addEventListener('pagehide', onHide);
      void log.start();
      return () => {
        window.removeEventListener('pagehide', onHide);
        unfeed();
        void log.close();
      };
    },
  };
}

export const ServicesContext = createContext<Services | null>(null);

export function useServices(): Services {
  const s = useContext(ServicesContext);
  if (!s) throw new Error('useServices outside ServicesContext');
  return s;
}
