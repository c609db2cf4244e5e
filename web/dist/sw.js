// Corkboard's service worker: keeps the app shell so that a board opened
// before opens with the network off, even after a reload. Generated at
// build time from web/sw/sw.js: the version and the file list are filled in by
// vite.config.ts (a hash of the built file names, and the list).
//
// - Hashed files under /assets/ never change: cache first.
// - Pages (navigations): network first, so a new build is seen at once;
//   the cached index.html when the network fails.
// - /api/ is never cached here: board data lives in IndexedDB.
// A new build installs its cache beside the old one and waits: the page
// offers "A new version is available — Reload", and Reload posts
// {type: 'skipWaiting'}; the new worker then takes over, deletes the old
// cache, and the page reloads on the new build. The first install takes
// over at once (there is nothing to wait for).
const VERSION = '4716770c44a1eebd';
const FILES = ["assets/AiErrorText-BejLo7kj.js","assets/Analyse-DeOtaZtj.js","assets/CanvasImportDialog-D9ZcpMwo.js","assets/ChatPanel-Bae7mnjI.css","assets/ChatPanel-D2FbaN-X.js","assets/ExportDialog-CMTv3dac.js","assets/HistoryPanel-CcVeYj4-.js","assets/ImportDialog-DM_E9Dfg.js","assets/NoteAssist-SobLxFu7.js","assets/NoteHints-FeRFDiw-.js","assets/SlashMenu-Dm-4Ah_Y.js","assets/SnapshotsPanel-CbM9n4gO.js","assets/TrackerGenerate-CtXhBDgm.js","assets/ai-D8en7buA.js","assets/api-C3eB7gWK.js","assets/boardContext-iuNq0MFQ.js","assets/export-DHzvntwr.css","assets/importgen-D8W1horF.js","assets/importgen-Dn2DlGcc.css","assets/index-CysqX6qt.css","assets/index-Dkv6-jkz.js","assets/libesm-CCPUbXkV.js","assets/noteDraft-C904GJqG.js"];
const CACHE = 'corkboard-' + VERSION;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((c) => c.addAll(['/', ...FILES.map((f) => '/' + f)])),
  );
});

self.addEventListener('message', (event) => {
  if (event.data && event.data.type === 'skipWaiting') self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('corkboard-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin || url.pathname.startsWith('/api/')) return;
  if (req.mode === 'navigate') {
    event.respondWith(
      fetch(req).catch(() => caches.open(CACHE).then((c) => c.match('/')).then((r) => r || Response.error())),
    );
    return;
  }
  if (url.pathname.startsWith('/assets/')) {
    event.respondWith(caches.open(CACHE).then((c) => c.match(req).then((hit) => hit || fetch(req))));
    return;
  }
  event.respondWith(fetch(req).catch(() => caches.open(CACHE).then((c) => c.match(req)).then((r) => r || Response.error())));
});
