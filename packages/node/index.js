// mocklib: MSW's `msw` — handlers, responses and their helpers. The server
// is `mocklib/node`'s `setupServer`.
export { http, graphql, RequestHandler, GraphQLHandler } from './lib/handlers.js';
export { HttpResponse, passthrough, bypass, delay } from './lib/response.js';
