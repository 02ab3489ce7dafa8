/* A Service Worker with no mocklib code in it, for benches/fetch.rs (the
 * cost floor of Service Worker interception in this browser) and for
 * tests/service_worker.rs (an app's own worker that mocklib's replaces).
 *   /reference/direct  answered by the worker itself, no page involved
 *   /reference/echo    answered by the page over a MessagePort, as mocklib
 *                      does, but by a few lines of JavaScript instead of wasm
 *   /reference/resumable  an event stream (one event, id 41, retry 10 ms)
 *                      saying which Last-Event-ID the worker saw
 * Everything else goes to the network.
 */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

let page;
const pending = new Map();
let nextId = 0;

self.addEventListener('message', (event) => {
  page = event.ports[0];
  page.onmessage = (message) => {
    const settle = pending.get(message.data.id);
    pending.delete(message.data.id);
    settle(message.data);
  };
  event.ports[1].postMessage('ready');
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.pathname === '/reference/direct') {
    event.respondWith(
      new Response('{"name":"John"}', { headers: { 'content-type': 'application/json' } }),
    );
  } else if (url.pathname === '/reference/resumable') {
    const seen = event.request.headers.get('last-event-id') || 'none';
    event.respondWith(
      new Response(`id: 41\nretry: 10\ndata: last event id: ${seen}\n\n`, {
        headers: { 'content-type': 'text/event-stream' },
      }),
    );
  } else if (url.pathname === '/reference/echo' && page) {
    event.respondWith(echo(event.request));
  }
});

async function echo(request) {
  const id = nextId++;
  const reply = new Promise((resolve) => pending.set(id, resolve));
  page.postMessage({ id, url: request.url, method: request.method, headers: [...request.headers] });
  const answer = await reply;
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
