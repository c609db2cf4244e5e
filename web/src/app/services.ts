// The app's services, built once: the API module, the local store and a
// factory for a board's sync client. Components get them from context.
import { createContext, useContext } from 'react';
import { createApi, liveUrl, type Api } from '../api/api';
import { IdbStore } from '../sync/idbStore';
import { MemoryStore, type LocalStore } from '../sync/store';
import { SyncClient } from '../sync/client';
import { LiveSocket, browserEnvironment, type SocketLike } from '../sync/socket';

export interface Services {
  api: Api;
  store: LocalStore;
  openBoard(boardId: string): SyncClient;
}

export async function createServices(): Promise<Services> {
  const api = createApi();
  let store: LocalStore;
  try {
    store = await IdbStore.open();
  } catch {
    store = new MemoryStore(); // no IndexedDB (some private windows): online only
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
  };
}

export const ServicesContext = createContext<Services | null>(null);

export function useServices(): Services {
  const s = useContext(ServicesContext);
  if (!s) throw new Error('useServices outside ServicesContext');
  return s;
}
