// The parts of the browser front door that must be JavaScript: catching a
// trapped (panicked) wasm call, patching `fetch`, and the Service Worker
// registration dance. Everything that decides anything lives in Rust.

/** Polls a task in a microtask; a panic (a wasm trap) is reported, not thrown. */
export function schedulePoll(poll, failed, id) {
  queueMicrotask(() => {
    try {
      poll(id);
    } catch (error) {
      failed(id, String((error && error.message) || error));
    }
  });
}

/** Polls a task now, in the caller's call; a panic is reported, not thrown. */
export function pollNow(poll, failed, id) {
  try {
    poll(id);
  } catch (error) {
    failed(id, String((error && error.message) || error));
  }
}

/**
 * Replaces `fetch` on `target`; returns the original. The replacement builds
 * the `Request` (validating its arguments exactly as `fetch` would) and
 * hands it to `handler(request, resolve, reject)`.
 */
export function patchFetch(target, handler) {
  const original = target.fetch;
  target.fetch = function fetch(input, init) {
    let request;
    try {
      request = new Request(input, init);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => handler(request, resolve, reject));
  };
  return original;
}

// Requests and responses cross into Rust in one call each, their text
// fields packed into one string: every crossing costs about a microsecond
// in a hot loop and some 5-40 µs when a request arrives in a Service
// Worker page after its 2 ms hop (measured with marks in both browsers),
// and a list of strings crosses one string at a time, so a request's
// fields one by one cost more than the engine's whole answer.

/** `headers` (a `Headers` or name/value pairs) as [name, value, name, value, ...]. */
export function flatHeaders(headers) {
  const flat = [];
  for (const [name, value] of headers) flat.push(name, value);
  return flat;
}

/** Headers from Rust's `name\nvalue\n...` (no header holds a line break). */
function splitHeaders(joined) {
  return joined ? joined.split('\n') : [];
}

function headersOf(joined) {
  const flat = splitHeaders(joined);
  const headers = new Headers();
  for (let i = 0; i < flat.length; i += 2) headers.append(flat[i], flat[i + 1]);
  return headers;
}

/** This page's origin and '/': a page's origin never changes (`pushState` keeps it). */
let ownOrigin;

/**
 * What the engine needs of a request, all but its body, as one string (see
 * `BrowserRequest::unpack`): lines `method`, `url`, `page` (the page's URL,
 * against which relative predicates match), `document` ('1' for what the
 * browser loads for a document, a navigation or a static asset: it goes to
 * the network quietly when no handler answers it; `destination` is empty
 * for `fetch`, XHR and `EventSource`; URLs MSW counts as common assets are
 * recognised in Rust, which parses the URL anyway), the number of headers,
 * the headers' names and values (URLs and headers hold no line break), and
 * last, all the rest, `cookie`: what the browser would send along (scripts
 * never see a request's Cookie header), `document.cookie` when the
 * credentials mode lets it go.
 */
function describe(method, url, headers, credentials, mode, destination) {
  ownOrigin ??= location.origin + '/';
  const sendsCookies =
    credentials === 'include' || (credentials !== 'omit' && url.startsWith(ownOrigin));
  const cookie = sendsCookies && typeof document !== 'undefined' ? document.cookie : '';
  const loadedByDocument = mode === 'navigate' || (destination && destination !== 'report');
  let packed = `${method}\n${url}\n${location.href}\n${loadedByDocument ? '1' : ''}\n${headers.length >> 1}`;
  for (let i = 0; i < headers.length; i++) packed += '\n' + headers[i];
  return packed + '\n' + cookie;
}

/** Describes a `Request` of the patched `fetch`, all but its body. */
export function describeRequest(request) {
  return describe(request.method, request.url, flatHeaders(request.headers), request.credentials, request.mode, request.destination);
}

/**
 * Describes the upgrade request of a page's new WebSocket to `url` (its
 * http(s) form): a GET with `headers`, the page's `Origin`, and the cookies
 * of the page's own origin.
 */
export function describeUpgrade(url, headers) {
  return describe('GET', url, [...headers, 'origin', location.origin], 'same-origin', 'cors', '');
}

/** A mocked `Response` with the `url` (and `redirected`) a real one has. */
export function mockedResponse(status, statusText, headers, body, url, redirected) {
  const init = { status, statusText, headers: headersOf(headers) };
  // `body` is a view of wasm memory: copy it out.
  return setResponseUrl(new Response(body ? body.slice() : null, init), url, redirected);
}

/**
 * A mocked `Response` whose body streams from Rust: `pull(resolve, reject)`
 * resolves to the next chunk (a Uint8Array) or to `undefined` at the end,
 * and rejects when the stream failed, which errors the body; `cancel()`
 * drops the Rust stream. No queue (`highWaterMark: 0`): a chunk is pulled
 * when the reader asks for one, so the stream's error never overtakes a
 * chunk still queued (erroring a stream drops its queue).
 */
export function streamedResponse(status, statusText, headers, pull, cancel, url, redirected) {
  let cancelled = false;
  const body = new ReadableStream({
    async pull(controller) {
      const chunk = await new Promise((resolve, reject) => pull(resolve, reject));
      if (cancelled) return;
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
    cancel() {
      cancelled = true;
      cancel();
    },
  }, { highWaterMark: 0 });
  const init = { status, statusText, headers: headersOf(headers) };
  return setResponseUrl(new Response(body, init), url, redirected);
}

/** The reader of a real `response`'s body; null when it has none. */
export function bodyReader(response) {
  return response.body ? response.body.getReader() : null;
}

/** The next chunk `reader` reads (a Uint8Array), or undefined at the end. */
export function readChunk(reader) {
  return reader.read().then(({ done, value }) => (done ? undefined : value));
}

/** Stops reading: the browser closes the connection the body came over. */
export function cancelReader(reader) {
  reader.cancel().catch(() => {});
}

export function restoreFetch(target, original) {
  target.fetch = original;
}

/** Gives `response` the `url` (and `redirected`) a real fetch response has. */
export function setResponseUrl(response, url, redirected) {
  Object.defineProperty(response, 'url', { value: url, enumerable: true });
  if (redirected) Object.defineProperty(response, 'redirected', { value: true, enumerable: true });
  return response;
}

export function typeError(message) {
  return new TypeError(message);
}

/** The version of the page <-> worker protocol (see mocklib-worker.js). */
const PROTOCOL = 3;

function failure(kind, message) {
  const error = new Error(message);
  error.mocklibKind = kind;
  return error;
}

/** How long start() waits for its worker to activate. */
const ACTIVATION_MS = 10000;

/**
 * Registers the worker script and waits until it is activated. Rejects with an
 * Error whose `mocklibKind` is 'unsupported', 'missing' (404) or 'failed'.
 */
export async function registerServiceWorker(url, scope, originalFetch) {
  const container = globalThis.navigator && globalThis.navigator.serviceWorker;
  if (!container) {
    throw failure('unsupported', 'Service Workers are not available on this page (a file: page, an insecure origin or a browser without them)');
  }
  let registration;
  try {
    registration = await container.register(url, scope ? { scope } : undefined);
  } catch (error) {
    let status = 0;
    try {
      status = (await originalFetch.call(globalThis, url, { cache: 'no-store' })).status;
    } catch (_) {
      // The status only refines the message.
    }
    throw failure(status === 404 ? 'missing' : 'failed', String((error && error.message) || error));
  }
  const worker = registration.installing || registration.waiting || registration.active;
  if (worker.state !== 'activated') {
    await new Promise((resolve, reject) => {
      // Bounded: a browser activates a new worker only once the worker
      // active at its scope has finished the events it is handling, which
      // one that holds an event open delays for long (in Firefox MSW 3's,
      // started and stopped earlier in the same page: tens of seconds);
      // start() says so rather than hang.
      const timer = setTimeout(() => {
        const busy = registration.active && registration.active !== worker ? registration.active.scriptURL : '';
        reject(failure('failed', busy
          ? `the Service Worker did not activate within ${ACTIVATION_MS / 1000} s: the browser waits until the worker active at this scope (${busy}) has finished the events it is handling; reload the page to start from none`
          : `the Service Worker did not activate within ${ACTIVATION_MS / 1000} s (it is ${worker.state})`));
      }, ACTIVATION_MS);
      worker.addEventListener('statechange', () => {
        if (worker.state === 'activated') resolve();
        if (worker.state === 'redundant') reject(failure('failed', 'the Service Worker became redundant while installing'));
        if (worker.state === 'activated' || worker.state === 'redundant') clearTimeout(timer);
      });
    });
  }
  const controlled = location.href.startsWith(registration.scope);
  if (controlled) {
    // clients.claim() in the worker's activate handler makes it control us,
    // also when another worker (an earlier script at this scope) did. Chromium
    // hands over control before reporting 'activated'; the spec does not
    // promise that order, so wait for our worker to be the controller.
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(failure('failed', 'the Service Worker did not take control of this page within 5 s')), 5000);
      const check = () => {
        if (container.controller && container.controller.scriptURL === worker.scriptURL) {
          clearTimeout(timer);
          container.removeEventListener('controllerchange', check);
          resolve();
        }
      };
      container.addEventListener('controllerchange', check);
      check();
      // A page loaded past the worker (a hard reload; Firefox's WebDriver
      // refresh too) stays uncontrolled when the worker was already
      // active: its activate handler's claim is over. Ask it to claim again.
      if (!container.controller || container.controller.scriptURL !== worker.scriptURL) {
        worker.postMessage({ type: 'mocklib:claim' });
      }
    });
  }
  return { worker, scope: registration.scope, controlled };
}

/**
 * Opens the request channel to `worker`. For each request the worker asks
 * about, `onRequest(description, body, id, port)` is called (the answer goes back
 * with `postMocked` or `postOutcome`, a streamed body's chunks with
 * `postBodyChunk` and `postBodyEnd`); for the real response of an earlier
 * passthrough, `onResponse(id, status, headers)`; when the worker's reader
 * of a streamed body takes chunks or cancels, `onFlow(id, credit, cancelled)`.
 * Resolves to the worker's version; rejects ('outdated') when its script
 * speaks another protocol.
 */
export function connectServiceWorker(worker, onRequest, onResponse, onFlow) {
  const requests = new MessageChannel();
  requests.port1.onmessage = ({ data }) => {
    if (data.type === 'mocklib:pull') {
      onFlow(data.id, data.credit, false);
    } else if (data.type === 'mocklib:cancel') {
      onFlow(data.id, 0, true);
    } else if (data.type === 'mocklib:response') {
      onResponse(data.id, data.status, data.headers);
    } else {
      const body = data.body ? new Uint8Array(data.body) : null;
      onRequest(describe(data.method, data.url, data.headers, data.credentials, data.mode, data.destination), body, data.id, requests.port1);
    }
  };
  const reply = new MessageChannel();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(failure('failed', 'the Service Worker did not answer the activation within 5 s')), 5000);
    reply.port1.onmessage = (event) => {
      clearTimeout(timer);
      reply.port1.close();
      const { version, protocol } = event.data;
      if (protocol !== PROTOCOL) {
        worker.postMessage({ type: 'mocklib:deactivate' });
        requests.port1.close();
        const error = failure('outdated', `the script is from mocklib ${version} and speaks protocol ${protocol}; this page speaks ${PROTOCOL}`);
        error.version = version;
        reject(error);
        return;
      }
      // Idle workers are stopped by the browser (and forget the page): ping.
      const keepalive = setInterval(() => worker.postMessage({ type: 'mocklib:keepalive' }), 5000);
      resolve({ version, port: requests.port1, keepalive });
    };
    worker.postMessage({ type: 'mocklib:activate', protocol: PROTOCOL }, [requests.port2, reply.port2]);
  });
}

/**
 * Tells the worker to stop asking this page. Requests it already sent us
 * (or sends before it reads this) are still answered — as passthrough, the
 * engine being stopped — until it acknowledges; only then is the channel
 * closed and the `callbacks` (which answer them) released.
 */
export function disconnectServiceWorker(worker, connection, callbacks) {
  clearInterval(connection.keepalive);
  const ack = new MessageChannel();
  const close = () => {
    ack.port1.close();
    connection.port.close();
    connection.callbacks = undefined;
  };
  connection.callbacks = callbacks;
  ack.port1.onmessage = close;
  setTimeout(close, 5000); // a worker that is gone never acknowledges
  worker.postMessage({ type: 'mocklib:deactivate' }, [ack.port2]);
}

/**
 * Answers request `id` with a mocked response: its whole `body`, or, when
 * `streamed`, only its head (the chunks follow).
 */
export function postMocked(port, id, status, statusText, headers, body, streamed) {
  // `body` is a view of wasm memory: copy it out, then transfer the copy.
  const buffer = body ? body.slice().buffer : null;
  port.postMessage(
    { id, kind: 'mocked', status, statusText, headers: splitHeaders(headers), body: buffer, streamed },
    buffer ? [buffer] : [],
  );
}

/** The next chunk of request `id`'s streamed body. */
export function postBodyChunk(port, id, chunk) {
  const buffer = chunk.slice().buffer;
  port.postMessage({ id, kind: 'body-chunk', chunk: buffer }, [buffer]);
}

/** The end of request `id`'s streamed body; with `error`, an abrupt one. */
export function postBodyEnd(port, id, error) {
  port.postMessage(error === undefined ? { id, kind: 'body-end' } : { id, kind: 'body-error', error });
}

/** Answers request `id` with 'passthrough' or 'network-error'. */
export function postOutcome(port, id, kind) {
  port.postMessage({ id, kind });
}
