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
const VERSION = '0993bd12efd0a753';
const FILES = ["assets/AiErrorText-B_ck9rlB.js","assets/Analyse-DM5Ffa6D.js","assets/CanvasImportDialog-CGNQjYET.js","assets/ChatPanel-Bae7mnjI.css","assets/ChatPanel-DTmtK9P3.js","assets/ExportDialog--wNvadRZ.js","assets/HistoryPanel-1Tq_gZo0.js","assets/ImportDialog-1RpatxPz.js","assets/NoteAssist-BecKJ6GJ.js","assets/NoteHints-CpT03Nhn.js","assets/ResultTail-BlNQTIJN.js","assets/SlashMenu-XKdAHHI2.js","assets/SnapshotsPanel-Eb77gY6x.js","assets/TrackerGenerate-jO8RE7Ap.js","assets/VotePanels-CG5HsxDb.js","assets/ai-Dl3GIgj1.js","assets/api-D5OeCXsT.js","assets/boardContext-iuNq0MFQ.js","assets/export-DHzvntwr.css","assets/importgen-BivAHxmS.js","assets/importgen-Dn2DlGcc.css","assets/index-C4cuX3jz.css","assets/index-CJlHWifZ.js","assets/libesm-CCPUbXkV.js","assets/noteDraft-C-_v4weT.js"];
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
