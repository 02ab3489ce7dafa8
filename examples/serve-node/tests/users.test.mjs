// Tests running concurrently in one Node.js process share its environment,
// so each uses its scope's `url` as the API's base URL (relative paths in
// the scope's entries match there). The proxy variables run.sh sets, with
// the NODE_OPTIONS preload that sends Node's `fetch`, `http` and `https`
// through the proxy (Node before 22 reads no proxy variables by itself),
// serve code that calls the real hosts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

const server = process.env.MOCKLIB_URL;

// Runs `body` in a scope of its own, verified and ended after it.
async function inScope(body) {
  const scope = await (await fetch(`${server}/__mocklib/scopes`, { method: 'POST' })).json();
  try {
    await body(scope);
    const verified = await (await fetch(`${scope.admin_url}/verify`)).json();
    assert.ok(verified.ok, verified.report);
  } finally {
    await fetch(`${server}/__mocklib/scopes/${scope.id}`, { method: 'DELETE' });
  }
}

async function mock(scope, yaml) {
  const added = await fetch(`${scope.admin_url}/handlers`, {
    method: 'POST',
    headers: { 'content-type': 'application/yaml' },
    body: yaml,
  });
  assert.equal(added.status, 201, await added.text());
}

test('reads a user from the files', async () => {
  const response = await fetch('https://api.example.com/users/7');
  assert.equal((await response.json()).name, 'Kate');
});

test('adds a todo in its own scope', () => inScope(async (scope) => {
  const todos = `${scope.url}/todos`;
  await mock(scope, '- resource: /todos\n  seed: [{ id: 1, title: Write tests }]\n');
  const created = await fetch(todos, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Ship' }),
  });
  assert.equal(created.status, 201);
  assert.deepEqual(await (await fetch(todos)).json(), [
    { id: 1, title: 'Write tests' },
    { id: 2, title: 'Ship' },
  ]);
}));

describe('concurrent tests', { concurrency: 8 }, () => {
  for (let owner = 0; owner < 40; owner++) {
    test(`test ${owner} sees only its own mocks`, () => inScope(async (scope) => {
      await mock(scope, `- path: /orders/:id\n  json: { owner: ${owner} }\n  times: 25\n`);
      for (let order = 0; order < 25; order++) {
        const response = await fetch(`${scope.url}/orders/${order}`);
        assert.deepEqual(await response.json(), { owner });
      }
      const journal = await (await fetch(`${scope.admin_url}/requests`)).json();
      assert.equal(journal.length, 25);
    }));
  }
});
