// mocklib/node: MSW's `msw/node`.
import type { RequestHandler } from './index.js';

/** A handler-file entry of `mocklib serve`, as it is (`{ path, json, ... }`, `{ resource, seed }`). */
export type HandlerFileEntry = Record<string, unknown>;

export type Handler = RequestHandler | HandlerFileEntry;

export interface UnhandledRequestPrint {
  warning(): void;
  error(): void;
}

export type UnhandledRequestStrategy =
  | 'warn'
  | 'error'
  | 'bypass'
  | ((request: Request, print: UnhandledRequestPrint) => void | Promise<void>);

export interface ListenOptions {
  /** What happens to a request no handler answers (default `'warn'`: a warning, then the real request). */
  onUnhandledRequest?: UnhandledRequestStrategy;
}

/** One request of a scope's journal. */
export interface JournalEntry {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  body_encoding: 'utf8' | 'base64';
  body_len: number;
  handler: string | null;
  answer: 'mocked' | 'passthrough' | 'network_error' | 'unhandled' | 'websocket';
  status: number | null;
}

export interface Verification {
  ok: boolean;
  report?: string;
  unmet?: Array<{ handler: string; expected: string; at_least: number | null; at_most: number | null; received: number }>;
  unhandled?: string[];
}

/** MSW's `SetupServerApi`, with mocklib's ways in, journal and verify. */
export declare class SetupServerApi {
  /** Opens the server's scope and intercepts this process's `fetch`, `http` and `https`. */
  listen(options?: ListenOptions): Promise<void>;
  /** Puts handlers ahead of the others. Requests made after it wait for it: no `await` needed. */
  use(...handlers: Handler[]): Promise<void>;
  resetHandlers(...next: Handler[]): Promise<void>;
  restoreHandlers(): Promise<void>;
  listHandlers(): Handler[];
  /** `fn` in a scope of its own; the result is a promise of `fn`'s. */
  boundary<Args extends any[], R>(fn: (...args: Args) => R): (...args: Args) => Promise<Awaited<R>>;
  close(): Promise<void>;
  /** The scope's own base URL (relative handler paths match there). */
  readonly url: string;
  /** The proxy, with the scope's credential. */
  readonly proxyUrl: string;
  readonly adminUrl: string;
  /** The variables that send a child process's requests to this scope (given to children started without `env`). */
  readonly env: Record<string, string>;
  requests(filters?: { method?: string; url?: string; handler?: string; unhandled?: boolean }): Promise<JournalEntry[]>;
  verify(): Promise<Verification>;
  assertVerified(): Promise<void>;
}

/** MSW's `setupServer(...handlers)`. */
export declare function setupServer(...handlers: Handler[]): SetupServerApi;

export interface StartedServer {
  url: string;
  env: Record<string, string>;
  caFile: string;
  close(): void;
}

/** Starts a `mocklib serve` (for a global setup: set `MOCKLIB_URL` to its `url`). */
export declare function startServer(options?: { args?: string[]; binary?: string; token?: string }): Promise<StartedServer>;

/** The `mocklib` command this package runs. */
export declare function findBinary(): string;

export declare class MocklibError extends Error {
  status: number;
  body: string;
}
