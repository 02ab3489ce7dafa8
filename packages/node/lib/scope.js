// A scope of `mocklib serve` held by this process: its handler list (sent
// as handler-file entries), its callback channel (answered by the
// resolvers), and the way this process's requests reach it. Changes are
// queued in order; a request made after one waits for it, so `server.use()`
// needs no `await` before the request it is for.
import { createRequire } from 'node:module';

import * as admin from './admin.js';
import { boundaryScope } from './intercept.js';
import { answerOf } from './response.js';
import { caOf } from './serve.js';
import { requestOf } from './handlers.js';
import { connect } from './websocket.js';

const require = createRequire(import.meta.url);
const { parseProxy } = require('./proxy.cjs');

// The callback of the entry that ends every list: requests no handler
// answered come to this process, which applies `onUnhandledRequest`.
const UNHANDLED = 'unhandled';

let nextKey = 1;

export class Scope {
  /**
   * Opens a scope of `server` (a promise of `serve.js`'s server) whose
   * handlers are `initial`; `strategy` is `onUnhandledRequest`.
   */
  constructor(server, { owner, initial, strategy }) {
    this.key = nextKey++;
    this.owner = owner;
    this.strategy = strategy ?? 'warn';
    this.initial = [...initial];
    this.current = [...initial];
    this.runtime = [];
    this.names = new Map();
    this.callbacks = new Map();
    this.nextName = 1;
    this.tail = Promise.resolve();
    this.pending = 0;
    this.failure = null;
    this.closed = false;
    this.described = null;
    this.channel = null;
    this.opened = this.enqueue(async () => {
      this.server = await server;
      const described = await admin.json('opening a scope', 'POST', `${this.server.url}/__mocklib/scopes`, { token: this.server.token });
      this.described = described;
      this.proxyValue = { ...parseProxy(described.proxy_url), ca: caOf(this.server, described.env) };
      const headers = this.server.token ? { authorization: `Bearer ${this.server.token}` } : {};
      const channelUrl = `ws${described.admin_url.slice('http'.length)}/callbacks`;
      const [channel] = await Promise.all([connect(channelUrl, headers), this.putList()]);
      this.channel = channel.unref();
      channel.on('message', (text) => this.answer(text));
    }, { opening: true });
  }

  // Runs `op` after every change queued before it. A request made meanwhile
  // waits for them all (`proxy`); a change that fails fails those requests.
  enqueue(op, { opening = false } = {}) {
    this.pending++;
    const run = this.tail.then(() => {
      if (this.openingFailure) throw this.openingFailure;
      return op();
    });
    this.tail = run.then(
      () => { this.pending--; },
      (error) => {
        this.pending--;
        if (opening) this.openingFailure = error;
        this.failure = this.failure ?? error;
      },
    );
    run.catch(() => {}); // reported to the requests; awaiting it rethrows
    return run;
  }

  /** The proxy this scope's connections go through, or a promise of it. */
  proxy() {
    if (this.closed) {
      return Promise.reject(new Error('mocklib: this scope has ended (server.close(), or its boundary returned)'));
    }
    if (this.pending === 0 && !this.failure) {
      return this.proxyValue;
    }
    return this.tail.then(() => {
      if (this.failure) throw this.failure;
      return this.proxyValue;
    });
  }

  /**
   * `null` when every queued change is done; else a promise that resolves
   * when they are, or rejects with the first that failed.
   */
  changed() {
    if (this.closed) {
      return Promise.reject(new Error('mocklib: this scope has ended (server.close(), or its boundary returned)'));
    }
    if (this.pending === 0 && !this.failure) {
      return null;
    }
    return this.settled();
  }

  /** The environment of a child process, once opened. */
  childEnv() {
    return this.described?.env ?? null;
  }

  /** The entries for `handlers`: callback entries name their resolvers here. */
  async entries(handlers) {
    const entries = [];
    for (const handler of handlers) {
      if (handler && typeof handler.staticEntry === 'function') {
        const fixed = await handler.staticEntry();
        if (fixed) {
          entries.push(fixed);
          continue;
        }
        let name = this.names.get(handler);
        if (!name) {
          // Never reused: a late call for a forgotten name finds none.
          name = `js${this.nextName++}`;
          this.names.set(handler, name);
          this.callbacks.set(name, handler);
        }
        entries.push(handler.callbackEntry(name));
      } else if (handler && typeof handler === 'object') {
        entries.push(handler); // a handler-file entry, as it is
      } else {
        throw new TypeError(`a handler (http.get(...), graphql.query(...)) or a handler-file entry, not ${String(handler)}`);
      }
    }
    return entries;
  }

  // The whole list on the server: what `resetHandlers` left, then the
  // entry every unhandled request reaches.
  async putList() {
    const entries = await this.entries(this.current);
    entries.push({ callback: UNHANDLED });
    await admin.json('setting the handlers', 'PUT', `${this.described.admin_url}/handlers`, { body: entries, token: this.server.token });
    this.failure = null;
    // The resolvers of the handlers the list no longer has are let go (a
    // suite's `use` per test would pile them up otherwise).
    const kept = new Set(this.current);
    for (const [handler, name] of this.names) {
      if (!kept.has(handler)) {
        this.names.delete(handler);
        this.callbacks.delete(name);
      }
    }
  }

  use(handlers) {
    this.runtime = [...handlers, ...this.runtime];
    return this.enqueue(async () => {
      const entries = await this.entries(handlers);
      await admin.json('adding handlers', 'POST', `${this.described.admin_url}/handlers`, { body: entries, token: this.server.token });
    });
  }

  reset(next) {
    this.runtime = [];
    this.current = next.length ? [...next] : [...this.initial];
    return this.enqueue(() => this.putList());
  }

  /** Every handler afresh: `once` ones answer again. */
  restore() {
    const runtime = this.runtime;
    return this.enqueue(async () => {
      await this.putList();
      if (runtime.length) {
        const entries = await this.entries(runtime);
        await admin.json('adding handlers', 'POST', `${this.described.admin_url}/handlers`, { body: entries, token: this.server.token });
      }
    });
  }

  list() {
    return [...this.runtime, ...this.current];
  }

  async requests(filters = {}) {
    await this.settled();
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(filters)) {
      if (value !== undefined && value !== null) query.set(name, String(value));
    }
    const suffix = [...query].length ? `?${query}` : '';
    return admin.json('reading the journal', 'GET', `${this.described.admin_url}/requests${suffix}`, { token: this.server.token });
  }

  async verify() {
    await this.settled();
    return admin.json('verifying', 'GET', `${this.described.admin_url}/verify`, { token: this.server.token }, [200, 422]);
  }

  /** Resolves once every queued change is done; rejects with the first that failed. */
  async settled() {
    await this.tail;
    if (this.failure) throw this.failure;
  }

  close() {
    if (this.closed) {
      return this.closing;
    }
    this.closing = this.tail.then(async () => {
      this.closed = true;
      try {
        if (this.described) {
          await admin.json('closing a scope', 'DELETE', `${this.server.url}/__mocklib/scopes/${this.described.id}`, { token: this.server.token }, [204, 404]);
        }
      } finally {
        this.channel?.close();
      }
    });
    this.closed = true;
    return this.closing;
  }

  // A call from the server: the resolver's answer, sent back with its id.
  async answer(text) {
    let call;
    try {
      call = JSON.parse(text);
    } catch {
      return;
    }
    if (call.type !== 'call') {
      return;
    }
    let answer;
    try {
      if (call.callback === UNHANDLED) {
        answer = await this.unhandled(call);
      } else {
        const handler = this.callbacks.get(call.callback);
        if (!handler) {
          throw new Error(`no resolver is named ${call.callback} in this process`);
        }
        let result;
        try {
          result = await boundaryScope.run(this, () => handler.run(call));
        } catch (thrown) {
          // A thrown Response is the answer, as in MSW.
          if (!(thrown instanceof Response)) throw thrown;
          result = thrown;
        }
        answer = await answerOf(result);
      }
    } catch (error) {
      answer = { error: describeError(error) };
    }
    answer.id = call.id;
    this.channel?.send(JSON.stringify(answer));
  }

  // `onUnhandledRequest`: 'warn' (the default), 'error', 'bypass', or a
  // function `(request, print)`.
  async unhandled(call) {
    const { method, url } = call.request;
    const strategy = this.strategy;
    const message = (kind) => `[mocklib] ${kind}: intercepted a request without a matching request handler:\n\n  • ${method} ${url}\n\nIf you still wish to intercept this unhandled request, please create a request handler for it.`;
    const print = {
      failed: false,
      warning() { console.warn(message('Warning')); },
      error() { print.failed = true; console.error(message('Error')); },
    };
    if (strategy === 'bypass') {
      return { passthrough: true };
    }
    if (strategy === 'warn') {
      print.warning();
      return { passthrough: true };
    }
    if (strategy === 'error') {
      print.error();
      return { network_error: true };
    }
    if (typeof strategy === 'function') {
      try {
        await boundaryScope.run(this, () => strategy(requestOf(call.request), print));
      } catch {
        return { network_error: true };
      }
      return print.failed ? { network_error: true } : { passthrough: true };
    }
    throw new TypeError(`onUnhandledRequest: "warn", "error", "bypass" or a function, not ${String(strategy)}`);
  }
}

// What a resolver threw, for the server's 500: its name, message and the
// stack frames of the test's code (not this package's).
const OWN_FILES = new URL('.', import.meta.url).pathname;
function describeError(error) {
  if (!(error instanceof Error)) {
    return String(error);
  }
  const frames = String(error.stack || '').split('\n').slice(1)
    .filter((line) => /^\s+at /.test(line) && !line.includes(OWN_FILES) && !line.includes('node:'));
  return [`${error.name}: ${error.message}`, ...frames].join('\n');
}
