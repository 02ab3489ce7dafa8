// The Node suite, MSW style, run by node --test (node.test.mjs) and vitest
// (vitest.test.mjs) against the installed package: examples/serve-node's
// tests with JavaScript resolvers in place of the handler file, and what
// an MSW suite does (fetch, axios, https.request; once, resetHandlers,
// boundary, unhandled requests), plus what MSW cannot (child processes,
// HTTPS at the socket, the server's journal and verify).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';

import axios from 'axios';
import { bypass, delay, graphql, http, HttpResponse, passthrough } from 'mocklib';
import { setupServer } from 'mocklib/node';

const execFileP = promisify(execFile);

/** `https.get(url)` → `{ status, body, issuer }`. */
function httpsGet(url) {
  return new Promise((resolve, reject) => {
    https.get(url, (response) => {
      const issuer = response.socket.getPeerCertificate().issuer?.CN;
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, body, issuer }));
    }).on('error', reject);
  });
}

/** `fetch` POSTing `body` as JSON, with more `headers`. */
function postJson(url, body, headers = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A real server on loopback, for passthrough and bypass. */
function startUpstream() {
  const upstream = createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ real: true, path: request.url }));
  });
  return new Promise((resolve) => upstream.listen(0, '127.0.0.1', () => resolve(upstream)));
}

/**
 * Defines the suite with the runner's functions: `test`, `describe`,
 * `beforeAll`, `afterAll`, `afterEach`, and `concurrently(name, body)` (a
 * describe whose tests run eight at a time).
 */
export function suite({ test, beforeAll, afterAll, afterEach, concurrently }) {
  const server = setupServer(
    http.get('https://api.example.com/users/:id', ({ params }) => HttpResponse.json({ id: Number(params.id), name: 'Kate' })),
    graphql.query('GetUser', ({ variables }) => HttpResponse.json({ data: { user: { id: variables.id, name: 'Kate' } } })),
  );
  let upstream;
  let real;

  beforeAll(async () => {
    upstream = await startUpstream();
    real = `http://127.0.0.1:${upstream.address().port}`;
    await server.listen({ onUnhandledRequest: 'error' });
  });
  afterEach(() => server.resetHandlers());
  afterAll(async () => {
    await server.close();
    upstream.close();
  });

  test('reads a user with fetch', async () => {
    const response = await fetch('https://api.example.com/users/7');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { id: 7, name: 'Kate' });
  });

  test('reads a user with axios', async () => {
    const response = await axios.get('https://api.example.com/users/8');
    assert.deepEqual(response.data, { id: 8, name: 'Kate' });
  });

  test('reads a user with https.request, over TLS signed by mocklib', async () => {
    const { status, body, issuer } = await httpsGet('https://api.example.com/users/9');
    assert.equal(status, 200);
    assert.deepEqual(JSON.parse(body), { id: 9, name: 'Kate' });
    assert.match(issuer, /mocklib/i);
  });

  test('a resolver reads the request: body, params, cookies, headers', async () => {
    server.use(http.post('https://api.example.com/users/:team', async ({ request, params, cookies }) => {
      const user = await request.json();
      return HttpResponse.json(
        { ...user, team: params.team, session: cookies.session, agent: request.headers.get('x-agent') },
        { status: 201, headers: { location: '/users/8' } },
      );
    }));
    const response = await postJson('https://api.example.com/users/blue', { name: 'Sarah' }, { cookie: 'session=abc', 'x-agent': 'test' });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('location'), '/users/8');
    assert.deepEqual(await response.json(), { name: 'Sarah', team: 'blue', session: 'abc', agent: 'test' });
  });

  test('once answers once, then the next handler', async () => {
    server.use(http.get('https://api.example.com/users/:id', () => HttpResponse.json({ error: 'busy' }, { status: 503 }), { once: true }));
    assert.equal((await fetch('https://api.example.com/users/1')).status, 503);
    assert.equal((await fetch('https://api.example.com/users/1')).status, 200);
  });

  test('resetHandlers drops what use added; restoreHandlers makes once answer again', async () => {
    server.use(http.get('https://api.example.com/users/:id', () => HttpResponse.text('once'), { once: true }));
    assert.equal(await (await fetch('https://api.example.com/users/2')).text(), 'once');
    server.restoreHandlers();
    assert.equal(await (await fetch('https://api.example.com/users/2')).text(), 'once');
    server.use(http.get('https://api.example.com/users/:id', () => HttpResponse.text('override')));
    assert.equal(await (await fetch('https://api.example.com/users/2')).text(), 'override');
    server.resetHandlers();
    assert.deepEqual(await (await fetch('https://api.example.com/users/2')).json(), { id: 2, name: 'Kate' });
  });

  test('a resolver returning nothing lets the next handler answer', async () => {
    const seen = [];
    server.use(http.get('https://api.example.com/users/:id', ({ request }) => { seen.push(request.url); }));
    assert.equal((await fetch('https://api.example.com/users/3')).status, 200);
    assert.deepEqual(seen, ['https://api.example.com/users/3']);
  });

  test('a resolver that throws is a 500 naming the handler and the error', async () => {
    server.use(http.get('https://api.example.com/boom', function boom() {
      throw new TypeError('no user 42');
    }));
    const response = await fetch('https://api.example.com/boom');
    assert.equal(response.status, 500);
    const body = await response.json();
    assert.equal(body.name, 'CallbackError');
    assert.match(body.message, /GET https:\/\/api\.example\.com\/boom/);
    assert.match(body.message, /TypeError: no user 42/);
  });

  test('a thrown Response is the answer', async () => {
    server.use(http.get('https://api.example.com/guarded', () => {
      throw HttpResponse.text('go away', { status: 403 });
    }));
    const response = await fetch('https://api.example.com/guarded');
    assert.equal(response.status, 403);
    assert.equal(await response.text(), 'go away');
  });

  test('HttpResponse.error() is a network error', async () => {
    server.use(http.get('https://api.example.com/down', () => HttpResponse.error()));
    await assert.rejects(fetch('https://api.example.com/down'), TypeError);
    await assert.rejects(axios.get('https://api.example.com/down'));
  });

  test('passthrough() performs the real request', async () => {
    server.use(http.get(`${real}/*`, () => passthrough()));
    assert.deepEqual(await (await fetch(`${real}/greeting`)).json(), { real: true, path: '/greeting' });
    const [entry] = await server.requests({ url: `${real}/*` });
    assert.equal(entry.answer, 'passthrough');
  });

  test('bypass(request) fetches around the mocks, and the resolver alters it', async () => {
    server.use(http.get(`${real}/*`, async ({ request }) => {
      const answer = await fetch(bypass(request));
      return HttpResponse.json({ ...(await answer.json()), mocked: true });
    }));
    assert.deepEqual(await (await fetch(`${real}/profile`)).json(), { real: true, path: '/profile', mocked: true });
  });

  test('delay() delays the answer', async () => {
    server.use(http.get('https://api.example.com/slow', async () => {
      await delay(150);
      return HttpResponse.text('late');
    }));
    const started = Date.now();
    assert.equal(await (await fetch('https://api.example.com/slow')).text(), 'late');
    assert.ok(Date.now() - started >= 140, `answered after ${Date.now() - started} ms`);
  });

  test('a Response in place of the resolver is answered by the server alone', async () => {
    server.use(http.get('https://api.example.com/health', HttpResponse.text('ok', { headers: { 'x-static': 'yes' } })));
    const response = await fetch('https://api.example.com/health');
    assert.equal(await response.text(), 'ok');
    assert.equal(response.headers.get('x-static'), 'yes');
    const [entry] = await server.requests({ url: 'https://api.example.com/health' });
    assert.doesNotMatch(entry.handler, /callback/);
  });

  test('GraphQL: a query by name, and another operation falls through', async () => {
    const ask = (query, variables) => postJson('https://api.example.com/graphql', { query, variables });
    const response = await ask('query GetUser($id: ID!) { user(id: $id) { id name } }', { id: '5' });
    assert.deepEqual(await response.json(), { data: { user: { id: '5', name: 'Kate' } } });
    server.use(graphql.mutation('AddUser', ({ variables }) => HttpResponse.json({ data: { addUser: { id: 9, name: variables.name } } })));
    const added = await ask('mutation AddUser($name: String!) { addUser(name: $name) { id name } }', { name: 'Sarah' });
    assert.deepEqual(await added.json(), { data: { addUser: { id: 9, name: 'Sarah' } } });
  });

  test('child processes reach the handlers: another Node, curl', async () => {
    server.use(http.get('https://api.example.com/greeting', ({ request }) => HttpResponse.text(`hello ${request.headers.get('user-agent')?.split('/')[0]}`)));
    const { stdout: node } = await execFileP(process.execPath, ['-e', "fetch('https://api.example.com/greeting').then((r) => r.text()).then((t) => process.stdout.write(t))"]);
    assert.equal(node, 'hello node');
    const { stdout: curl } = await execFileP('curl', ['-s', 'https://api.example.com/greeting']);
    assert.equal(curl, 'hello curl');
  });

  test('a handler-file entry: a resource, in the scope of a boundary', server.boundary(async () => {
    server.use({ resource: '/todos', seed: [{ id: 1, title: 'Write tests' }] });
    const todos = `${server.url}/todos`;
    assert.equal((await postJson(todos, { title: 'Ship' })).status, 201);
    const listed = await (await fetch(todos)).json();
    assert.deepEqual(listed.map((todo) => todo.title), ['Write tests', 'Ship']);
  }));

  test('a handler the server refuses fails the requests after it, saying why; resetHandlers clears it', async () => {
    server.use(http.get('https://api.example.com/:id:x(', () => HttpResponse.text('never')));
    const failed = await fetch('https://api.example.com/users/1').then(() => null, (error) => error);
    assert.match(String(failed?.cause?.message), /invalid path pattern "https:\/\/api\.example\.com\/:id:x\(" at position 29/);
    await assert.rejects(axios.get('https://api.example.com/users/1'), /unbalanced '\('/);
    server.resetHandlers();
    assert.equal((await fetch('https://api.example.com/users/1')).status, 200);
  });

  test('verify checks times', async () => {
    server.use(http.get('https://api.example.com/counted', () => HttpResponse.text('one'), { times: 2 }));
    await fetch('https://api.example.com/counted');
    const unmet = await server.verify();
    assert.equal(unmet.ok, false);
    assert.match(unmet.report, /counted/);
    await fetch('https://api.example.com/counted');
    await server.assertVerified();
  });

  test('a scenario keyed by order id: answers change with the state requests set', async () => {
    const order = { scenario: 'order', key: '{{ request.params.id }}' };
    server.use(
      http.get('https://shop.example/orders/:id', HttpResponse.json({ state: 'open' }), { ...order, whenState: 'started' }),
      http.get('https://shop.example/orders/:id', () => HttpResponse.json({ state: 'shipped' }), { ...order, whenState: 'shipped' }),
      http.post('https://shop.example/orders/:id/ship', () => new HttpResponse(null, { status: 204 }), { ...order, setState: 'shipped' }),
    );
    assert.equal((await fetch('https://shop.example/orders/1/ship', { method: 'POST' })).status, 204);
    assert.deepEqual(await (await fetch('https://shop.example/orders/1')).json(), { state: 'shipped' });
    assert.deepEqual(await (await fetch('https://shop.example/orders/2')).json(), { state: 'open' });
  });

  test('unhandled requests: error (this suite), then warn, bypass and a function', async () => {
    await assert.rejects(fetch(`${real}/unmocked`), TypeError);
    const seen = [];
    for (const [strategy, expected] of [
      ['bypass', 200],
      ['warn', 200],
      [(request, print) => { seen.push(request.url); print.error(); }, 'network error'],
    ]) {
      const other = setupServer();
      await other.listen({ onUnhandledRequest: strategy });
      try {
        const answer = await fetch(`${real}/unmocked`).then((response) => response.status, () => 'network error');
        assert.equal(answer, expected, String(strategy));
      } finally {
        await other.close();
      }
    }
    assert.deepEqual(seen, [`${real}/unmocked`]);
  });

  concurrently('concurrent tests, each in a boundary', (each) => {
    for (let owner = 0; owner < 40; owner++) {
      each(`test ${owner} sees only its own mocks`, server.boundary(async () => {
        server.use(http.get('/orders/:id', ({ params }) => HttpResponse.json({ owner, order: params.id }), { times: 10 }));
        for (let order = 0; order < 10; order++) {
          const response = await fetch(`https://api.example.com/orders/${order}`);
          assert.deepEqual(await response.json(), { owner, order: String(order) });
        }
        assert.equal((await server.requests()).length, 10);
        await server.assertVerified();
      }));
    }
  });
}
