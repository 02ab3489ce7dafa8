"""Request handlers as MSW writes them: ``http.get(path, resolver)``,
``graphql.query(name, resolver)``. A handler becomes a handler-file entry
for ``mocklib serve``: a static one when the resolver is an
``HttpResponse`` (answered by the server alone), a ``callback`` entry when
it is a function (the server asks this process over the scope's callback
channel)."""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Mapping, Union

from ._messages import _NO_JSON, HttpResponse, Request

Times = Union[int, tuple, Mapping[str, int]]


class Handler:
    """One handler: what ``mocklib.use`` and ``reset_handlers`` take.
    ``once`` answers once, then lets the next handler take the requests;
    ``times`` is what ``verify`` checks (a count, ``(at_least, at_most)``
    with ``None`` for no bound, or ``{"at_least": n}``); ``match`` adds a
    handler file's conditions (``{"headers": {...}, "query": {...},
    "json": {...}, ...}``), checked on the server before any round trip.
    ``scenario`` with ``when_state`` (answer only in that state) and
    ``set_state`` (move it after answering), and ``key`` (a template of the
    request, ``"{{ request.params.id }}"``: a state per key), make answers
    change with a state the requests set; ``chaos`` (``{"fault_rate": 0.1,
    "fault": "connection_reset", "latency": {...}, "seed": n}``) makes the
    handler unreliable, seeded; ``webhook`` (``{"url": ..., "json": {...},
    "delay_ms": n}``, strings templates over ``request`` and ``response``)
    sends a request of the server's own after answering."""

    def __init__(
        self,
        method: str | None,
        path: str | None,
        resolver: Callable | HttpResponse,
        *,
        once: bool = False,
        times: Times | None = None,
        match: Mapping[str, Any] | None = None,
        timeout_ms: int | None = None,
        scenario: str | None = None,
        when_state: str | None = None,
        set_state: str | None = None,
        key: str | None = None,
        chaos: Mapping[str, Any] | None = None,
        webhook: Mapping[str, Any] | None = None,
    ):
        if not (callable(resolver) or isinstance(resolver, HttpResponse)):
            raise TypeError(f"a resolver is a function or an HttpResponse, not {resolver!r}")
        self.method = method
        self.path = path
        self.resolver = resolver
        self.once = once
        self.times = times
        self.match = dict(match) if match else None
        self.timeout_ms = timeout_ms
        # The fields any handler-file entry takes, as the entry writes them.
        self.behaviour = {
            name: value
            for name, value in (
                ("scenario", scenario),
                ("when_state", when_state),
                ("set_state", set_state),
                ("key", key),
                ("chaos", dict(chaos) if chaos else None),
                ("webhook", dict(webhook) if webhook else None),
            )
            if value is not None
        }

    def _base_entry(self) -> dict:
        entry: dict[str, Any] = {}
        if self.method:
            entry["method"] = self.method
        if self.path is not None:
            entry["path"] = self.path
        if self.match:
            entry["match"] = self.match
        if self.once:
            entry["once"] = True
        if self.times is not None:
            entry["times"] = _times(self.times)
        entry.update(self.behaviour)
        return entry

    def _static_entry(self) -> dict | None:
        """The entry when the server can answer alone, else ``None``."""
        if isinstance(self.resolver, HttpResponse):
            fields = self.resolver._entry_fields()
            if fields is not None:
                return {**self._base_entry(), **fields}
        return None

    def _callback_entry(self, name: str) -> dict:
        entry = {**self._base_entry(), "callback": name}
        if self.timeout_ms is not None:
            entry["timeout_ms"] = self.timeout_ms
        return entry

    def _resolve(self, call: dict) -> Any:
        """What the resolver answers ``call`` (a callback channel frame)
        with: an ``HttpResponse``, ``passthrough()`` or ``None``."""
        if isinstance(self.resolver, HttpResponse):
            return self.resolver
        request = Request._from_call(call["request"])
        arguments = {
            "request": request,
            "params": call.get("params") or {},
            "cookies": call.get("cookies") or {},
        }
        return _call(self.resolver, arguments, ("request", "params", "cookies"))

    def __repr__(self) -> str:
        return f"<Handler {self.method or 'ALL'} {self.path or '*'}>"


def _times(times: Times) -> Any:
    if isinstance(times, int):
        return times
    if isinstance(times, Mapping):
        return dict(times)
    at_least, at_most = times
    bounds = {}
    if at_least is not None:
        bounds["at_least"] = at_least
    if at_most is not None:
        bounds["at_most"] = at_most
    return bounds


# How each resolver is called, by the names of its parameters: computed once
# per function.
_PLANS: dict = {}


def _call(function: Callable, arguments: dict, order: tuple) -> Any:
    """Calls ``function`` with the arguments it asks for, as MSW's
    destructuring of the resolver's argument allows fewer: a parameter named
    as an argument (``request``, ``params``, ``cookies``, ...) gets it; any
    other positional parameter gets the next one in ``order``; ``**kwargs``
    gets the rest."""
    plan = _PLANS.get(function)
    if plan is None:
        plan = _PLANS[function] = _plan(function, set(arguments), order)
    positional, named, rest = plan
    args = [arguments[name] for name in positional]
    kwargs = {name: arguments[name] for name in named}
    if rest:
        kwargs.update({name: value for name, value in arguments.items() if name not in kwargs and name not in positional})
    return function(*args, **kwargs)


def _plan(function: Callable, known: set, order: tuple) -> tuple:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return list(order), [], False
    positional: list = []
    named: list = []
    rest = False
    unnamed = iter(order)
    taken = {parameter.name for parameter in signature.parameters.values() if parameter.name in known}
    for parameter in signature.parameters.values():
        kind = parameter.kind
        if kind == parameter.VAR_KEYWORD:
            rest = True
        elif kind == parameter.VAR_POSITIONAL:
            continue
        elif parameter.name in known:
            (named if kind == parameter.KEYWORD_ONLY else positional).append(parameter.name)
        elif kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            if parameter.default is not parameter.empty:
                continue
            name = next((name for name in unnamed if name not in taken), None)
            if name is None:
                raise TypeError(f"the resolver {function.__name__} takes more arguments than {', '.join(order)}")
            positional.append(name)
            taken.add(name)
    return positional, named, rest


def _method_factory(method: str | None):
    def make(path: str, resolver: Callable | HttpResponse, **options: Any) -> Handler:
        return Handler(method, path, resolver, **options)

    make.__name__ = (method or "all").lower()
    make.__doc__ = (
        f"A handler for {method or 'every method'} requests to ``path`` (a mocklib pattern: "
        "``https://api.example.com/users/:id``, ``/users/*``; relative paths match on every host). "
        "``resolver(request, params, cookies)`` answers; it may take fewer of them, by name. "
        "Options: ``once``, ``times``, ``match``, ``timeout_ms``, ``scenario``, ``when_state``, "
        "``set_state``, ``key``, ``chaos``, ``webhook`` (see ``Handler``)."
    )
    return make


class _Http:
    """MSW's ``http`` namespace: ``http.get(path, resolver)`` and the other
    methods; ``http.all`` matches any method."""

    get = staticmethod(_method_factory("GET"))
    post = staticmethod(_method_factory("POST"))
    put = staticmethod(_method_factory("PUT"))
    patch = staticmethod(_method_factory("PATCH"))
    delete = staticmethod(_method_factory("DELETE"))
    head = staticmethod(_method_factory("HEAD"))
    options = staticmethod(_method_factory("OPTIONS"))
    all = staticmethod(_method_factory(None))


http = _Http()


# GraphQL: the operation's type and name, read from the document as MSW
# does when the request names none (`operationName`).
_COMMENT = re.compile(r"#[^\n]*")
_OPERATION = re.compile(r"\b(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?")


def _operation_of(document: str, operation_name: str | None) -> tuple[str, str | None]:
    text = _COMMENT.sub("", document or "")
    operations = [(kind, name) for kind, name in _OPERATION.findall(text)]
    if operation_name:
        for kind, name in operations:
            if name == operation_name:
                return kind, name
    if operations:
        kind, name = operations[0]
        return kind, name or None
    # `{ user { id } }`: the query shorthand.
    return "query", None


class GraphQLHandler(Handler):
    """A GraphQL operation's handler: a ``callback`` entry on ``POST``
    requests whose body names the operation (checked on the server by
    ``body_contains``, then here against the parsed document, so a request
    for another operation falls through to the next handler)."""

    def __init__(self, kind: str | None, name: Union[str, re.Pattern, None], resolver, endpoint: str | None, **options):
        match = dict(options.pop("match", None) or {})
        if isinstance(name, str) and "body_contains" not in match:
            match["body_contains"] = name
        super().__init__("POST", endpoint, resolver, match=match, **options)
        self.kind = kind
        self.name = name

    def _static_entry(self) -> dict | None:
        """A ``graphql`` entry when the answer is a constant GraphQL
        response (``{"data": ..., "errors": ...}``): the server reads the
        operation itself (GET and POST, batches); else ``None``, and the
        operation is read here."""
        if not isinstance(self.resolver, HttpResponse) or self.resolver._json is _NO_JSON:
            return None
        payload = self.resolver._json
        if not isinstance(payload, dict) or not payload or set(payload) - {"data", "errors"}:
            return None
        fields = self.resolver._entry_fields()
        extra = set(self.match or {}) - {"body_contains"}
        if fields is None or extra:
            return None  # conditions a graphql entry does not take
        if isinstance(self.name, re.Pattern):
            name = f"/{self.name.pattern}/"
        else:
            name = self.name or ""
        entry: dict[str, Any] = {"graphql": f"{self.kind or 'operation'} {name}".strip(), **payload}
        if self.path is not None:
            entry["endpoint"] = self.path
        entry["status"] = fields["status"]
        headers = {name: value for name, value in fields.get("headers", {}).items() if name.lower() != "content-type"}
        if headers:
            entry["headers"] = headers
        if "delay_ms" in fields:
            entry["delay_ms"] = fields["delay_ms"]
        if self.once:
            entry["once"] = True
        if self.times is not None:
            entry["times"] = _times(self.times)
        entry.update(self.behaviour)
        return entry

    def _resolve(self, call: dict) -> Any:
        request = Request._from_call(call["request"])
        try:
            payload = request.json()
        except ValueError:
            return None
        if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            return None
        kind, name = _operation_of(payload["query"], payload.get("operationName"))
        if self.kind is not None and kind != self.kind:
            return None
        if isinstance(self.name, re.Pattern):
            if name is None or not self.name.search(name):
                return None
        elif self.name is not None and name != self.name:
            return None
        if isinstance(self.resolver, HttpResponse):
            return self.resolver
        arguments = {
            "request": request,
            "query": payload["query"],
            "variables": payload.get("variables") or {},
            "operation_name": name,
            "cookies": call.get("cookies") or {},
        }
        return _call(self.resolver, arguments, ("request", "variables", "cookies"))

    def __repr__(self) -> str:
        return f"<GraphQLHandler {self.kind or 'operation'} {self.name}>"


class _GraphQL:
    """MSW's ``graphql`` namespace: ``graphql.query(name, resolver)``,
    ``graphql.mutation``, ``graphql.operation`` (any), and ``link(url)`` for
    handlers of one endpoint. ``name`` is a string or a compiled regular
    expression. The resolver gets ``query``, ``variables``,
    ``operation_name``, ``request`` and ``cookies`` (by name; positionally
    ``request, variables, cookies``)."""

    def __init__(self, endpoint: str | None = None):
        self._endpoint = endpoint

    def link(self, url: str) -> "_GraphQL":
        return _GraphQL(url)

    def query(self, name, resolver, **options) -> GraphQLHandler:
        return GraphQLHandler("query", name, resolver, self._endpoint, **options)

    def mutation(self, name, resolver, **options) -> GraphQLHandler:
        return GraphQLHandler("mutation", name, resolver, self._endpoint, **options)

    def operation(self, resolver, **options) -> GraphQLHandler:
        return GraphQLHandler(None, None, resolver, self._endpoint, **options)


graphql = _GraphQL()
