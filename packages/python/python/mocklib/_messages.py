"""What a resolver receives and answers with, as MSW has them: the
intercepted ``Request``, ``HttpResponse``, ``passthrough()`` and
``bypass(request)``."""

from __future__ import annotations

import base64
import json as _json
import ssl
import urllib.error
import urllib.request
from typing import Any, Iterable, Mapping, Union

Headers = Union[Mapping[str, str], Iterable[tuple]]


class _ClassOrInstance:
    """A method that is a constructor on the class and a reader on an
    instance, as ``Response`` in MSW: ``HttpResponse.json(data)`` builds a
    response, ``response.json()`` reads one (a ``bypass`` answer)."""

    def __init__(self, build, read):
        self._build, self._read = build, read

    def __get__(self, instance, owner):
        if instance is None:
            return self._build.__get__(owner, owner)
        return self._read.__get__(instance, owner)


class _Message:
    """What a request and a response both read: headers (``(name, value)``
    pairs) and a body (bytes)."""

    __slots__ = ()

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of header ``name`` (any case), or ``default``."""
        name = name.lower()
        return next((value for have, value in self.headers if have.lower() == name), default)

    def _read_text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def _read_json(self) -> Any:
        return _json.loads(self.body)


class Request(_Message):
    """The intercepted request, as the server sent it over the callback
    channel: ``method``, ``url``, ``headers`` (a list of ``(name, value)``
    pairs in the order received, names in lower case), ``body`` (bytes).
    ``header(name)``, ``text()`` and ``json()`` read it as MSW's
    ``request.headers.get``, ``request.text()`` and ``request.json()`` do."""

    __slots__ = ("method", "url", "headers", "body")

    def __init__(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes):
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body

    @classmethod
    def _from_call(cls, sent: dict) -> "Request":
        if sent.get("body_base64") is not None:
            body = base64.b64decode(sent["body_base64"])
        else:
            body = (sent.get("body") or "").encode("utf-8")
        headers = [(str(name).lower(), str(value)) for name, value in sent.get("headers") or []]
        return cls(sent["method"], sent["url"], headers, body)

    text = _Message._read_text
    json = _Message._read_json

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.url}>"


def _header_pairs(headers: Headers | None) -> list[tuple[str, str]]:
    if headers is None:
        return []
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(name), str(value)) for name, value in items]


class HttpResponse(_Message):
    """A mocked response, as MSW's ``HttpResponse``: ``HttpResponse(body,
    status=, headers=)``, or ``HttpResponse.json(...)``, ``.text(...)``,
    ``.html(...)``, ``.xml(...)``, ``.error()`` (a network error: the
    connection is dropped without an answer). ``headers`` is a dict or a
    list of pairs (repeated names kept). ``delay_ms`` delays the answer on
    the server.

    Passed to a handler in place of a resolver, a response is sent to the
    server as a handler-file entry and answered there, with no round trip to
    Python (unless it is an ``error()`` or has repeated headers)."""

    __slots__ = ("status", "headers", "body", "delay_ms", "_network_error", "_json")

    def __init__(
        self,
        body: str | bytes | None = None,
        status: int = 200,
        headers: Headers | None = None,
        *,
        delay_ms: int | None = None,
    ):
        self.status = status
        self.headers = _header_pairs(headers)
        self.body = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        self.delay_ms = delay_ms
        self._network_error = False
        self._json: Any = _NO_JSON

    @classmethod
    def _with_type(cls, body, content_type: str, status: int, headers: Headers | None, **extra):
        response = cls(body, status, headers, **extra)
        if response.header("content-type") is None:
            response.headers.insert(0, ("content-type", content_type))
        return response

    @classmethod
    def _build_json(cls, data: Any, status: int = 200, headers: Headers | None = None, **extra) -> "HttpResponse":
        response = cls._with_type(
            _json.dumps(data, separators=(",", ":")), "application/json", status, headers, **extra
        )
        response._json = data
        return response

    @classmethod
    def _build_text(cls, text: str, status: int = 200, headers: Headers | None = None, **extra) -> "HttpResponse":
        return cls._with_type(text, "text/plain; charset=utf-8", status, headers, **extra)

    @classmethod
    def html(cls, html: str, status: int = 200, headers: Headers | None = None, **extra) -> "HttpResponse":
        return cls._with_type(html, "text/html; charset=utf-8", status, headers, **extra)

    @classmethod
    def xml(cls, xml: str, status: int = 200, headers: Headers | None = None, **extra) -> "HttpResponse":
        return cls._with_type(xml, "text/xml", status, headers, **extra)

    @classmethod
    def error(cls) -> "HttpResponse":
        """A network error (MSW: ``HttpResponse.error()``): the client's
        connection is dropped without an answer."""
        response = cls()
        response._network_error = True
        return response

    #: ``HttpResponse.json(data, status=, headers=)``: a JSON response;
    #: ``response.json()``: the body read as JSON.
    json = _ClassOrInstance(_build_json, _Message._read_json)
    #: ``HttpResponse.text(text, status=, headers=)``: a text response;
    #: ``response.text()``: the body as text.
    text = _ClassOrInstance(_build_text, _Message._read_text)

    # The two ways it reaches the server.

    def _answer(self) -> dict:
        """The callback channel's answer."""
        if self._network_error:
            return {"network_error": True}
        response: dict[str, Any] = {"status": self.status, "headers": [list(pair) for pair in self.headers]}
        try:
            response["body"] = self.body.decode("utf-8")
        except UnicodeDecodeError:
            response["body_base64"] = base64.b64encode(self.body).decode("ascii")
        if self.delay_ms:
            response["delay_ms"] = self.delay_ms
        return {"response": response}

    def _entry_fields(self) -> dict | None:
        """The fields of a handler-file entry answering the same, or
        ``None`` when a file entry cannot say it (a network error, a body
        that is not UTF-8, a header given twice)."""
        if self._network_error:
            return None
        names = [name.lower() for name, _ in self.headers]
        if len(set(names)) != len(names):
            return None
        fields: dict[str, Any] = {"status": self.status}
        if self.headers:
            fields["headers"] = dict(self.headers)
        if self._json is not _NO_JSON:
            # `json:` would set its own content type; keep ours (the user's).
            fields["body"] = self.body.decode("utf-8")
        else:
            try:
                fields["body"] = self.body.decode("utf-8")
            except UnicodeDecodeError:
                return None
        if self.delay_ms:
            fields["delay_ms"] = self.delay_ms
        return fields

    def __repr__(self) -> str:
        if self._network_error:
            return "<HttpResponse.error()>"
        return f"<HttpResponse {self.status} {len(self.body)} bytes>"


_NO_JSON = object()


class _Passthrough:
    __slots__ = ()

    def __repr__(self) -> str:
        return "passthrough()"


_PASSTHROUGH = _Passthrough()


def passthrough() -> _Passthrough:
    """Returned by a resolver: the server performs the request for real, as
    it is (MSW: ``passthrough()``)."""
    return _PASSTHROUGH


# The headers a request or response carries for its own connection, not
# for the other end: bypass neither forwards them nor returns them.
_HOP_BY_HOP = {
    "connection",
    "content-length",
    "host",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


# The CA bundle bypass verifies real servers with: the system's roots (and
# mocklib's CA). The pytest fixture sets it to the scope's full bundle, since
# it points the test's own CA variables at mocklib's CA alone.
_bypass_cafile: str | None = None


def bypass(request: Request, *, timeout: float = 30.0) -> HttpResponse:
    """Performs ``request`` for real, from this process, with proxies
    disabled (so it does not come back to the mocks), and returns the answer
    as an ``HttpResponse`` a resolver may read, alter and return (MSW:
    ``fetch(bypass(request))``). Redirects are returned, not followed.
    HTTPS is verified against the system's roots."""
    headers = [(name, value) for name, value in request.headers if name.lower() not in _HOP_BY_HOP]
    real = urllib.request.Request(
        request.url,
        data=request.body if request.body or request.method not in ("GET", "HEAD") else None,
        method=request.method,
    )
    for name, value in headers:
        real.add_header(name, value)
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=_bypass_cafile)),
        _NoRedirect(),
    )
    try:
        answer = opener.open(real, timeout=timeout)
    except urllib.error.HTTPError as error:
        answer = error
    with answer:
        body = answer.read()
        pairs = [(name, value) for name, value in answer.headers.items() if name.lower() not in _HOP_BY_HOP]
        return HttpResponse(body, status=answer.status, headers=pairs)
