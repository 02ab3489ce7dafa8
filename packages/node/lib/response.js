// What a resolver answers with, as MSW has it: `HttpResponse` (a `Response`
// subclass), `passthrough()`, `bypass(request)` and `delay(ms)`.

const PASSTHROUGH = Symbol('mocklib.passthrough');

/** The header `bypass` marks a request with; the interception removes it. */
export const BYPASS_HEADER = 'x-mocklib-intention';

function withType(init, type) {
  const headers = new Headers(init?.headers);
  if (!headers.has('content-type')) {
    headers.set('content-type', type);
  }
  return { ...init, headers };
}

/**
 * A mocked response (MSW: `HttpResponse`): a `Response`, with static
 * builders that set the content type.
 */
export class HttpResponse extends Response {
  constructor(body, init) {
    super(body ?? null, init);
  }

  static text(body, init) {
    return new HttpResponse(body, withType(init, 'text/plain'));
  }

  static json(body, init) {
    return new HttpResponse(JSON.stringify(body), withType(init, 'application/json'));
  }

  static xml(body, init) {
    return new HttpResponse(body, withType(init, 'text/xml'));
  }

  static html(body, init) {
    return new HttpResponse(body, withType(init, 'text/html'));
  }

  static arrayBuffer(body, init) {
    return new HttpResponse(body, withType(init, 'application/octet-stream'));
  }

  static formData(body, init) {
    return new HttpResponse(body, init);
  }

  /** A network error: the client's connection is dropped without an answer. */
  static error() {
    return Response.error();
  }
}

/**
 * Returned by a resolver: the request is performed for real, as it is
 * (MSW: `passthrough()`); `mocklib serve` performs it.
 */
export function passthrough() {
  const response = new HttpResponse(null, { status: 302, statusText: 'Passthrough' });
  Object.defineProperty(response, PASSTHROUGH, { value: true });
  return response;
}

export function isPassthrough(response) {
  return response?.[PASSTHROUGH] === true;
}

/**
 * A copy of `input` that `fetch` performs for real, around the mocks (MSW:
 * `fetch(bypass(request))`), to read and alter a real answer in a resolver.
 */
export function bypass(input, init) {
  const request = new Request(input instanceof Request ? input.clone() : input, init);
  request.headers.set(BYPASS_HEADER, 'bypass');
  return request;
}

// MSW's delay(): in Node, with no argument, a short "server response time".
const NODE_RESPONSE_TIME = 5;
const MAX_TIMEOUT = 2147483647;

/**
 * Waits: `delay(ms)`, `delay()` (a few milliseconds), `delay('real')` (the
 * same), `delay('infinite')` (never resolves).
 */
export function delay(durationOrMode) {
  let ms;
  if (durationOrMode === undefined || durationOrMode === 'real') {
    ms = NODE_RESPONSE_TIME;
  } else if (durationOrMode === 'infinite') {
    ms = MAX_TIMEOUT;
  } else if (typeof durationOrMode === 'number') {
    ms = durationOrMode;
  } else {
    throw new TypeError(`delay(): a number of milliseconds, "real" or "infinite", not ${JSON.stringify(durationOrMode)}`);
  }
  return new Promise((resolve) => {
    setTimeout(resolve, Math.min(ms, MAX_TIMEOUT));
  });
}

/** The callback channel's answer for what a resolver returned. */
export async function answerOf(result) {
  if (result === undefined || result === null) {
    return { fallthrough: true };
  }
  if (!(result instanceof Response)) {
    throw new TypeError(`the resolver returned ${String(result)}: return a Response (HttpResponse.json(...)), passthrough() or nothing (the next handler decides)`);
  }
  if (isPassthrough(result)) {
    return { passthrough: true };
  }
  if (result.type === 'error') {
    return { network_error: true };
  }
  const headers = [];
  for (const [name, value] of result.headers) {
    headers.push([name, value]);
  }
  const response = { status: result.status, headers };
  Object.assign(response, bodyFields(new Uint8Array(await result.arrayBuffer())));
  return { response };
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** `{ body }` when `bytes` are UTF-8, else `{ body_base64 }`. */
export function bodyFields(bytes) {
  try {
    return { body: decoder.decode(bytes) };
  } catch {
    return { body_base64: Buffer.from(bytes).toString('base64') };
  }
}
