"""mocklib for Python: API mocking in the style of Mock Service Worker
(MSW), answered by ``mocklib serve`` (the command this wheel carries).

With pytest, the plugin this package registers gives each test a scope of
one server (the ``mocklib`` fixture), with its environment set so that
``requests``, ``httpx``, ``urllib`` and child processes reach it, HTTPS
included::

    from mocklib import http, HttpResponse

    def test_user(mocklib):
        mocklib.use(http.get("https://api.example.com/users/:id",
                             lambda params: HttpResponse.json({"id": params["id"]})))
        assert requests.get("https://api.example.com/users/7").json() == {"id": "7"}

Without pytest: ``Server.start()`` and ``server.open_scope()``.
"""

from __future__ import annotations

from typing import Optional

from ._client import (
    JournalEntry,
    MocklibError,
    Scope,
    Server,
    Unmet,
    Verification,
    VerifyError,
    find_binary,
)
from ._handlers import GraphQLHandler, Handler, graphql, http
from ._messages import HttpResponse, Request, bypass, passthrough

__all__ = [
    "GraphQLHandler",
    "Handler",
    "HttpResponse",
    "JournalEntry",
    "MocklibError",
    "Request",
    "Scope",
    "Server",
    "Unmet",
    "Verification",
    "VerifyError",
    "bypass",
    "current_scope",
    "find_binary",
    "graphql",
    "http",
    "passthrough",
    "reset_handlers",
    "use",
]

# The scope of the test running in this process (the pytest fixture sets
# it), for `mocklib.use(...)` called from helpers that do not get the
# fixture.
_current: Optional[Scope] = None


def current_scope() -> Scope:
    """The scope the ``mocklib`` fixture opened for the running test."""
    if _current is None:
        raise RuntimeError("no mocklib scope is open: request the `mocklib` fixture in this test")
    return _current


def use(*handlers) -> None:
    """``current_scope().use(...)``: MSW's ``server.use``."""
    current_scope().use(*handlers)


def reset_handlers(*handlers) -> None:
    """``current_scope().reset_handlers(...)``: MSW's ``server.resetHandlers``."""
    current_scope().reset_handlers(*handlers)
