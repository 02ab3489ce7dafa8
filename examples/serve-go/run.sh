#!/bin/sh
# Starts `mocklib serve` once around the suite, runs it, and stops the
# server. Needs `mocklib` on the PATH (cargo install mocklib-cli) and Go
# 1.19 or later.
cd "$(dirname "$0")"
rm -f mocklib.env
mocklib serve --handlers tests/mocks.yaml --env-out mocklib.env & mocklib=$!
while [ ! -f mocklib.env ]; do sleep 0.1; done
(
  set -a; . ./mocklib.env; set +a
  go test ./...
); status=$?
kill "$mocklib"
exit "$status"
