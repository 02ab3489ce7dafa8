// The suite under node --test.
import { after, afterEach, before, describe, test } from 'node:test';

import { suite } from './suite.mjs';

suite({
  test,
  beforeAll: before,
  afterAll: after,
  afterEach,
  concurrently: (name, body) => describe(name, { concurrency: 8 }, () => body(test)),
});
