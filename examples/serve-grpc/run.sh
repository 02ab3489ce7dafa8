#!/bin/sh
# Generates the Python stubs, starts `mocklib serve` with the .proto file
# and the handler file, runs the client with the variables the server
# prints (gRPC's client then goes through the proxy; without them it
# connects to MOCKLIB_URL directly), and stops the server. Needs `mocklib`
# on the PATH (cargo install mocklib-cli) and python3 with grpcio and
# grpcio-tools (requirements.txt).
cd "$(dirname "$0")"
rm -f mocklib.env
python3 -m grpc_tools.protoc -I protos --python_out=tests --grpc_python_out=tests protos/helloworld.proto
mocklib serve --proto protos/helloworld.proto --handlers tests/greeter.yaml --env-out mocklib.env & mocklib=$!
while [ ! -f mocklib.env ]; do sleep 0.1; done
(set -a; . ./mocklib.env; set +a; python3 tests/test_greeter.py); status=$?
kill "$mocklib"
exit "$status"
