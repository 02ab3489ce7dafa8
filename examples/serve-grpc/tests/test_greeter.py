# Calls each method of the Greeter that run.sh serves from greeter.yaml,
# with stubs generated from protos/helloworld.proto, then reads what the
# server received from its journal.
import json
import os
import urllib.request

import grpc

import helloworld_pb2
import helloworld_pb2_grpc

base_url = os.environ["MOCKLIB_URL"]  # http://127.0.0.1:PORT
greeter = helloworld_pb2_grpc.GreeterStub(
    grpc.insecure_channel(base_url.removeprefix("http://")))  # h2c
kate = helloworld_pb2.HelloRequest(name="Kate")

assert greeter.SayHello(kate).message == "Hello Kate!"
assert [reply.message for reply in greeter.SpellHello(kate)] == ["K", "a", "t", "e"]
try:
    greeter.GreetAll(iter([kate, helloworld_pb2.HelloRequest(name="Sarah")]))
    raise AssertionError("GreetAll answered")
except grpc.RpcError as error:
    assert error.code() == grpc.StatusCode.NOT_FOUND, error
    assert error.details() == "no such person", error
assert [reply.message for reply in greeter.Chat(iter([kate]))] == ["Hi!", "Bye!"]

# What the server received, as proto3 JSON.
with urllib.request.urlopen(base_url + "/__mocklib/requests") as response:
    calls = [entry["grpc"] for entry in json.load(response)]
assert calls[0]["method"] == "helloworld.Greeter/SayHello"
assert calls[0]["requests"] == [{"name": "Kate"}]
assert calls[2]["requests"] == [{"name": "Kate"}, {"name": "Sarah"}]
assert calls[2]["status"] == {"code": "NOT_FOUND", "message": "no such person"}
print("greeter: all passed")
