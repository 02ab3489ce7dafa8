/* A Service Worker that holds a fetch event open (its answer to /busy/hold
 * never settles), as one that another mocking library left behind in the
 * page may: tests/service_worker_busy.rs starts mocklib's beside it.
 * At the root, as reference-worker.js: a worker controls only the pages
 * under its own folder. */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  if (new URL(event.request.url).pathname === '/busy/hold') {
    event.respondWith(new Promise(() => {}));
  }
});
