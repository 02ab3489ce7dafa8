// The same suite under vitest, on the server vitest.config.mjs's global
// setup started (MOCKLIB_URL).
import assert from 'node:assert/strict';

import { afterAll, afterEach, beforeAll, describe, test } from 'vitest';

import { suite } from './suite.mjs';

// vitest's own `test`: the boundaries go to it as they are (it passes its
// context through them).
suite({
  test,
  beforeAll,
  afterAll,
  afterEach,
  concurrently: (name, body) => describe.concurrent(name, () => body(test)),
});

test("the suite's scope is on the global setup's server", async () => {
  const scopes = await (await fetch(`${process.env.MOCKLIB_URL}/__mocklib/scopes`)).json();
  assert.ok(scopes.length >= 1, JSON.stringify(scopes));
});
