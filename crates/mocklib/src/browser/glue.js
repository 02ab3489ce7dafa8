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

/** Replaces `fetch` on `target`; returns the original. */
export function patchFetch(target, handler) {
  const original = target.fetch;
  target.fetch = function fetch(input, init) {
    return handler(input, init);
  };
  return original;
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

function failure(kind, message) {
  const error = new Error(message);
  error.mocklibKind = kind;
  return error;
}

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
      worker.addEventListener('statechange', () => {
        if (worker.state === 'activated') resolve();
        if (worker.state === 'redundant') reject(failure('failed', 'the Service Worker became redundant while installing'));
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
    });
  }
  return { worker, scope: registration.scope, controlled };
}

/**
 * Opens the request channel to `worker`; `onRequest(data, port)` is called
 * for every message the worker sends on it. Resolves to the worker's version.
 */
export function connectServiceWorker(worker, onRequest) {
  const requests = new MessageChannel();
  requests.port1.onmessage = (event) => onRequest(event.data, requests.port1);
  const reply = new MessageChannel();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(failure('failed', 'the Service Worker did not answer the activation within 5 s')), 5000);
    reply.port1.onmessage = (event) => {
      clearTimeout(timer);
      reply.port1.close();
      // Idle workers are stopped by the browser (and forget the page): ping.
      const keepalive = setInterval(() => worker.postMessage({ type: 'mocklib:keepalive' }), 5000);
      resolve({ version: event.data.version, port: requests.port1, keepalive });
    };
    worker.postMessage({ type: 'mocklib:activate', protocol: 1 }, [requests.port2, reply.port2]);
  });
}

/**
 * Tells the worker to stop asking this page. Requests it already sent us
 * (or sends before it reads this) are still answered — as passthrough, the
 * engine being stopped — until it acknowledges; only then is the channel
 * closed and `onRequest` released.
 */
export function disconnectServiceWorker(worker, connection, onRequest) {
  clearInterval(connection.keepalive);
  const ack = new MessageChannel();
  const close = () => {
    ack.port1.close();
    connection.port.close();
    connection.onRequest = undefined;
  };
  connection.onRequest = onRequest;
  ack.port1.onmessage = close;
  setTimeout(close, 5000); // a worker that is gone never acknowledges
  worker.postMessage({ type: 'mocklib:deactivate' }, [ack.port2]);
}

/** `postMessage` with the body transferred, not copied. */
export function postAnswer(port, answer) {
  port.postMessage(answer, answer.body ? [answer.body] : []);
}
