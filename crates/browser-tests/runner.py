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
"""
import json
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
