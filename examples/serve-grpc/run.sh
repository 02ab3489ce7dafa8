#!/bin/sh
# Generates the Python stubs, starts `mocklib serve` with the .proto file
# and the handler file, runs the client with the variables the server
# prints (gRPC's client then goes through the proxy; without them it
# connects to MOCKLIB_URL directly), then the Connect-ES clients (Connect
# and gRPC-Web, package.json), and stops the server. Needs `mocklib` on the
# PATH (cargo install mocklib-cli), python3 with grpcio and grpcio-tools
# (requirements.txt), and Node.js 20 or later with npm.
cd "$(dirname "$0")"
rm -f mocklib.env
python3 -m grpc_tools.protoc -I protos --python_out=tests --grpc_python_out=tests protos/helloworld.proto
mocklib serve --proto protos/helloworld.proto --handlers tests/greeter.yaml --env-out mocklib.env & mocklib=$!
while [ ! -f mocklib.env ]; do sleep 0.1; done
(
  set -a; . ./mocklib.env; set +a
  python3 tests/test_greeter.py &&
  npm install --no-audit --no-fund --loglevel=error &&
  node --test tests/connect.test.mjs
); status=$?
kill "$mocklib"
exit "$status"
