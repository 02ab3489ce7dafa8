#!/bin/sh
# Starts `mocklib serve` once around the suite, shows what the handlers
# answer with curl, runs the suite on eight workers, and stops the server.
# Needs `mocklib` on the PATH (cargo install mocklib-cli), curl, and
# python3 with pytest, pytest-xdist and requests (requirements.txt).
cd "$(dirname "$0")"
rm -f mocklib.env
mocklib serve --handlers tests/mocks.yaml --env-out mocklib.env & mocklib=$!
while [ ! -f mocklib.env ]; do sleep 0.1; done
(
  set -a; . ./mocklib.env; set +a
  curl -sw '\n' -H 'x-api-key: secret' 'https://api.example.com/reports?year=2025'
  curl -sw '\n' https://api.example.com/orders/42
  curl -sw '\n' -H 'content-type: application/json' -d '{"title":"Ship"}' https://api.example.com/todos
  curl -sw '\n' https://api.example.com/todos
  python3 -m pytest -n 8 tests
); status=$?
kill "$mocklib"
exit "$status"
