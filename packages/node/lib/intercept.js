// Routes this process's own requests through the scope they are made in:
// Node's `http` and `https` (hence axios and most clients) and the global
// `fetch` (undici), as mocklib's preload does for child processes — the same
// code (`proxy.cjs` is crates/mocklib/src/node/net/node_preload.js: a link in
// the repository, a copy in the package):
// each connection is a `CONNECT` tunnel to `mocklib serve` carrying the
// scope's proxy credential, and TLS inside it trusts mocklib's CA. Child
// processes started in a scope get its environment.
import { AsyncLocalStorage } from 'node:async_hooks';
import childProcess from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';

import { BYPASS_HEADER } from './response.js';

const require = createRequire(import.meta.url);
// As a library: the copy installs nothing from this process's proxy variables.
globalThis[Symbol.for('mocklib.proxy.library')] = true;
const { tunnelAgentClasses, createDispatcher, performExchange } = require('./proxy.cjs');

/** The scope of the boundary a call runs in (`server.boundary`). */
export const boundaryScope = new AsyncLocalStorage();

// The scope of the listening server, outside any boundary.
let active = null;

/** The scope a request made now belongs to, or `null`: none listens. */
export function currentScope() {
  return boundaryScope.getStore() ?? active;
}

// The scope a connection is for rides in the agent's options, from the
// moment the agent names the connection (in the caller's async context) to
// the moment it opens it (perhaps later, for a queued request).
const SCOPE = 'mocklibScope';

function route(protocol, options) {
  const scope = options[SCOPE];
  return scope ? scope.proxy() : null;
}

const { HttpTunnelAgent, HttpsTunnelAgent } = tunnelAgentClasses(route);

// Connections are pooled per scope: a kept-alive tunnel carries one scope's
// credential and never serves another's request.
// A request waits for the changes queued before it (`server.use()` without
// `await`), even on a kept-alive connection.
function perScope(Agent) {
  return class extends Agent {
    addRequest(request, options, ...rest) {
      if (!(SCOPE in options)) {
        options = { ...options, [SCOPE]: currentScope() };
      }
      const scope = options[SCOPE];
      const ready = scope?.changed();
      if (!ready) {
        return super.addRequest(request, options, ...rest);
      }
      ready.then(
        () => super.addRequest(request, options, ...rest),
        // As the agent fails a request whose connection cannot be made.
        (error) => request.onSocket(undefined, error),
      );
      return undefined;
    }

    getName(options) {
      if (!(SCOPE in options)) {
        options[SCOPE] = currentScope();
      }
      const scope = options[SCOPE];
      return scope ? `${super.getName(options)}:mocklib-scope-${scope.key}` : super.getName(options);
    }
  };
}

class ScopedHttpAgent extends perScope(HttpTunnelAgent) {}
class ScopedHttpsAgent extends perScope(HttpsTunnelAgent) {}

const DISPATCHER = Symbol.for('undici.globalDispatcher.1');
const SPAWNERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'];

let saved = null;
const listening = new Set();

/** `scope` answers this process's requests outside boundaries, until `stop(scope)`. */
export function start(scope) {
  listening.add(scope);
  active = scope;
  if (!saved) {
    install();
  }
}

export function stop(scope) {
  listening.delete(scope);
  if (active === scope) {
    active = [...listening].pop() ?? null;
  }
  if (!listening.size && saved) {
    uninstall();
  }
}

function install() {
  // Loads Node's undici, which puts its own dispatcher in the slot: kept for
  // `bypass` and put back by `uninstall`.
  if (globalThis[DISPATCHER] === undefined) {
    fetch('data:,').catch(() => {});
  }
  saved = {
    http: http.globalAgent,
    https: https.globalAgent,
    dispatcher: globalThis[DISPATCHER],
  };
  // The same settings as Node's own global agents.
  const options = { keepAlive: true, scheduling: 'lifo', timeout: 5000 };
  http.globalAgent = new ScopedHttpAgent(options);
  https.globalAgent = new ScopedHttpsAgent(options);
  setDispatcher(createDispatcher((request, handler) => {
    const bypassed = withoutBypassHeader(request);
    if (bypassed) {
      saved.dispatcher.dispatch(bypassed, handler);
    } else {
      performExchange(request, handler);
    }
  }));
  syncBuiltinESMExports();
}

function uninstall() {
  http.globalAgent.destroy();
  https.globalAgent.destroy();
  http.globalAgent = saved.http;
  https.globalAgent = saved.https;
  setDispatcher(saved.dispatcher);
  syncBuiltinESMExports();
  saved = null;
}

function setDispatcher(dispatcher) {
  if (Object.getOwnPropertyDescriptor(globalThis, DISPATCHER)) {
    globalThis[DISPATCHER] = dispatcher;
  } else {
    Object.defineProperty(globalThis, DISPATCHER, { value: dispatcher, writable: true, enumerable: false, configurable: false });
  }
}

// A request `bypass()` marked, without its mark; `null` for any other.
function withoutBypassHeader(request) {
  const headers = request.headers;
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === BYPASS_HEADER) {
        return { ...request, headers: [...headers.slice(0, i), ...headers.slice(i + 2)] };
      }
    }
  } else if (headers && typeof headers === 'object') {
    const name = Object.keys(headers).find((key) => key.toLowerCase() === BYPASS_HEADER);
    if (name) {
      const { [name]: _, ...rest } = headers;
      return { ...request, headers: rest };
    }
  }
  return null;
}

// `child_process`'s functions, from this module's first import on (so that
// `promisify(execFile)` at the top of a test file gets them): a child
// started in a scope gets its environment when the call gives none (`env`
// left out: the child would inherit this process's). Outside scopes they
// do what Node's do.
for (const name of SPAWNERS) {
  childProcess[name] = withScopeEnv(childProcess[name]);
}
syncBuiltinESMExports();

let warned = false;
function withScopeEnv(original) {
  const wrapped = function spawnInScope(...args) {
    return original.apply(this, addScopeEnv(args));
  };
  if (original[promisify.custom]) {
    wrapped[promisify.custom] = (...args) => original[promisify.custom](...addScopeEnv(args));
  }
  Object.defineProperty(wrapped, 'name', { value: original.name });
  return wrapped;
}

function addScopeEnv(args) {
  const scope = currentScope();
  if (!scope) {
    return args;
  }
  const env = scope.childEnv();
  if (!env) {
    if (!warned) {
      warned = true;
      process.emitWarning('a child process started before server.listen() resolved does not reach the mocks: await server.listen()', 'MocklibWarning');
    }
    return args;
  }
  const merged = { ...process.env, ...env };
  const out = [...args];
  // The options object: after the command and its argument list, before
  // the callback.
  for (let i = 1; i <= out.length; i++) {
    const argument = out[i];
    if (Array.isArray(argument)) {
      continue;
    }
    if (argument && typeof argument === 'object') {
      if (argument.env === undefined) {
        out[i] = { ...argument, env: merged };
      }
      return out;
    }
    if (argument == null && i < out.length && out.slice(i + 1).some((later) => later && typeof later === 'object' && !Array.isArray(later))) {
      continue;
    }
    if (argument == null && i < out.length) {
      out[i] = { env: merged };
      return out;
    }
    out.splice(i, 0, { env: merged });
    return out;
  }
  return out;
}
