// The app's services, built once: the API module, the local store and a
// factory for a board's sync client. Components get them from context.
import { createContext, useContext } from 'react';
import { createApi, liveUrl, type Api } from '../api/api';
import { IdbStore } from '../sync/idbStore';
import { MemoryStore, type LocalStore } from '../sync/store';
import { SyncClient } from '../sync/client';
import { LiveSocket, browserEnvironment, type SocketLike } from '../sync/socket';
import { ChangelogClient, feedFrom } from '../history/changelog';
import { IdbOutbox, MemoryOutbox, type Outbox } from '../history/outbox';
import { logUrl } from '../api/api';

export interface Services {
  api: Api;
  store: LocalStore;
  openBoard(boardId: string): SyncClient;
  /**
   * openChangelog starts the board's changelog fed by the client's local
   * edits; the returned close ends it (flushing what waits).
   */
  openChangelog(client: SyncClient): () => void;
}

export async function createServices(): Promise<Services> {
  const api = createApi();
  let store: LocalStore;
  try {
    store = await IdbStore.open();
  } catch {
    store = new MemoryStore(); // no IndexedDB (some private windows): online only
  }
  let outbox: Outbox;
  try {
    outbox = await IdbOutbox.open();
  } catch {
    outbox = new MemoryOutbox();
  }
  return {
    api,
    store,
    openBoard(boardId) {
      let client: SyncClient | null = null;
      const live = new LiveSocket({
        url: () => liveUrl(boardId, client?.getVersion() ?? 0),
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
