"""The pytest plugin (entry point ``pytest11``): one ``mocklib serve`` per
test run, shared by pytest-xdist's workers, and the ``mocklib`` fixture,
which gives each test a scope of it with the scope's environment set,
verifies the scope after the test (an unmet expectation fails the test with
the server's report) and closes it.

Options: ``--mocklib-handlers FILE`` (also the ini option
``mocklib_handlers``), ``--mocklib-record PATH`` with
``--mocklib-record-mode``, ``--mocklib-server URL`` (a server started
elsewhere), ``--mocklib-no-verify``. Fixtures: ``mocklib`` (the test's
``Scope``), ``mocklib_server`` (the session's ``Server``) and
``mocklib_handlers`` (override it to give every test initial handlers, as
``setupServer(...handlers)`` does in MSW).
"""

from __future__ import annotations

import os
import time
import urllib.request

import pytest

import mocklib as _mocklib
from . import _messages
from ._client import Scope, Server, VerifyError

_SERVER_KEY = "mocklib_url"
# A scope opened ahead for the next test is used within this many seconds,
# or ended (the server ends a scope left alone for --scope-idle-timeout,
# ten minutes by default).
_PREFETCH_FRESH_SECONDS = 60
_CA_KEY = "mocklib_ca_file"
# The variables that name a CA bundle for Python's clients and curl: the
# fixture points them at mocklib's CA alone (ini `mocklib_ca_bundle`).
# Loading the full bundle (the system's roots, ~150 certificates) costs
# every new TLS client context tens of milliseconds: most of a test's time.
_CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


def pytest_addoption(parser):
    group = parser.getgroup("mocklib", "mocklib: API mocking with mocklib serve")
    group.addoption(
        "--mocklib-handlers",
        action="append",
        default=[],
        metavar="FILE",
        help="a handler file (YAML or JSON) the server loads for every scope; repeatable",
    )
    group.addoption(
        "--mocklib-record",
        metavar="PATH",
        help="record the requests the tests perform for real (passthrough, unhandled) into the HAR file PATH; "
        "with the default mode `once`, an existing PATH is replayed instead",
    )
    group.addoption(
        "--mocklib-record-mode",
        default="once",
        choices=["once", "new_episodes", "none", "all"],
        help="how --mocklib-record records, as pytest-recording's --record-mode (default: once)",
    )
    group.addoption(
        "--mocklib-server",
        metavar="URL",
        help="use the mocklib serve already running at URL (its MOCKLIB_URL) instead of starting one",
    )
    group.addoption(
        "--mocklib-per-worker",
        action="store_true",
        help="with pytest-xdist, a server per worker instead of one the workers share",
    )
    group.addoption(
        "--mocklib-no-verify",
        action="store_true",
        help="do not verify each test's scope after the test",
    )
    parser.addini("mocklib_handlers", "handler files the server loads (relative to the ini file)", type="paths", default=[])
    parser.addini("mocklib_args", "more arguments for mocklib serve", type="args", default=[])
    parser.addini(
        "mocklib_ca_bundle",
        "what the test's SSL_CERT_FILE, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE name: `ca` (mocklib's CA "
        "alone, default: fast to load, and every HTTPS answer through the proxy is signed by it) or `full` "
        "(the system's roots too, for a client that also reaches real hosts directly)",
        default="ca",
    )


class _Session:
    """The run's server, started at the first test that asks for it (in a
    run with pytest-xdist, by the controller before the workers start)."""

    def __init__(self, config):
        self.config = config
        self.server: Server | None = None
        self.started = False
        # The next test's scope, opened when the test before ended, in the
        # same round trip as that test's scope closed.
        self._next: Scope | None = None
        self._next_opened = 0.0

    def _arguments(self) -> list:
        config = self.config
        arguments: list = []
        for path in config.getini("mocklib_handlers"):
            arguments += ["--handlers", str(path)]
        for path in config.getoption("mocklib_handlers"):
            arguments += ["--handlers", os.path.abspath(path)]
        record = config.getoption("mocklib_record")
        if record:
            arguments += ["--record", os.path.abspath(record), "--record-mode", config.getoption("mocklib_record_mode")]
        arguments += list(config.getini("mocklib_args"))
        return arguments

    def get(self) -> Server:
        if self.server is None:
            config = self.config
            token = os.environ.get("MOCKLIB_ADMIN_TOKEN")
            workerinput = getattr(config, "workerinput", {})
            given = workerinput.get(_SERVER_KEY) or config.getoption("mocklib_server")
            if given:
                self.server = Server.connect(given, token=token, ca_file=workerinput.get(_CA_KEY))
            else:
                self.server = Server.start(*self._arguments(), token=token)
                self.started = True
        return self.server

    def take_scope(self) -> Scope:
        """A scope for the test starting now: the one opened when the test
        before ended, unless it is too old."""
        server = self.get()
        scope, self._next = self._next, None
        # One opened long ago (a long test before, or tests without the
        # fixture) may be near the server's idle timeout: a fresh one instead.
        if scope is not None and time.monotonic() - self._next_opened > _PREFETCH_FRESH_SECONDS:
            scope.close()
            scope = None
        return scope if scope is not None else server.open_scope()

    def finish(self, scope: Scope) -> None:
        """Ends ``scope`` and opens the next test's, in one round trip.
        (Measured against doing both on a thread behind the tests, and the
        callback channel opened there too: that thread's Python competes
        with the test's own and cost more than it hid; docs/BENCHMARKS.md,
        "Python: the pytest plugin". The channel opens at a test's first
        Python resolver.)"""
        try:
            self._next = scope._close(open_next=True)
        except Exception:  # noqa: BLE001 - the next test opens its own, where an error is its
            self._next = None
        self._next_opened = time.monotonic()

    def stop(self) -> None:
        scope, self._next = self._next, None
        if scope is not None:
            try:
                scope.close()
            except Exception:  # noqa: BLE001 - the server goes next anyway
                pass
        if self.server is not None and self.started:
            self.server.stop()
        self.server = None


def pytest_configure(config):
    config._mocklib = _Session(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    # pytest-xdist's controller, before a worker starts: the workers share
    # the controller's server (measured against one per worker in
    # docs/BENCHMARKS.md, "Python: the pytest plugin").
    config = node.config
    if config.getoption("mocklib_per_worker"):
        if config.getoption("mocklib_record"):
            raise pytest.UsageError("--mocklib-record records from one server: drop --mocklib-per-worker")
        return
    server = config._mocklib.get()
    node.workerinput[_SERVER_KEY] = server.url
    node.workerinput[_CA_KEY] = server.ca_file


def pytest_unconfigure(config):
    session = getattr(config, "_mocklib", None)
    if session is not None:
        session.stop()


@pytest.fixture(scope="session")
def mocklib_server(pytestconfig) -> Server:
    """The run's ``mocklib serve``: started once, shared by the workers."""
    return pytestconfig._mocklib.get()


@pytest.fixture
def mocklib_handlers() -> list:
    """The handlers every test's scope starts with, ahead of the files'
    (override in a conftest.py: MSW's ``setupServer(...handlers)``)."""
    return []


def _reset_urllib() -> None:
    # urllib.request.urlopen keeps the opener it builds at its first call,
    # with the proxies the environment had then: forget it, so the next
    # call reads this scope's.
    urllib.request.install_opener(None)


@pytest.fixture
def mocklib(mocklib_server, mocklib_handlers, monkeypatch, request):
    """A scope of the run's server for this test, its environment set (the
    proxy and CA bundle variables that ``requests``, ``httpx``, ``urllib``
    and child processes read), verified after the test and closed."""
    session = request.config._mocklib
    scope = session.take_scope()
    previous = _mocklib._current
    try:
        for name, value in scope.env.items():
            monkeypatch.setenv(name, value)
        # bypass() verifies real servers with the full bundle.
        monkeypatch.setattr(_messages, "_bypass_cafile", scope.env.get("SSL_CERT_FILE"))
        if mocklib_server.ca_file and request.config.getini("mocklib_ca_bundle") != "full":
            for name in _CA_VARIABLES:
                monkeypatch.setenv(name, mocklib_server.ca_file)
        _reset_urllib()
        if mocklib_handlers:
            scope.use(*mocklib_handlers)
        _mocklib._current = scope
        scope._verify = not request.config.getoption("mocklib_no_verify")
        yield scope
    finally:
        _mocklib._current = previous
        session.finish(scope)
        _reset_urllib()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    # The test passed: now its scope's expectations (a failure here fails
    # the test, with the server's report).
    scope = getattr(item, "funcargs", {}).get("mocklib")
    if isinstance(scope, _mocklib.Scope) and getattr(scope, "_verify", False) and not scope.closed:
        verification = scope.verify()
        if not verification.ok:
            __tracebackhide__ = True
            raise VerifyError(verification)
    return result
