// mocklib: MSW's `msw` names (handlers and responses). The server is in
// `mocklib/node`.

/** What a resolver may return: a response, or nothing (the next handler decides). */
export type AsyncResponseResolverReturnType = Response | undefined | void | Promise<Response | undefined | void>;

/** The argument of an HTTP resolver (MSW: `({ request, params, cookies })`). */
export interface HttpResolverInfo {
  /** The intercepted request, as a Fetch `Request`. */
  request: Request;
  /** The path's `:name` parameters (and a wildcard's capture). */
  params: Record<string, string>;
  /** The request's cookies, by name. */
  cookies: Record<string, string>;
  requestId: string;
}

export type HttpResponseResolver = (info: HttpResolverInfo) => AsyncResponseResolverReturnType;

/** The argument of a GraphQL resolver. */
export interface GraphQLResolverInfo {
  query: string;
  variables: Record<string, any>;
  operationName: string | null;
  request: Request;
  cookies: Record<string, string>;
  requestId: string;
}

export type GraphQLResponseResolver = (info: GraphQLResolverInfo) => AsyncResponseResolverReturnType;

/** A handler's times: a count, or bounds. `server.verify()` checks it. */
export type Times = number | { at_least?: number; at_most?: number };

export interface RequestHandlerOptions {
  /** Answer once, then let the next handler take the requests. */
  once?: boolean;
  /** How many requests it should answer (checked by `server.verify()`). */
  times?: Times;
  /**
   * A handler file's conditions, checked by the server before any round
   * trip: `{ headers, query, cookies, json, json_path, body_contains, bearer, basic, ... }`.
   */
  match?: Record<string, unknown>;
  /** How long the server waits for the resolver (default 5000). */
  timeoutMs?: number;
  /** The scenario `whenState` and `setState` are about (it starts as `started`, per scope). */
  scenario?: string;
  /** Answer only while the scenario is in this state. */
  whenState?: string;
  /** Move the scenario to this state once answered. */
  setState?: string;
  /** A template of the request (`{{ request.params.id }}`): a state per key. */
  key?: string;
  /** Faults on a share of requests and latency, seeded: a `mocklib serve --chaos` file's fields. */
  chaos?: {
    fault_rate?: number;
    fault?: 'connection_reset' | 'empty_response' | 'garbage' | 'malformed_chunk';
    latency?: { uniform: { min_ms: number; max_ms: number } } | { lognormal: { median_ms: number; sigma: number } };
    seed?: number;
  };
  /** A request the server sends after answering (strings: templates over `request` and `response`). */
  webhook?: {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    json?: unknown;
    delay_ms?: number;
  };
}

/**
 * A path: a mocklib pattern (`https://api.example.com/users/:id`,
 * `/users/*`; a relative one matches on every host) or a `RegExp` over the
 * whole URL.
 */
export type Path = string | RegExp;

export declare class RequestHandler {
  readonly info: { header: string; method: string; path: string | RegExp };
  constructor(method: string | null, path: Path | null, resolver: HttpResponseResolver | Response, options?: RequestHandlerOptions);
}

export declare class GraphQLHandler extends RequestHandler {}

type HttpHandlerFactory = (path: Path, resolver: HttpResponseResolver | Response, options?: RequestHandlerOptions) => RequestHandler;

/** MSW's `http` namespace. A `Response` in place of a resolver is answered by the server alone. */
export declare const http: {
  all: HttpHandlerFactory;
  head: HttpHandlerFactory;
  get: HttpHandlerFactory;
  post: HttpHandlerFactory;
  put: HttpHandlerFactory;
  delete: HttpHandlerFactory;
  patch: HttpHandlerFactory;
  options: HttpHandlerFactory;
};

interface GraphQLNamespace {
  query(name: string | RegExp, resolver: GraphQLResponseResolver | Response, options?: RequestHandlerOptions): GraphQLHandler;
  mutation(name: string | RegExp, resolver: GraphQLResponseResolver | Response, options?: RequestHandlerOptions): GraphQLHandler;
  operation(resolver: GraphQLResponseResolver | Response, options?: RequestHandlerOptions): GraphQLHandler;
  /** The handlers of one endpoint. */
  link(url: string): GraphQLNamespace;
}

/** MSW's `graphql` namespace (operations sent with `POST`). */
export declare const graphql: GraphQLNamespace;

/** MSW's `HttpResponse`: a `Response` with builders that set the content type. */
export declare class HttpResponse extends Response {
  constructor(body?: BodyInit | null, init?: ResponseInit);
  static text(body?: string | null, init?: ResponseInit): HttpResponse;
  static json(body?: unknown, init?: ResponseInit): HttpResponse;
  static xml(body?: string | null, init?: ResponseInit): HttpResponse;
  static html(body?: string | null, init?: ResponseInit): HttpResponse;
  static arrayBuffer(body?: ArrayBuffer | ArrayBufferView, init?: ResponseInit): HttpResponse;
  static formData(body?: FormData, init?: ResponseInit): HttpResponse;
  /** A network error: the client's connection is dropped without an answer. */
  static error(): Response;
}

/** Returned by a resolver: the request is performed for real, as it is. */
export declare function passthrough(): HttpResponse;

/** A request `fetch` performs for real, around the mocks: `await fetch(bypass(request))`. */
export declare function bypass(input: string | URL | Request, init?: RequestInit): Request;

/** Waits: milliseconds, `'real'` (a few milliseconds, as MSW in Node), or `'infinite'`. */
export declare function delay(durationOrMode?: number | 'real' | 'infinite'): Promise<void>;
