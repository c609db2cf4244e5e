// Registers the service worker that caches the app shell (dist/sw.js is
// generated at build time with the list of built files) and offers a new
// build when one is served: the new worker installs beside the running one
// and waits; the page shows "A new version is available — Reload"; Reload
// lets the new worker take over and reloads the page (the edits waiting to
// sync are in IndexedDB, so nothing is lost).

let registration: ServiceWorkerRegistration | null = null;
let waiting: ServiceWorker | null = null;
let updating = false;
const listeners = new Set<() => void>();

function setWaiting(w: ServiceWorker | null) {
  if (waiting === w) return;
  waiting = w;
  listeners.forEach((cb) => cb());
}

/** onUpdateAvailable subscribes to "a new build waits"; returns the unsubscribe. */
export function onUpdateAvailable(cb: () => void): () => void {
  listeners.add(cb);
  return () => listeners.delete(cb);
}

/** updateAvailable says whether a new build's worker is waiting. */
export function updateAvailable(): boolean {
  return waiting !== null;
}

/** reloadingForUpdate is true once the user chose Reload (no beforeunload prompt then). */
export function reloadingForUpdate(): boolean {
  return updating;
}

/** applyUpdate lets the waiting worker take over, then reloads this page. */
export function applyUpdate(): void {
  updating = true;
  const w = waiting;
  if (!w || !navigator.serviceWorker) {
    window.location.reload();
    return;
  }
  navigator.serviceWorker.addEventListener('controllerchange', () => window.location.reload(), { once: true });
  w.postMessage({ type: 'skipWaiting' });
}

/**
 * checkForUpdate asks the browser to look for a new sw.js now. Browsers do
 * so on navigations; a board stays open for hours without one, so the app
 * also asks when the tab is shown again, when the network or the live
 * connection comes back (a server restart is when a new build appears), and
 * every 30 minutes.
 */
export function checkForUpdate(): void {
  registration?.update().catch(() => {
    /* offline, or the server is restarting: the next check will do */
  });
}

function watch(reg: ServiceWorkerRegistration) {
  registration = reg;
  // A worker is "an update" only when another one controls the page; the
  // first install takes over at once.
  const offer = (w: ServiceWorker | null) => {
    if (w && w.state === 'installed' && navigator.serviceWorker.controller) setWaiting(w);
  };
  offer(reg.waiting);
  reg.addEventListener('updatefound', () => {
    const w = reg.installing;
    w?.addEventListener('statechange', () => offer(w));
  });
}

export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator) || import.meta.env.DEV) return;
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js').then(watch, () => {
      /* the app works without it, only not offline after a reload */
    });
  });
  window.addEventListener('online', checkForUpdate);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') checkForUpdate();
  });
  window.setInterval(checkForUpdate, 30 * 60 * 1000);
}
