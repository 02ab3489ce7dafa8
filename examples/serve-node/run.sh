#!/bin/sh
# Starts `mocklib serve` once around the suite, runs it with the variables
# the server prints (the proxy, the CA bundle, Node's preload), and stops
# the server. Needs `mocklib` on the PATH (cargo install mocklib-cli) and
# Node.js 18 or later.
cd "$(dirname "$0")"
rm -f mocklib.env
mocklib serve --handlers tests/mocks.yaml --env-out mocklib.env & mocklib=$!
while [ ! -f mocklib.env ]; do sleep 0.1; done
(
  set -a; . ./mocklib.env; set +a
  node --test tests/users.test.mjs
); status=$?
kill "$mocklib"
exit "$status"
