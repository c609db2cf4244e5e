// Registers the service worker that caches the app shell (public/sw.js is
// generated at build time with the list of built files).
export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator) || import.meta.env.DEV) return;
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js').catch(() => {
      /* the app works without it, only not offline after a reload */
    });
  });
}
