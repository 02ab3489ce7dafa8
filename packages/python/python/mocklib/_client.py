"""The client of ``mocklib serve``: the server started from the wheel's
binary, its admin API over plain HTTP (standard library), scopes, and the
callback channel that answers a scope's ``callback`` entries with Python
resolvers."""

from __future__ import annotations

import asyncio
import base64
import inspect
import itertools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Mapping, Union
from urllib.parse import quote, urlencode, urlsplit

from . import _http
from ._handlers import Handler
from ._messages import HttpResponse, _Passthrough
from ._ws import WebSocket

Entry = Union[Handler, Mapping[str, Any], str]


class MocklibError(Exception):
    """The admin API refused a request; ``status`` and ``body`` say why (a
    ``400`` names the entry and the field)."""

    def __init__(self, what: str, status: int, body: str):
        super().__init__(f"{what}: {status} {body.strip()}")
        self.status = status
        self.body = body


class VerifyError(AssertionError):
    """``verify()`` found an expectation unmet or a request unhandled; the
    message is the server's report."""

    def __init__(self, verification: "Verification"):
        super().__init__(verification.report)
        self.verification = verification


# Binary.


def find_binary() -> str:
    """The ``mocklib`` command: ``$MOCKLIB_BIN``, else the one the wheel
    installed beside this interpreter's scripts, else the first on
    ``PATH``."""
    explicit = os.environ.get("MOCKLIB_BIN")
    if explicit:
        return explicit
    name = "mocklib.exe" if sys.platform == "win32" else "mocklib"
    candidates = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    try:
        candidates.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    for folder in candidates:
        if folder:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        "the mocklib command was not found beside this Python's scripts nor on PATH: "
        "pip install mocklib (the wheel carries it), or set MOCKLIB_BIN"
    )


# The admin API.


class _Admin:
    """Requests to the admin API, on one kept-alive connection per thread and
    origin (no proxy: straight to the server)."""

    def __init__(self, token: str | None = None):
        self._token = token
        self._local = threading.local()

    def _connection(self, netloc: str) -> _http.Connection:
        connections = getattr(self._local, "connections", None)
        if connections is None:
            connections = self._local.connections = {}
        connection = connections.get(netloc)
        if connection is None:
            connection = connections[netloc] = _http.Connection(netloc, timeout=60)
        return connection

    def _prepared(self, method: str, url: str, body: Any, content_type: str | None) -> tuple[str, str, dict, bytes | None]:
        parts = urlsplit(url)
        path = parts.path + ("?" + parts.query if parts.query else "")
        headers = {}
        if self._token:
            headers["authorization"] = f"Bearer {self._token}"
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            content_type = content_type or "application/json"
        if isinstance(body, str):
            body = body.encode("utf-8")
        if content_type:
            headers["content-type"] = content_type
        return method, path, headers, body

    def pipeline(self, netloc: str, requests: list[tuple[str, str, Any, str | None]]) -> list[tuple[int, bytes]]:
        """``requests`` (method, URL on ``netloc``, body, content type)
        sent at once on one kept connection, their answers in order."""
        prepared = [self._prepared(*request) for request in requests]
        for attempt in (0, 1):
            connection = self._connection(netloc)
            fresh = not connection.is_open
            try:
                return connection.exchange(prepared)
            except _http.ConnectionLost:
                # A kept-alive connection the server closed: once more on a new one.
                if attempt or fresh:
                    raise
        raise AssertionError("unreachable")

    def request(self, method: str, url: str, body: Any = None, content_type: str | None = None) -> tuple[int, bytes]:
        return self.pipeline(urlsplit(url).netloc, [(method, url, body, content_type)])[0]

    def json(self, what: str, method: str, url: str, body: Any = None, content_type: str | None = None, ok=(200, 201, 204)) -> Any:
        status, data = self.request(method, url, body, content_type)
        if status not in ok:
            raise MocklibError(what, status, data.decode("utf-8", "replace"))
        return json.loads(data) if data else None


# The server.


class Server:
    """``mocklib serve``, started from the wheel's binary and stopped with
    this process (``--until-stdin-closes``). ``url`` is its base URL and the
    admin API's home; ``env`` what it printed (its own scope's proxy and CA
    bundle). ``Server.connect(url)`` speaks to one started elsewhere."""

    def __init__(
        self,
        url: str,
        env: Mapping[str, str] | None = None,
        process: subprocess.Popen | None = None,
        token: str | None = None,
        ca_file: str | None = None,
    ):
        self.url = url.rstrip("/")
        self.env = dict(env or {})
        self._process = process
        self._admin = _Admin(token)
        #: mocklib's CA certificate alone (PEM), when known: every HTTPS
        #: answer through the proxy is signed by it.
        self.ca_file = ca_file or self.env.get("MOCKLIB_CA_FILE")
        self._own_dir: str | None = None

    @classmethod
    def start(cls, *args: str, binary: str | None = None, token: str | None = None) -> "Server":
        """Starts ``mocklib serve ARGS...`` (``--handlers FILE``, ``--har
        FILE``, ``--record FILE``, ...) and waits until it listens."""
        own_dir = tempfile.mkdtemp(prefix="mocklib-")
        command = [binary or find_binary(), "serve", "--until-stdin-closes", "--ca-out", os.path.join(own_dir, "ca.pem"), *args]
        if token:
            command += ["--admin-token", token]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, text=True, bufsize=1
        )
        env: dict[str, str] = {}
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            if not line:
                break
            name, _, value = line.partition("=")
            env[name] = value
        if "MOCKLIB_URL" not in env:
            process.wait(timeout=10)
            raise RuntimeError(f"mocklib serve exited ({process.returncode}) before it listened: {' '.join(command)}")
        # Nothing more is read from it; keep the pipe drained all the same.
        threading.Thread(target=_drain, args=(process.stdout,), daemon=True).start()
        server = cls(env["MOCKLIB_URL"], env, process, token)
        server._own_dir = own_dir
        return server

    @classmethod
    def connect(cls, url: str, token: str | None = None, ca_file: str | None = None) -> "Server":
        """A server started elsewhere, at its ``MOCKLIB_URL``; ``ca_file``
        is its CA certificate (``--ca-out``), if known."""
        return cls(url, token=token, ca_file=ca_file)

    def stop(self) -> None:
        if self._process is None:
            return
        process, self._process = self._process, None
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait()
        if self._own_dir:
            shutil.rmtree(self._own_dir, ignore_errors=True)

    def open_scope(self) -> "Scope":
        """Opens a scope: its own handlers over the files', journal and
        expectations, and its own port and proxy credential."""
        described = self._admin.json("opening a scope", "POST", self.url + "/__mocklib/scopes")
        return Scope(self, described)

    def record(self, path: str, mode: str = "once") -> None:
        """Records what is performed for real into the HAR file ``path``."""
        self._admin.json("starting to record", "POST", self.url + "/__mocklib/record", {"path": os.path.abspath(path), "mode": mode})

    def stop_recording(self) -> None:
        self._admin.json("stopping the recording", "DELETE", self.url + "/__mocklib/record")

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _drain(stream) -> None:
    for _ in stream:
        pass


# The journal and verify, as Python objects.


class JournalEntry:
    """One request of a scope's journal: ``method``, ``url``, ``headers``
    (a dict, repeated headers joined with ``", "``), ``body`` (text, or bytes
    when it is not UTF-8), ``handler`` (the header of the handler that
    answered, or ``None``), ``answer`` (``mocked``, ``passthrough``,
    ``network_error``, ``unhandled``, ``websocket``) and ``status``.
    ``entry["body"]`` reads the admin API's JSON as it is."""

    def __init__(self, data: dict):
        self.data = data
        self.method: str = data.get("method", "")
        self.url: str = data.get("url", "")
        self.headers: dict = data.get("headers") or {}
        body = data.get("body")
        if data.get("body_encoding") == "base64" and body is not None:
            body = base64.b64decode(body)
        self.body: Union[str, bytes, None] = body
        self.handler: str | None = data.get("handler")
        self.answer: str | None = data.get("answer")
        self.status: int | None = data.get("status")

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __repr__(self) -> str:
        return f"<JournalEntry {self.method} {self.url} {self.answer} {self.status}>"


class Unmet:
    """An expectation that was not met: the handler, what was expected and
    how many requests it received."""

    def __init__(self, data: dict):
        self.handler: str = data.get("handler", "")
        self.expected: str = data.get("expected", "")
        self.at_least: int | None = data.get("at_least")
        self.at_most: int | None = data.get("at_most")
        self.received: int = data.get("received", 0)

    def __repr__(self) -> str:
        return f"<Unmet {self.handler}: expected {self.expected}, received {self.received}>"


class Verification:
    """``verify()``'s result: ``ok``, the server's ``report`` (what Rust's
    ``verify()`` prints), the ``unmet`` expectations and the ``unhandled``
    requests."""

    def __init__(self, data: dict):
        self.ok: bool = bool(data.get("ok"))
        self.report: str = data.get("report", "")
        self.unmet = [Unmet(item) for item in data.get("unmet") or []]
        self.unhandled = data.get("unhandled") or []
        self.data = data

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return "<Verification ok>" if self.ok else f"<Verification failed: {len(self.unmet)} unmet>"


# Scopes.


class Scope:
    """A scope of ``mocklib serve`` (one of MSW's boundaries, for another
    process): ``url`` (its own port, a base URL), ``proxy_url``, ``env``
    (the variables that send a process's requests to it, HTTPS included),
    and MSW's server methods: ``use``, ``reset_handlers``, ``list_handlers``;
    and ``requests`` (the journal), ``verify``, ``close``."""

    def __init__(self, server: Server, described: dict):
        self.server = server
        self.id = described["id"]
        self.url: str = described["url"]
        self.proxy_url: str = described["proxy_url"]
        self.admin_url: str = described["admin_url"]
        self.env: dict = described["env"]
        self._admin = server._admin
        # The scope's resources on the server's own origin: one kept
        # connection for every scope (its own port's closes when it ends).
        self._api = f"{server.url}/__mocklib/scopes/{self.id}"
        self._callbacks: dict[str, Handler] = {}
        self._names = itertools.count(1)
        self._channel: _Channel | None = None
        self._lock = threading.Lock()
        self.closed = False
        # Whether the pytest plugin verifies it after the test.
        self._verify = False

    # Handlers.

    def _entries(self, handlers: Iterable[Entry]) -> list:
        """The request bodies for ``handlers``, in order: JSON lists, and
        YAML text sent as it is."""
        bodies: list = []
        for handler in handlers:
            if isinstance(handler, str):
                bodies.append(handler)
                continue
            if isinstance(handler, Handler):
                entry = handler._static_entry()
                if entry is None:
                    name = f"py{next(self._names)}"
                    self._ensure_channel()
                    self._callbacks[name] = handler
                    entry = handler._callback_entry(name)
            elif isinstance(handler, Mapping):
                entry = dict(handler)
            elif isinstance(handler, (list, tuple)):
                bodies.extend(self._entries(handler))
                continue
            else:
                raise TypeError(f"a handler, a handler-file entry (dict) or YAML text, not {handler!r}")
            if bodies and isinstance(bodies[-1], list):
                bodies[-1].append(entry)
            else:
                bodies.append([entry])
        return bodies

    def _send(self, method: str, body) -> None:
        if isinstance(body, str):
            self._admin.json("adding handlers", method, self._api + "/handlers", body, "application/yaml")
        else:
            self._admin.json("adding handlers", method, self._api + "/handlers", body)

    def use(self, *handlers: Entry) -> None:
        """Puts ``handlers`` ahead of the others, first given first (MSW:
        ``server.use``). Each is a ``Handler`` (``http.get(...)``,
        ``graphql.query(...)``), a handler-file entry as a dict, or YAML
        text of entries."""
        bodies = self._entries(handlers)
        # The server puts each body ahead of what is there: the last first.
        for body in reversed(bodies):
            self._send("POST", body)

    def reset_handlers(self, *handlers: Entry) -> None:
        """Without arguments: back to the files' handlers (MSW:
        ``server.resetHandlers()``). With: they become the whole list."""
        if not handlers:
            self._admin.json("resetting the handlers", "DELETE", self._api + "/handlers")
            return
        bodies = self._entries(handlers)
        if len(bodies) == 1:
            self._send("PUT", bodies[0])
            return
        # YAML and entries mixed: the first replaces, the others go behind it in turn.
        self._admin.json("resetting the handlers", "PUT", self._api + "/handlers", [])
        for body in reversed(bodies):
            self._send("POST", body)

    def list_handlers(self) -> list:
        """The handlers in lookup order: ``{handler, once, added_at_runtime}``."""
        return self._admin.json("listing the handlers", "GET", self._api + "/handlers")

    # The journal and expectations.

    def requests(self, method: str | None = None, url: str | None = None, handler: str | None = None, unhandled: bool | None = None) -> list[JournalEntry]:
        """The scope's journal, oldest first, filtered as ``GET requests``
        is (``url`` is a mocklib pattern)."""
        query = {}
        if method:
            query["method"] = method
        if url:
            query["url"] = url
        if handler:
            query["handler"] = handler
        if unhandled is not None:
            query["unhandled"] = "true" if unhandled else "false"
        target = self._api + "/requests" + ("?" + urlencode(query, quote_via=quote) if query else "")
        return [JournalEntry(item) for item in self._admin.json("reading the journal", "GET", target)]

    def clear_requests(self) -> None:
        self._admin.json("clearing the journal", "DELETE", self._api + "/requests")

    def verify(self) -> Verification:
        """Every handler's ``times`` against what it received, and the
        requests no handler answered."""
        return Verification(self._admin.json("verifying", "GET", self._api + "/verify", ok=(200, 422)))

    def assert_verified(self) -> None:
        verification = self.verify()
        if not verification.ok:
            raise VerifyError(verification)

    # Scenarios.

    def scenarios(self) -> list[dict]:
        """The states of the scope's scenarios set so far:
        ``[{"scenario", "key", "state"}]`` (one not listed is ``started``)."""
        return self._admin.json("reading the scenarios", "GET", self._api + "/scenarios")

    def set_scenario_state(self, scenario: str, state: str, key: str = "") -> None:
        """Puts ``scenario`` (for ``key``, when it is keyed) in ``state``."""
        self._admin.json(
            "setting a scenario's state", "PUT", self._api + "/scenarios",
            [{"scenario": scenario, "key": key, "state": state}],
        )

    def reset_scenarios(self) -> None:
        """Every scenario back to ``started`` (``reset_handlers`` does it too)."""
        self._admin.json("resetting the scenarios", "DELETE", self._api + "/scenarios")

    # The callback channel.

    def open_channel(self) -> None:
        """Opens the scope's callback channel now (the first Python resolver
        ``use``d opens it otherwise); the pytest plugin opens it while the
        test before runs."""
        self._ensure_channel()

    def _ensure_channel(self) -> None:
        with self._lock:
            if self._channel is None:
                url = "ws" + self.admin_url[len("http"):] + "/callbacks"
                self._channel = _Channel(self, url, self._admin._token)

    def close(self) -> None:
        """Ends the scope: its port, credential and channel close."""
        self._close(open_next=False)

    def _close(self, open_next: bool) -> "Scope | None":
        """Ends the scope; with ``open_next``, opens another in the same
        round trip (the two requests pipelined) and returns it."""
        if self.closed:
            return self.server.open_scope() if open_next else None
        self.closed = True
        netloc = urlsplit(self.server.url).netloc
        requests = [("DELETE", f"{self.server.url}/__mocklib/scopes/{self.id}", None, None)]
        if open_next:
            requests.append(("POST", self.server.url + "/__mocklib/scopes", None, None))
        try:
            answers = self._admin.pipeline(netloc, requests)
        finally:
            # The scope has ended (or the server is gone): the server closes
            # the channel, and the reader then ends without us waiting.
            if self._channel is not None:
                self._channel.close(wait=False)
        status, data = answers[0]
        if status not in (204, 404):
            raise MocklibError("closing a scope", status, data.decode("utf-8", "replace"))
        if not open_next:
            return None
        status, data = answers[1]
        if status != 201:
            raise MocklibError("opening a scope", status, data.decode("utf-8", "replace"))
        return Scope(self.server, json.loads(data))

# The threads resolvers run on, shared by every scope of this process, so
# that a resolver that waits (on ``bypass``, or on a request of its own
# through the mocks) does not hold the others, and a scope costs no pool.
_resolvers = ThreadPoolExecutor(max_workers=16, thread_name_prefix="mocklib-resolver")


class _Channel:
    """The scope's callback channel: a background thread reads the server's
    calls and answers each with its handler's resolver, on the shared pool."""

    def __init__(self, scope: Scope, url: str, token: str | None):
        headers = {"authorization": f"Bearer {token}"} if token else None
        self._socket = WebSocket(url, headers)
        self._scope = scope
        self._reader = threading.Thread(target=self._read, name=f"mocklib-scope-{scope.id}-callbacks", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            text = self._socket.recv_text()
            if text is None:
                break
            try:
                call = json.loads(text)
            except ValueError:
                continue
            if call.get("type") != "call":
                continue
            _resolvers.submit(self._answer, call)

    def _answer(self, call: dict) -> None:
        answer: dict[str, Any]
        handler = self._scope._callbacks.get(call.get("callback", ""))
        try:
            if handler is None:
                raise LookupError(f"no resolver is named {call.get('callback')!r} in this process")
            result = handler._resolve(call)
            if inspect.iscoroutine(result):
                # An `async def` resolver: run on this pool thread's own loop.
                result = asyncio.run(result)
            if result is None:
                answer = {"fallthrough": True}
            elif isinstance(result, _Passthrough):
                answer = {"passthrough": True}
            elif isinstance(result, HttpResponse):
                answer = result._answer()
            else:
                raise TypeError(
                    f"the resolver returned {result!r}: return an HttpResponse, passthrough() or None (fall through)"
                )
        except Exception as error:  # noqa: BLE001 - the resolver's error becomes the answer
            answer = {"error": f"{type(error).__name__}: {error}\n{traceback.format_exc()}"}
        answer["id"] = call.get("id")
        try:
            self._socket.send_text(json.dumps(answer))
        except OSError:
            pass  # the channel closed: the server answers 502 itself

    def close(self, wait: bool = True) -> None:
        """Closes the channel; with ``wait``, until the reader has seen the
        server's close."""
        self._socket.close()
        if wait:
            self._reader.join(timeout=5)
