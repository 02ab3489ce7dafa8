// mocklib's preload for Node.js (`NODE_OPTIONS=--require <this file>`, set by
// `Server::env()`): routes the built-in `http` and `https` modules and the
// global `fetch` through the proxy named by the proxy variables, for Node
// versions that ignore them.
//
// - Does nothing on Node versions that read the proxy variables themselves
//   when `NODE_USE_ENV_PROXY=1` (24.5+ and 22.21+: `http`, `https` and
//   `fetch`; `Server::env()` sets that variable too).
// - Does nothing when no proxy variable is set.
// - Every request goes through a `CONNECT` tunnel, `http://` ones too (the
//   mocklib listener answers plain HTTP inside a tunnel): one code path, and
//   no rewriting of a request's path or of headers Node may already have
//   serialised. The proxy URL's credential becomes `Proxy-Authorization`.
// - `fetch` keeps its own semantics (redirects, decompression, abort): only
//   its dispatcher, the object that performs one HTTP exchange, is replaced,
//   through the global-dispatcher slot Node's bundled undici reads. It is
//   built on the agents below rather than on undici's own `Agent`, so undici
//   is not loaded at startup (that would cost every Node process ~25 ms).
// - Code that brings its own agent or dispatcher keeps it.
// - Checked with Node 18.20, 20.20 and 22.20 (this preload) and 24.21 (native).
//
// The same pieces, exported, route the test's own process in the npm package
// `mocklib` (packages/node ships a copy of this file): `tunnelAgentClasses`
// with a `route` that names each request's scope, and `createDispatcher`.
// Required as a library (`globalThis[Symbol.for('mocklib.proxy.library')]`
// set), it installs nothing itself.
'use strict';

// A proxy URL (`http://user:password@host:port`) as `openTunnel` takes it.
function parseProxy(value) {
  if (!value) {
    return null;
  }
  const url = new URL(value.includes('://') ? value : `http://${value}`);
  const credential = url.username
    ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    : null;
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port) || 80,
    authorization: credential && `Basic ${Buffer.from(credential).toString('base64')}`,
  };
}

// Opens a `CONNECT` tunnel to host:port; calls back with the raw socket.
function openTunnel(proxy, host, port, callback) {
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const socket = require('net').connect({ host: proxy.host, port: proxy.port });
  let received = Buffer.alloc(0);
  const fail = (error) => {
    socket.destroy();
    callback(error);
  };
  const onReadable = () => {
    let chunk;
    while ((chunk = socket.read()) !== null) {
      received = Buffer.concat([received, chunk]);
    }
    const end = received.indexOf('\r\n\r\n');
    if (end === -1) {
      return;
    }
    socket.removeListener('readable', onReadable);
    socket.removeListener('error', fail);
    const statusLine = received.subarray(0, received.indexOf('\r\n')).toString('latin1');
    if (!/^HTTP\/1\.[01] 200/.test(statusLine)) {
      fail(new Error(`the proxy ${proxy.host}:${proxy.port} refused CONNECT ${authority}: ${statusLine}`));
    } else if (received.length > end + 4) {
      fail(new Error(`the proxy ${proxy.host}:${proxy.port} sent data before the tunnel to ${authority} was used`));
    } else {
      callback(null, socket);
    }
  };
  socket.on('readable', onReadable);
  socket.once('error', fail);
  const authorization = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : '';
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${authorization}\r\n`);
}

// Agent classes whose connections go through the proxy `route(protocol,
// options)` names for each: a proxy (`parseProxy`'s, with `ca`: the
// certificates to trust inside the tunnel, if not the process's), `null` for
// a direct connection, or a promise of either. Node's `Agent` accepts a
// socket handed to the callback later.
function tunnelAgentClasses(route) {
  const http = require('http');
  const https = require('https');

  // Calls `tunnel(proxy)` with the route's proxy, or `direct()` without one;
  // a direct socket found late goes to the callback.
  function routed(found, tunnel, direct, callback) {
    if (!found) {
      return direct();
    }
    if (typeof found.then !== 'function') {
      tunnel(found);
      return undefined;
    }
    found.then((proxy) => (proxy ? tunnel(proxy) : callback(null, direct())), callback);
    return undefined;
  }

  class HttpTunnelAgent extends http.Agent {
    createConnection(options, callback) {
      const host = options.host || 'localhost';
      return routed(
        route('http:', options),
        (proxy) => openTunnel(proxy, host, options.port || 80, callback),
        () => super.createConnection(options),
        callback,
      );
    }
  }

  class HttpsTunnelAgent extends https.Agent {
    createConnection(options, callback) {
      const host = options.host || 'localhost';
      return routed(
        route('https:', options),
        (proxy) => openTunnel(proxy, host, options.port || 443, (error, socket) => {
          // TLS over the tunnel; `options.servername` is set by the agent, and
          // NODE_EXTRA_CA_CERTS (or the route's `ca`) makes the mocklib CA trusted.
          if (error) {
            return callback(error);
          }
          const tls = proxy.ca ? { ...options, socket, ca: proxy.ca } : { ...options, socket };
          return callback(null, super.createConnection(tls));
        }),
        () => super.createConnection(options),
        callback,
      );
    }
  }

  return { HttpTunnelAgent, HttpsTunnelAgent };
}

// A dispatcher (undici's `dispatch(options, handler)` interface, the handler
// API of undici 5 and 6 that Node 18 to 22 bundle) handing each exchange to
// `perform(options, handler)`.
function createDispatcher(perform) {
  const { EventEmitter } = require('events');
  class ProxyDispatcher extends EventEmitter {
    dispatch(options, handler) {
      perform(options, handler);
      return true;
    }

    close() {
      return Promise.resolve();
    }

    destroy() {
      return Promise.resolve();
    }
  }
  return new ProxyDispatcher();
}

// Performs one of undici's exchanges with `http.request`/`https.request`,
// hence through their global agents.
function performExchange(options, handler) {
  const http = require('http');
  const https = require('https');
  let finished = false;
  const finish = (report) => {
    if (!finished) {
      finished = true;
      report();
    }
  };
  const fail = (error) => finish(() => handler.onError(error));
  if (options.upgrade) {
    fail(new Error('protocol upgrades (WebSocket) are not routed by the mocklib preload'));
    return;
  }
  const origin = new URL(options.origin);
  const request = (origin.protocol === 'https:' ? https : http).request({
    protocol: origin.protocol,
    hostname: origin.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: origin.port || undefined,
    path: options.path,
    method: options.method,
    headers: options.headers || {},
  });
  request.on('error', fail);
  handler.onConnect((reason) => {
    fail(reason || new Error('aborted'));
    request.destroy();
  });
  request.on('response', (response) => {
    const rawHeaders = (list) => list.map((value) => Buffer.from(value, 'latin1'));
    response.on('error', fail);
    if (finished) {
      return response.destroy();
    }
    handler.onResponseStarted?.();
    const resume = () => response.resume();
    if (handler.onHeaders(response.statusCode, rawHeaders(response.rawHeaders), resume, response.statusMessage) === false) {
      response.pause();
    }
    response.on('data', (chunk) => {
      if (!finished && handler.onData(chunk) === false) {
        response.pause();
      }
    });
    response.on('end', () => finish(() => handler.onComplete(rawHeaders(response.rawTrailers))));
  });
  writeBody(request, options.body).catch((error) => {
    fail(error);
    request.destroy();
  });
}

async function writeBody(request, body) {
  if (body == null || typeof body === 'string' || body instanceof Uint8Array) {
    request.end(body ?? undefined);
    return;
  }
  const { once } = require('events');
  for await (const chunk of body) {
    if (!request.write(chunk)) {
      await once(request, 'drain');
    }
  }
  request.end();
}

module.exports = { parseProxy, openTunnel, tunnelAgentClasses, createDispatcher, performExchange };

(function mocklibProxyPreload() {
  if (globalThis[Symbol.for('mocklib.proxy.library')]) {
    return;
  }
  const [major, minor] = process.versions.node.split('.').map(Number);
  const nativeSupport = major > 24 || (major === 24 && minor >= 5) || (major === 22 && minor >= 21);
  if (nativeSupport) {
    return;
  }
  const env = process.env;
  const proxyFromEnv = (name) => env[name] || env[name.toUpperCase()] || env.all_proxy || env.ALL_PROXY;
  const proxies = { 'http:': parseProxy(proxyFromEnv('http_proxy')), 'https:': parseProxy(proxyFromEnv('https_proxy')) };
  if (!proxies['http:'] && !proxies['https:']) {
    return;
  }

  // NO_PROXY: `*`, or names matching the host or one of its parent domains.
  function bypassesProxy(host) {
    const list = env.no_proxy || env.NO_PROXY || '';
    return list.split(/[\s,]+/).filter(Boolean).some((entry) => {
      const name = entry.replace(/^\*?\./, '').replace(/:\d+$/, '').toLowerCase();
      return entry === '*' || host === name || host.endsWith(`.${name}`);
    });
  }

  function proxyFor(protocol, options) {
    const proxy = proxies[protocol];
    return proxy && !bypassesProxy(String(options.host || 'localhost').toLowerCase()) ? proxy : null;
  }

  const http = require('http');
  const https = require('https');
  const { HttpTunnelAgent, HttpsTunnelAgent } = tunnelAgentClasses(proxyFor);
  // The same settings as Node's own global agents.
  const agentOptions = { keepAlive: true, scheduling: 'lifo', timeout: 5000 };
  if (proxies['http:']) {
    http.globalAgent = new HttpTunnelAgent(agentOptions);
  }
  if (proxies['https:']) {
    https.globalAgent = new HttpsTunnelAgent(agentOptions);
  }
  Object.defineProperty(globalThis, Symbol.for('undici.globalDispatcher.1'), {
    value: createDispatcher(performExchange),
    writable: true,
    enumerable: false,
    configurable: false,
  });
})();
