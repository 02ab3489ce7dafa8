// The page's `WebSocket` class while a worker is started (MSW: the
// WebSocket interceptor `setupWorker` applies in both of its modes, since a
// Service Worker never sees a WebSocket). This file keeps the browser's API
// and moves events; what becomes of each socket is decided in Rust
// (websocket.rs): a mocked connection, a real socket joined to the page's,
// or a failure.

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** What `Sec-WebSocket-Protocol` allows in one sub-protocol (a token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The browser's own class, kept while ours is in place. */
let Original = globalThis.WebSocket;

/**
 * The Rust hooks of each started worker, the newest last: it decides about
 * new sockets. Ours is the page's class while this is not empty.
 */
const patches = [];

function syntaxError(message) {
  return new DOMException(`Failed to construct 'WebSocket': ${message}`, 'SyntaxError');
}

/** The URL as the browser's constructor parses it (relative, http(s) allowed). */
function parseUrl(url) {
  let parsed;
  try {
    parsed = new URL(String(url), globalThis.document ? document.baseURI : location.href);
  } catch (_) {
    throw syntaxError(`The URL '${url}' is invalid.`);
  }
  if (parsed.protocol === 'http:') parsed.protocol = 'ws:';
  else if (parsed.protocol === 'https:') parsed.protocol = 'wss:';
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw syntaxError(`The URL's scheme must be either 'http', 'https', 'ws', or 'wss'. '${parsed.protocol.slice(0, -1)}' is not allowed.`);
  }
  if (parsed.href.includes('#')) {
    throw syntaxError(`The URL contains a fragment identifier ('${parsed.hash}'). Fragment identifiers are not allowed in WebSocket URLs.`);
  }
  return parsed.href;
}

function parseProtocols(protocols) {
  const list = protocols === undefined ? [] : typeof protocols === 'string' ? [protocols] : Array.from(protocols, String);
  list.forEach((protocol, index) => {
    if (!TOKEN.test(protocol)) throw syntaxError(`The subprotocol '${protocol}' is invalid.`);
    if (list.indexOf(protocol) !== index) throw syntaxError(`The subprotocol '${protocol}' is duplicated.`);
  });
  return list;
}

/** What `send()` was given, as Rust takes it: text, or a copy of the bytes. */
function textOrBytes(data) {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  return String(data);
}

/**
 * Where a mocked socket's sends and close go: to Rust, as socket `id`'s. A
 * Blob's bytes are read first; later messages wait for it, keeping the order.
 */
function mockedSink(id, patch, controller) {
  let reading = null;
  const later = (deliver) => {
    const read = (reading = reading.then(deliver).catch(() => {}));
    read.then(() => {
      if (reading === read) reading = null;
    });
  };
  return {
    send(data) {
      if (data instanceof Blob) {
        reading = reading || Promise.resolve();
        later(async () => patch.onMessage(id, new Uint8Array(await data.arrayBuffer())));
      } else if (reading) {
        const value = textOrBytes(data);
        later(() => patch.onMessage(id, value));
      } else {
        patch.onMessage(id, textOrBytes(data));
      }
    },
    close(code, reason) {
      if (reading) later(() => patch.onClose(id, code, reason));
      else patch.onClose(id, code, reason);
    },
    abort() {
      patch.onClose(id, 1006, '');
      setTimeout(() => controller.fail());
    },
  };
}

class MockedWebSocket extends EventTarget {
  static CONNECTING = CONNECTING;
  static OPEN = OPEN;
  static CLOSING = CLOSING;
  static CLOSED = CLOSED;

  #url;
  #origin;
  #readyState = CONNECTING;
  #protocol = '';
  #extensions = '';
  #binaryType = 'blob';
  /** The `on*` attributes' handlers, by event type. */
  #handlers = {};
  /** Where `send()` and `close()` go. */
  #sink;

  constructor(url, protocols) {
    super();
    if (arguments.length === 0) {
      throw new TypeError("Failed to construct 'WebSocket': 1 argument required, but only 0 present.");
    }
    this.#url = parseUrl(url);
    this.#origin = new URL(this.#url).origin;
    const offered = parseProtocols(protocols);
    // What Rust (and a real socket joined to this one) drive it through.
    const controller = {
      open: (protocol, extensions) => this.#open(protocol, extensions),
      deliver: (data) => this.#deliver(data),
      error: () => this.dispatchEvent(new Event('error')),
      end: (code, reason, wasClean) => this.#end(code, reason, wasClean),
      fail: () => this.#fail(),
      redirect: (sink) => {
        this.#sink = sink;
      },
    };
    const patch = patches[patches.length - 1];
    if (patch) {
      const id = patch.connect(controller, this.#url, offered);
      this.#sink = mockedSink(id, patch, controller);
    } else {
      // A class kept from before stop(): a plain socket.
      passThrough(controller, this.#url, offered).catch(() => {});
    }
  }

  get [Symbol.toStringTag]() { return 'WebSocket'; }
  get url() { return this.#url; }
  get readyState() { return this.#readyState; }
  get protocol() { return this.#protocol; }
  get extensions() { return this.#extensions; }
  get bufferedAmount() { return 0; }
  get binaryType() { return this.#binaryType; }
  set binaryType(type) {
    // An enumerated attribute: other values are ignored.
    if (type === 'blob' || type === 'arraybuffer') this.#binaryType = type;
  }

  get onopen() { return this.#handler('open'); }
  set onopen(handler) { this.#setHandler('open', handler); }
  get onmessage() { return this.#handler('message'); }
  set onmessage(handler) { this.#setHandler('message', handler); }
  get onerror() { return this.#handler('error'); }
  set onerror(handler) { this.#setHandler('error', handler); }
  get onclose() { return this.#handler('close'); }
  set onclose(handler) { this.#setHandler('close', handler); }

  send(data) {
    if (arguments.length === 0) {
      throw new TypeError("Failed to execute 'send' on 'WebSocket': 1 argument required, but only 0 present.");
    }
    if (this.#readyState === CONNECTING) {
      throw new DOMException("Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.", 'InvalidStateError');
    }
    if (this.#readyState === OPEN) this.#sink.send(data);
  }

  close(code, reason) {
    if (code !== undefined) {
      code = Number(code);
      if (code !== 1000 && !(code >= 3000 && code <= 4999)) {
        throw new DOMException(`Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. ${code} is neither.`, 'InvalidAccessError');
      }
    }
    reason = reason === undefined ? '' : String(reason);
    if (new TextEncoder().encode(reason).length > 123) {
      throw new DOMException("Failed to execute 'close' on 'WebSocket': The close reason must not be greater than 123 UTF-8 bytes.", 'SyntaxError');
    }
    if (this.#readyState === CLOSING || this.#readyState === CLOSED) return;
    const connecting = this.#readyState === CONNECTING;
    this.#readyState = CLOSING;
    // Closed while connecting: the connection fails (error, then close 1006).
    if (connecting) this.#sink.abort();
    // Without a code the close frame carries none: 1005 on both sides.
    else this.#sink.close(code === undefined ? 1005 : code, reason);
  }

  #handler(type) {
    return this.#handlers[type] ?? null;
  }

  /** An `on*` attribute: one listener, added when first set, calls the current handler. */
  #setHandler(type, handler) {
    if (!(type in this.#handlers)) {
      this.addEventListener(type, (event) => {
        const current = this.#handlers[type];
        if (typeof current === 'function') current.call(this, event);
      });
    }
    this.#handlers[type] = typeof handler === 'function' ? handler : null;
  }

  #open(protocol, extensions) {
    if (this.#readyState !== CONNECTING) return;
    this.#readyState = OPEN;
    this.#protocol = protocol || '';
    this.#extensions = extensions || '';
    this.dispatchEvent(new Event('open'));
  }

  /** A message: text, or bytes (an ArrayBuffer, or a view of wasm memory). */
  #deliver(data) {
    // Messages after close() are dropped, as the browser drops them.
    if (this.#readyState !== OPEN) return;
    if (typeof data !== 'string') {
      const buffer = data instanceof ArrayBuffer ? data : data.slice().buffer;
      data = this.#binaryType === 'blob' ? new Blob([buffer]) : buffer;
    }
    this.dispatchEvent(new MessageEvent('message', { data, origin: this.#origin }));
  }

  #end(code, reason, wasClean) {
    if (this.#readyState === CLOSED) return;
    this.#readyState = CLOSED;
    this.dispatchEvent(new CloseEvent('close', { code, reason, wasClean }));
  }

  #fail() {
    if (this.#readyState === CLOSED) return;
    this.#readyState = CLOSED;
    this.dispatchEvent(new Event('error'));
    this.dispatchEvent(new CloseEvent('close', { code: 1006, reason: '', wasClean: false }));
  }
}

for (const [name, value] of Object.entries({ CONNECTING, OPEN, CLOSING, CLOSED })) {
  Object.defineProperty(MockedWebSocket.prototype, name, { value, enumerable: true });
}
Object.defineProperty(MockedWebSocket, 'name', { value: 'WebSocket' });

/**
 * Makes ours the page's `WebSocket` class (the first worker to start does):
 * each new socket goes to `connect(controller, url, protocols)`, which
 * returns its id; its sends and close go to `onMessage(id, data)` and
 * `onClose(id, code, reason)`. Returns the handle `unpatchWebSocket` takes.
 */
export function patchWebSocket(connect, onMessage, onClose) {
  if (patches.length === 0 && globalThis.WebSocket !== MockedWebSocket) {
    Original = globalThis.WebSocket;
    globalThis.WebSocket = MockedWebSocket;
  }
  const patch = { connect, onMessage, onClose };
  patches.push(patch);
  return patch;
}

/** Undoes `patchWebSocket`; the last worker to stop puts the browser's class back. */
export function unpatchWebSocket(patch) {
  const index = patches.indexOf(patch);
  if (index >= 0) patches.splice(index, 1);
  if (patches.length === 0 && globalThis.WebSocket === MockedWebSocket) {
    globalThis.WebSocket = Original;
  }
}

/** Closes a real socket with what a script may send (1000, 3000–4999). */
function closeReal(real, code, reason) {
  if (real.readyState === CLOSING || real.readyState === CLOSED) return;
  const allowed = code === 1000 || (code >= 3000 && code <= 4999);
  try {
    if (allowed) real.close(code, reason);
    else real.close(1000);
  } catch (_) {
    real.close(); // a reason over 123 bytes
  }
}

/**
 * Joins the page's socket (its `controller`) to a real one opened with the
 * browser's class: every event of the real socket reaches the page's, and
 * the page's sends and close reach the real one. Resolves to the real
 * sub-protocol once it opens; rejects when it fails first.
 */
export function passThrough(controller, url, protocols) {
  return new Promise((resolve, reject) => {
    let real;
    try {
      real = new Original(url, protocols);
    } catch (error) {
      controller.fail();
      reject(error);
      return;
    }
    real.binaryType = 'arraybuffer';
    real.onopen = () => {
      controller.open(real.protocol, real.extensions);
      resolve(real.protocol);
    };
    real.onmessage = (event) => controller.deliver(event.data);
    real.onerror = () => controller.error();
    real.onclose = (event) => {
      controller.end(event.code, event.reason, event.wasClean);
      reject(new Error(`the real WebSocket closed (${event.code})`));
    };
    controller.redirect({
      send: (data) => real.send(data),
      close: (code, reason) => (code === 1005 ? real.close() : closeReal(real, code, reason)),
      abort: () => real.close(),
    });
  });
}

/**
 * Opens a real WebSocket for `server.connect()`: its messages and close go
 * to `onMessage` and `onClose` as socket `id`'s. Resolves to `[endpoint,
 * protocol]` once it opens (Rust sends to the endpoint and closes it), and
 * rejects when it fails first.
 */
export function connectReal(url, protocols, id, onMessage, onClose) {
  return new Promise((resolve, reject) => {
    let real;
    try {
      real = new Original(url, protocols);
    } catch (error) {
      reject(error);
      return;
    }
    real.binaryType = 'arraybuffer';
    let opened = false;
    real.onopen = () => {
      opened = true;
      const endpoint = {
        // `data` may be a view of wasm memory: `send` copies it at once.
        deliver: (data) => real.send(data),
        end: (code, reason) => closeReal(real, code, reason),
      };
      resolve([endpoint, real.protocol]);
    };
    real.onmessage = (event) => {
      onMessage(id, typeof event.data === 'string' ? event.data : new Uint8Array(event.data));
    };
    real.onclose = (event) => {
      if (opened) onClose(id, event.code, event.reason);
      else reject(new Error(`the connection failed (close code ${event.code})`));
    };
  });
}
