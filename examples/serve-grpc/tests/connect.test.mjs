// Connect-ES clients of the Greeter that run.sh serves from greeter.yaml:
// the Connect protocol in JSON (Connect-ES's default) and in protobuf, and
// gRPC-Web, through Node's transport and the web (fetch) one. The same
// grpc entries answer grpcio (test_greeter.py), these, and curl.
import { test } from "node:test";
import assert from "node:assert/strict";
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { createConnectTransport as createFetchTransport } from "@connectrpc/connect-web";

// protos/helloworld.proto's service, described at run time: what
// protoc-gen-es generates from the file, without a build step here.
const STRING = 9;
const OPTIONAL = 1;
const message = (name, field) => ({
  name,
  field: [{ name: field, jsonName: field, number: 1, type: STRING, label: OPTIONAL }],
});
const method = (name, clientStreaming, serverStreaming) => ({
  name,
  inputType: ".helloworld.HelloRequest",
  outputType: ".helloworld.HelloReply",
  clientStreaming,
  serverStreaming,
});
const file = create(FileDescriptorProtoSchema, {
  name: "helloworld.proto",
  package: "helloworld",
  syntax: "proto3",
  messageType: [message("HelloRequest", "name"), message("HelloReply", "message")],
  service: [{
    name: "Greeter",
    method: [
      method("SayHello", false, false),
      method("SpellHello", false, true),
      method("GreetAll", true, false),
    ],
  }],
});
const Greeter = createFileRegistry(file, () => undefined).getService("helloworld.Greeter");

const baseUrl = process.env.MOCKLIB_URL; // http://127.0.0.1:PORT
const node = {
  "Connect in JSON": createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "Connect in protobuf": createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
  "Connect over HTTP/2": createConnectTransport({ baseUrl, httpVersion: "2" }),
  "gRPC-Web": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
};
const fetch = {
  "Connect in JSON over fetch": createFetchTransport({ baseUrl }),
  "Connect in protobuf over fetch": createFetchTransport({ baseUrl, useBinaryFormat: true }),
};

for (const [name, transport] of Object.entries({ ...node, ...fetch })) {
  const greeter = createClient(Greeter, transport);

  test(`${name}: SayHello gets the mocked reply`, async () => {
    const reply = await greeter.sayHello({ name: "Kate" });
    assert.equal(reply.message, "Hello Kate!");
  });

  test(`${name}: SpellHello gets each reply of the stream`, async () => {
    const letters = [];
    for await (const reply of greeter.spellHello({ name: "Kate" })) letters.push(reply.message);
    assert.deepEqual(letters, ["K", "a", "t", "e"]);
  });
}

// Client streaming needs a transport that streams requests: Node's.
for (const [name, transport] of Object.entries(node)) {
  test(`${name}: GreetAll ends with the entry's status as a ConnectError`, async () => {
    const greeter = createClient(Greeter, transport);
    async function* names() {
      yield { name: "Kate" };
      yield { name: "Sarah" };
    }
    await assert.rejects(greeter.greetAll(names()), (error) => {
      assert.ok(error instanceof ConnectError, String(error));
      assert.equal(error.code, Code.NotFound);
      assert.equal(error.rawMessage, "no such person");
      return true;
    });
  });
}
