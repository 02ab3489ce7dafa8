#!/usr/bin/env python3
"""Cargo's runner for this crate's browser tests (see .cargo/config.toml).

Serves the real event source that the sse tests reach with
`server.connect()` (the wasm-bindgen test runner serves files, which cannot
stream an endless event stream), then runs wasm-bindgen-test-runner with
cargo's arguments. The page finds the event source's origin in
/event-source.origin, written into this folder for the run.

  GET  /events?stream=NAME   an endless event stream: three events, then a
                             keep-alive comment now and then
  POST /completions          a chat completion streamed as events: each
                             word of the JSON body's "prompt", then [DONE]
  GET  /open?stream=NAME     whether stream NAME's client is still connected
  GET  /ws?stream=NAME       a real WebSocket (RFC 6455, standard library
                             only): greets, answers text uppercased and
                             binary reversed, echoes a close, closes itself
                             with 4001 on "close yourself…"; chooses the
                             first sub-protocol offered. Its client counts
                             as stream NAME for /open.
"""
import base64
import hashlib
import json
import struct
import os
import select
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
ORIGIN_FILE = os.path.join(HERE, "event-source.origin")

EVENTS = (
    b": the real event source\n\n"
    b"event: price\nid: 1\ndata: {\"symbol\":\"ACME\",\"price\":100}\n\n"
    b"event: debug\ndata: internal\n\n"
    b"event: price\nid: 2\ndata: {\"symbol\":\"ACME\",\"price\":101}\n\n"
)

# Names of the /events streams whose client is still connected.
open_streams = set()
lock = threading.Lock()


class EventSource(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def head(self, status, content_type):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        # The page's origin is another port: answer cross-origin requests.
        self.send_header("access-control-allow-origin", "*")
        self.end_headers()

    def do_OPTIONS(self):
        # The preflight of requests with headers a simple request may not
        # carry (Last-Event-ID, Cache-Control, mocklib's bypass marker).
        self.send_response(204)
        self.send_header("access-control-allow-origin", "*")
        self.send_header("access-control-allow-headers", "*")
        self.send_header("access-control-allow-methods", "GET, POST")
        self.end_headers()

    def do_GET(self):
        url = urlsplit(self.path)
        name = parse_qs(url.query).get("stream", [""])[0]
        if url.path == "/events":
            self.events(name)
        elif url.path == "/ws" and self.headers.get("upgrade", "").lower() == "websocket":
            self.websocket(name)
        elif url.path == "/open":
            with lock:
                is_open = name in open_streams
            self.head(200, "application/json")
            self.wfile.write(json.dumps(is_open).encode())
        else:
            self.head(404, "text/plain")

    def do_POST(self):
        if urlsplit(self.path).path != "/completions":
            self.head(404, "text/plain")
            return
        length = int(self.headers.get("content-length", "0"))
        prompt = json.loads(self.rfile.read(length))["prompt"]
        self.head(200, "text/event-stream")
        for word in prompt.split():
            self.wfile.write(b"data: " + json.dumps({"delta": word}, separators=(",", ":")).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")

    def events(self, name):
        self.head(200, "text/event-stream")
        with lock:
            open_streams.add(name)
        try:
            self.wfile.write(EVENTS)
            # Endless, as real event sources are: over when the client goes
            # away (its end of the socket reads as closed).
            while True:
                readable, _, _ = select.select([self.connection], [], [], 1.0)
                if readable and not self.connection.recv(1024):
                    return
                if not readable:
                    self.wfile.write(b": keep-alive\n\n")
        except OSError:
            return
        finally:
            with lock:
                open_streams.discard(name)

    def websocket(self, name):
        key = self.headers["sec-websocket-key"]
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
        offered = [p.strip() for p in self.headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
        # Written by hand: BaseHTTPRequestHandler would say HTTP/1.0, which
        # a browser refuses for a WebSocket handshake.
        head = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade",
                f"Sec-WebSocket-Accept: {accept}"]
        if offered:
            head.append(f"Sec-WebSocket-Protocol: {offered[0]}")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode())
        with lock:
            open_streams.add(name)
        try:
            self.ws_send(0x1, b"hello from the real server")
            closing = False
            while True:
                frame = self.ws_receive()
                if frame is None:
                    return
                opcode, payload = frame
                if opcode == 0x1 and payload.startswith(b"close yourself"):
                    self.ws_send(0x8, struct.pack("!H", 4001) + b"real bye")
                    closing = True
                elif opcode == 0x1:
                    self.ws_send(0x1, payload.decode().upper().encode())
                elif opcode == 0x2:
                    self.ws_send(0x2, payload[::-1])
                elif opcode == 0x9:
                    self.ws_send(0xA, payload)
                elif opcode == 0x8:
                    # The client's close is echoed; its answer to ours ends it.
                    if not closing:
                        self.ws_send(0x8, payload)
                    return
        except OSError:
            return
        finally:
            with lock:
                open_streams.discard(name)

    def ws_send(self, opcode, payload):
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, length)
        elif length < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 127, length)
        self.wfile.write(head + payload)

    def ws_receive(self):
        """The next whole message or control frame as (opcode, payload); None at the end."""
        message_opcode, parts = None, []
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return None
            fin, opcode = head[0] & 0x80, head[0] & 0x0F
            length = head[1] & 0x7F
            if length == 126:
                length = struct.unpack("!H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode >= 0x8:
                return opcode, payload
            if opcode != 0x0:
                message_opcode = opcode
            parts.append(payload)
            if fin:
                return message_opcode, b"".join(parts)


WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), EventSource)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(ORIGIN_FILE, "w") as file:
        file.write(f"http://127.0.0.1:{server.server_port}")
    try:
        return subprocess.call(["wasm-bindgen-test-runner", *sys.argv[1:]])
    finally:
        os.remove(ORIGIN_FILE)


if __name__ == "__main__":
    sys.exit(main())
