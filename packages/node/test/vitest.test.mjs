// The same suite under vitest.
import { afterAll, afterEach, beforeAll, describe, test } from 'vitest';

import { suite } from './suite.mjs';

suite({
  test: (name, body) => test(name, () => body()),
  beforeAll,
  afterAll,
  afterEach,
  concurrently: (name, body) => describe.concurrent(name, () => body((each, run) => test(each, () => run()))),
});
