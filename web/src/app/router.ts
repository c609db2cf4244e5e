// A tiny router on the History API: the app has two screens (/ and /b/<id>).
import { useSyncExternalStore } from 'react';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  listeners.forEach((l) => l());
}

export function usePath(): string {
  return useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    () => location.pathname,
  );
}

/** boardPath is the URL of a board. */
export const boardPath = (id: string) => `/b/${encodeURIComponent(id)}`;

/** boardIdOf returns the board ID of a /b/<id> path, or null. */
export function boardIdOf(path: string): string | null {
  const m = /^\/b\/([^/]+)\/?$/.exec(path);
  return m ? decodeURIComponent(m[1]) : null;
}
