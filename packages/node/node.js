// mocklib/node: MSW's `msw/node` — `setupServer(...handlers)` — backed by
// `mocklib serve`: each server object holds a scope of one server shared by
// the process (started from the platform package's binary, or the one
// `MOCKLIB_URL` names), and `server.boundary(fn)` runs `fn` in a scope of
// its own.
import { boundaryScope, start, stop } from './lib/intercept.js';
import { Scope } from './lib/scope.js';
import { sharedServer, startServer, findBinary } from './lib/serve.js';

export { startServer, findBinary };
export { MocklibError } from './lib/admin.js';

/** A server's API (MSW: `SetupServerApi`), and mocklib's journal and verify. */
export class SetupServerApi {
  constructor(handlers) {
    for (const handler of handlers) {
      if (!handler || typeof handler !== 'object') {
        throw new TypeError(`setupServer() takes handlers (http.get(...), graphql.query(...)), not ${String(handler)}`);
      }
    }
    this.initialHandlers = handlers;
    this.root = null;
  }

  /**
   * Starts intercepting: opens this server's scope (starting `mocklib
   * serve` on the process's first call) and routes the process's `fetch`,
   * `http` and `https` through it. `onUnhandledRequest`: `'warn'` (default),
   * `'error'`, `'bypass'` or `(request, print) => void`. Resolves once the
   * scope is open; requests made before wait for it.
   */
  listen(options = {}) {
    if (this.root) {
      return this.root.opened;
    }
    const scope = new Scope(sharedServer(), { owner: this, initial: this.initialHandlers, strategy: options.onUnhandledRequest });
    this.root = scope;
    start(scope);
    return scope.opened;
  }

  // The scope a call made now acts on: the boundary's it runs in, or this
  // server's own.
  scope() {
    const inBoundary = boundaryScope.getStore();
    if (inBoundary && inBoundary.owner === this) {
      return inBoundary;
    }
    if (!this.root) {
      throw new Error('mocklib: call server.listen() first');
    }
    return this.root;
  }

  /** Puts `handlers` ahead of the others (MSW: `server.use`). */
  use(...handlers) {
    return this.scope().use(handlers);
  }

  /** Back to the initial handlers, or `next` in their place (MSW: `resetHandlers`). */
  resetHandlers(...next) {
    return this.scope().reset(next);
  }

  /** Every handler afresh: used `once` handlers answer again (MSW: `restoreHandlers`). */
  restoreHandlers() {
    return this.scope().restore();
  }

  /** The handlers in lookup order (MSW: `listHandlers`). */
  listHandlers() {
    return this.scope().list();
  }

  /**
   * `fn` run in a scope of its own (MSW: `server.boundary`): `use` and
   * `resetHandlers` inside change only it, and it starts from the
   * enclosing scope's handlers. The returned function takes `fn`'s
   * arguments and returns a promise of its result; the scope ends when it
   * settles.
   */
  boundary(fn) {
    const api = this;
    return function boundaryCallback(...args) {
      const enclosing = api.scope();
      const scope = new Scope(sharedServer(), { owner: api, initial: enclosing.list(), strategy: enclosing.strategy });
      return scope.opened
        .then(() => boundaryScope.run(scope, () => fn.apply(this, args)))
        .finally(() => scope.close());
    };
  }

  /** Stops intercepting and ends this server's scope (MSW: `close`). */
  close() {
    const scope = this.root;
    if (!scope) {
      return Promise.resolve();
    }
    this.root = null;
    stop(scope);
    return scope.close();
  }

  /** The scope's own base URL: relative handler paths match there. */
  get url() {
    return this.described().url;
  }

  /** The proxy URL, with the scope's credential. */
  get proxyUrl() {
    return this.described().proxy_url;
  }

  /** The scope's admin API (`mocklib serve`'s README). */
  get adminUrl() {
    return this.described().admin_url;
  }

  /** The environment that sends a child process's requests to this scope. */
  get env() {
    return { ...this.described().env };
  }

  described() {
    const described = this.scope().described;
    if (!described) {
      throw new Error('mocklib: the scope is not open yet: await server.listen()');
    }
    return described;
  }

  /**
   * The scope's journal, oldest first: `{ method, url, headers, body,
   * handler, answer, status }`; filters `method`, `url` (a pattern),
   * `handler`, `unhandled`.
   */
  requests(filters) {
    return this.scope().requests(filters);
  }

  /** Every handler's `times`: `{ ok, report, unmet, unhandled }`. */
  verify() {
    return this.scope().verify();
  }

  /** As `verify`, throwing the server's report when it fails. */
  async assertVerified() {
    const verified = await this.verify();
    if (!verified.ok) {
      throw new Error(verified.report);
    }
  }
}

/** MSW's `setupServer(...handlers)`. */
export function setupServer(...handlers) {
  return new SetupServerApi(handlers);
}
