// Request handlers as MSW writes them: `http.get(path, resolver)`,
// `graphql.query(name, resolver)`. A handler becomes a handler-file entry
// of `mocklib serve`: a `callback` entry when the resolver is a function
// (the server asks this process over the scope's callback channel), a
// static one when it is a `Response` (the server answers alone).

/** One handler: what `setupServer`, `server.use` and `resetHandlers` take. */
export class RequestHandler {
  /**
   * `method` (`null`: any), `path` (a mocklib pattern, a `RegExp`, or `null`
   * for any URL), `resolver` (a function, or a `Response` answered by the
   * server alone). Options: `once`, `times` (checked by `server.verify()`),
   * `match` (a handler file's conditions, checked by the server before any
   * round trip), `timeoutMs` (how long the server waits for the resolver);
   * `scenario` with `whenState` / `setState` and `key` (a template of the
   * request: a state per key), and `chaos` (`{ fault_rate, fault, latency,
   * seed }`), `webhook` (`{ url, method, headers, body | json, delay_ms }`,
   * templates over `request` and `response`): the handler-file fields of
   * the same names.
   */
  constructor(method, path, resolver, options = {}) {
    if (typeof resolver !== 'function' && !(resolver instanceof Response)) {
      throw new TypeError(`a resolver is a function or a Response, not ${String(resolver)}`);
    }
    const { once = false, times, match, timeoutMs, scenario, whenState, setState, key, chaos, webhook } = options;
    this.method = method;
    this.path = path instanceof RegExp ? null : path;
    this.pattern = path instanceof RegExp ? path : null;
    this.resolver = resolver;
    this.options = { once, times, match, timeoutMs };
    // What any handler-file entry takes, as the entry names it.
    this.behaviour = Object.fromEntries(
      Object.entries({ scenario, when_state: whenState, set_state: setState, key, chaos, webhook })
        .filter(([, value]) => value !== undefined),
    );
    this.info = { header: `${method ?? 'all'} ${path ?? '*'}`, method: method ?? 'all', path: path ?? '*' };
  }

  baseEntry() {
    const entry = {};
    if (this.method) entry.method = this.method;
    if (this.path != null) entry.path = this.path;
    if (this.options.match) entry.match = this.options.match;
    if (this.options.once) entry.once = true;
    if (this.options.times !== undefined) entry.times = this.options.times;
    Object.assign(entry, this.behaviour);
    return entry;
  }

  /** The entry when the server can answer alone (a `Response`), else `null`. */
  async staticEntry() {
    if (!(this.resolver instanceof Response) || this.pattern) {
      return null;
    }
    const response = this.resolver;
    if (response.type === 'error') {
      return null;
    }
    const headers = {};
    for (const [name, value] of response.headers) {
      if (name in headers) {
        return null; // a header given twice: a file entry cannot say it
      }
      headers[name] = value;
    }
    const bytes = new Uint8Array(await response.clone().arrayBuffer());
    let body;
    try {
      body = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return null;
    }
    const entry = { ...this.baseEntry(), status: response.status, body };
    if (Object.keys(headers).length) entry.headers = headers;
    return entry;
  }

  callbackEntry(name) {
    const entry = { ...this.baseEntry(), callback: name };
    if (this.options.timeoutMs !== undefined) entry.timeout_ms = this.options.timeoutMs;
    return entry;
  }

  /** What the resolver answers `call` (a callback channel frame) with. */
  run(call) {
    const url = call.request.url;
    if (this.pattern && !this.pattern.test(url)) {
      return undefined;
    }
    if (this.resolver instanceof Response) {
      return this.resolver.clone();
    }
    return this.resolver({
      request: requestOf(call.request),
      params: call.params || {},
      cookies: call.cookies || {},
      requestId: String(call.id),
    });
  }
}

/** The intercepted request as a Fetch `Request`. */
export function requestOf(sent) {
  const headers = new Headers();
  for (const [name, value] of sent.headers || []) {
    try {
      headers.append(name, value);
    } catch {
      // A header the Fetch API refuses (it names the connection): left out.
    }
  }
  let body;
  if (sent.method !== 'GET' && sent.method !== 'HEAD') {
    if (sent.body_base64 != null) {
      body = Buffer.from(sent.body_base64, 'base64');
    } else if (sent.body) {
      body = sent.body;
    }
  }
  return new Request(sent.url, { method: sent.method, headers, body });
}

function methodHandler(method) {
  return (path, resolver, options) => new RequestHandler(method, path, resolver, options);
}

/**
 * MSW's `http` namespace: `http.get(path, resolver, { once })` and the
 * other methods; `http.all` matches any method. `path` is a mocklib pattern
 * (`https://api.example.com/users/:id`, `/users/*`: a relative one matches
 * on every host) or a `RegExp` over the whole URL.
 */
export const http = {
  all: methodHandler(null),
  head: methodHandler('HEAD'),
  get: methodHandler('GET'),
  post: methodHandler('POST'),
  put: methodHandler('PUT'),
  delete: methodHandler('DELETE'),
  patch: methodHandler('PATCH'),
  options: methodHandler('OPTIONS'),
};

// GraphQL: the operation's type and name, read from the document as MSW
// does when the request names none (`operationName`).
const COMMENT = /#[^\n]*/g;
const OPERATION = /\b(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g;

export function operationOf(document, operationName) {
  const text = String(document || '').replace(COMMENT, '');
  const operations = [...text.matchAll(OPERATION)].map(([, kind, name]) => [kind, name || null]);
  if (operationName) {
    const named = operations.find(([, name]) => name === operationName);
    if (named) return named;
  }
  if (operations.length) return operations[0];
  return ['query', null]; // `{ user { id } }`: the query shorthand
}

/**
 * A GraphQL operation's handler: a `callback` entry on `POST` requests
 * whose body names the operation (checked by the server with
 * `body_contains`), then read here against the parsed document, so a
 * request for another operation falls through to the next handler.
 */
export class GraphQLHandler extends RequestHandler {
  constructor(kind, name, resolver, endpoint, options = {}) {
    const match = { ...(options.match || {}) };
    if (typeof name === 'string' && !('body_contains' in match)) {
      match.body_contains = name;
    }
    super('POST', endpoint ?? null, resolver, { ...options, match });
    this.kind = kind;
    this.name = name;
    this.info = { header: `${kind ?? 'operation'} ${name ?? '*'}${endpoint ? ` (${endpoint})` : ''}`, operationType: kind ?? 'all', operationName: name ?? '*' };
  }

  async staticEntry() {
    return null; // the operation is read here, not by the server
  }

  async run(call) {
    const request = requestOf(call.request);
    let payload;
    try {
      payload = await request.clone().json();
    } catch {
      return undefined;
    }
    if (!payload || typeof payload.query !== 'string') {
      return undefined;
    }
    const [kind, name] = operationOf(payload.query, payload.operationName);
    if (this.kind && kind !== this.kind) return undefined;
    if (this.name instanceof RegExp) {
      if (!name || !this.name.test(name)) return undefined;
    } else if (this.name != null && name !== this.name) {
      return undefined;
    }
    if (this.resolver instanceof Response) {
      return this.resolver.clone();
    }
    return this.resolver({
      query: payload.query,
      variables: payload.variables || {},
      operationName: name,
      request,
      cookies: call.cookies || {},
      requestId: String(call.id),
    });
  }
}

function graphqlNamespace(endpoint) {
  return {
    query: (name, resolver, options) => new GraphQLHandler('query', name, resolver, endpoint, options),
    mutation: (name, resolver, options) => new GraphQLHandler('mutation', name, resolver, endpoint, options),
    operation: (resolver, options) => new GraphQLHandler(null, null, resolver, endpoint, options),
    link: (url) => graphqlNamespace(url),
  };
}

/**
 * MSW's `graphql` namespace: `graphql.query(name, resolver)`,
 * `graphql.mutation`, `graphql.operation` (any), and `graphql.link(url)`
 * for one endpoint's. `name` is a string or a `RegExp`. The resolver gets
 * `{ query, variables, operationName, request, cookies }`. Over `POST`.
 */
export const graphql = graphqlNamespace(null);
