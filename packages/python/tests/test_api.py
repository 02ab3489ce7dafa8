# MSW's API in Python, through the installed plugin: what each piece does
# to real clients (requests, httpx, urllib, curl in a child process).
import asyncio
import json
import subprocess
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import requests

import mocklib as mocklib_module
from mocklib import HttpResponse, bypass, graphql, http, passthrough


class _Upstream(BaseHTTPRequestHandler):
    """A real server on loopback: what passthrough and bypass reach."""

    def do_GET(self):
        body = json.dumps({"real": True, "path": self.path, "agent": self.headers.get("user-agent")}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("x-upstream", "yes")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_a_resolver_gets_request_params_and_cookies(mocklib):
    seen = {}

    def resolver(request, params, cookies):
        seen.update(method=request.method, url=request.url, params=params, cookies=cookies,
                    body=request.json(), agent=request.header("User-Agent"))
        return HttpResponse.json({"ok": True}, status=201, headers={"x-answer": "yes"})

    mocklib.use(http.post("https://api.example.com/users/:id", resolver))
    response = requests.post("https://api.example.com/users/42?x=1", json={"name": "Kate"},
                             cookies={"session": "abc"}, headers={"user-agent": "tests"})
    assert (response.status_code, response.json(), response.headers["x-answer"]) == (201, {"ok": True}, "yes")
    assert seen == {"method": "POST", "url": "https://api.example.com/users/42?x=1", "params": {"id": "42"},
                    "cookies": {"session": "abc"}, "body": {"name": "Kate"}, "agent": "tests"}


def test_resolvers_may_take_fewer_arguments_by_name(mocklib):
    mocklib.use(
        http.get("https://api.example.com/a", lambda: HttpResponse.text("none")),
        http.get("https://api.example.com/b/:id", lambda params: HttpResponse.text(params["id"])),
        http.get("https://api.example.com/c", lambda cookies: HttpResponse.text(cookies.get("k", "-"))),
        http.get("https://api.example.com/d", lambda req: HttpResponse.text(req.method)),
        http.get("https://api.example.com/e", lambda **info: HttpResponse.text(",".join(sorted(info)))),
    )
    texts = [requests.get(f"https://api.example.com/{path}", cookies={"k": "v"}).text
             for path in ("a", "b/7", "c", "d", "e")]
    assert texts == ["none", "7", "v", "GET", "cookies,params,request"]


def test_an_async_resolver(mocklib):
    async def resolver(params):
        await asyncio.sleep(0.01)
        return HttpResponse.text(f"async {params['id']}")

    mocklib.use(http.get("https://api.example.com/async/:id", resolver))
    assert requests.get("https://api.example.com/async/3").text == "async 3"


def test_static_and_callback_answers_read_alike(mocklib):
    mocklib.use(
        http.get("https://api.example.com/static", HttpResponse.json({"n": 1}, headers={"x-kind": "static"})),
        http.get("https://api.example.com/callback", lambda: HttpResponse.json({"n": 1}, headers={"x-kind": "static"})),
    )
    static = requests.get("https://api.example.com/static")
    called = requests.get("https://api.example.com/callback")
    assert static.json() == called.json() == {"n": 1}
    assert static.headers["content-type"] == called.headers["content-type"] == "application/json"
    handlers = [entry["handler"] for entry in mocklib.list_handlers()[:2]]
    assert handlers[0] == "GET https://api.example.com/static"
    assert "callback" in handlers[1], handlers


def test_none_falls_through_to_the_next_handler(mocklib):
    mocklib.use(http.get("https://api.example.com/users/:id",
                         lambda params: None if params["id"] == "7" else HttpResponse.text("override")))
    assert requests.get("https://api.example.com/users/7").json()["name"] == "Kate"  # handlers.py's
    assert requests.get("https://api.example.com/users/8").text == "override"


def test_a_resolver_that_raises_is_a_500_saying_why(mocklib):
    def broken(params):
        raise ValueError(f"no user {params['id']}")

    mocklib.use(http.get("https://api.example.com/users/:id", broken))
    response = requests.get("https://api.example.com/users/42")
    assert response.status_code == 500
    assert "ValueError: no user 42" in response.text
    assert "https://api.example.com/users/:id" in response.text


def test_a_network_error_drops_the_connection(mocklib):
    mocklib.use(http.get("https://api.example.com/flaky", lambda: HttpResponse.error()))
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get("https://api.example.com/flaky")


def test_passthrough_performs_the_request_for_real(mocklib, upstream):
    mocklib.use(http.get(f"{upstream}/real", lambda: passthrough()))
    answer = requests.get(f"{upstream}/real").json()
    assert answer["real"] is True
    [entry] = mocklib.requests()
    assert entry.answer == "passthrough"


def test_bypass_then_alter(mocklib, upstream):
    def patched(request):
        real = bypass(request)
        return HttpResponse.json({**real.json(), "patched": True}, headers={"x-upstream": real.header("x-upstream")})

    mocklib.use(http.get(f"{upstream}/data", patched))
    response = requests.get(f"{upstream}/data", headers={"user-agent": "tests"})
    assert response.json() == {"real": True, "path": "/data", "agent": "tests", "patched": True}
    assert response.headers["x-upstream"] == "yes"


def test_once_answers_once_then_the_next_handler(mocklib):
    mocklib.use(http.get("https://api.example.com/users/7", HttpResponse.text("first"), once=True),
                http.get("https://api.example.com/users/7", lambda: HttpResponse.text("python once"), once=True))
    texts = [requests.get("https://api.example.com/users/7").text for _ in range(3)]
    assert texts[:2] == ["first", "python once"]
    assert json.loads(texts[2])["name"] == "Kate"


def test_reset_handlers(mocklib):
    mocklib.use(http.get("https://api.example.com/users/7", HttpResponse.text("runtime")))
    assert requests.get("https://api.example.com/users/7").text == "runtime"
    mocklib.reset_handlers()
    # Back to the files' handlers (none here: handlers.py's were added at
    # runtime too), so no handler answers it.
    requests.get("https://api.example.com/users/7")
    last = mocklib.requests()[-1]
    assert (last.answer, last.handler) == ("unhandled", None)
    mocklib.reset_handlers(http.get("https://api.example.com/only", lambda: HttpResponse.text("only")))
    assert requests.get("https://api.example.com/only").text == "only"
    [only] = mocklib.list_handlers()
    assert only["handler"].startswith("GET https://api.example.com/only (callback py")


def test_times_and_verify_as_objects(mocklib):
    mocklib.use(http.get("https://api.example.com/ping", lambda: HttpResponse.text("pong"), times=2))
    requests.get("https://api.example.com/ping")
    verification = mocklib.verify()
    assert not verification.ok
    [unmet] = verification.unmet
    assert unmet.handler.startswith("GET https://api.example.com/ping (callback py")
    assert (unmet.expected, unmet.at_least, unmet.at_most, unmet.received) == ("exactly 2", 2, 2, 1)
    assert "expected exactly 2, received 1" in verification.report
    requests.get("https://api.example.com/ping")
    assert mocklib.verify().ok


def test_the_journal_as_objects(mocklib):
    mocklib.use(http.post("https://api.example.com/echo", lambda request: HttpResponse.text(request.text())))
    requests.post("https://api.example.com/echo", data=b"hello")
    requests.post("https://api.example.com/echo", data=bytes([0, 1, 255]))
    text, binary = mocklib.requests(method="POST")
    assert (text.method, text.url, text.body, text.answer, text.status) == \
        ("POST", "https://api.example.com/echo", "hello", "mocked", 200)
    assert binary.body == bytes([0, 1, 255])
    assert mocklib.requests(url="https://api.example.com/users/:id") == []


def test_handler_file_entries_as_dicts_and_yaml(mocklib):
    mocklib.use({"path": "https://api.example.com/dict", "json": {"from": "dict"}},
                "- path: https://api.example.com/yaml\n  json: { from: yaml }\n",
                {"path": "https://api.example.com/seq", "sequence": [{"status": 202}, {"status": 204}]})
    assert requests.get("https://api.example.com/dict").json() == {"from": "dict"}
    assert requests.get("https://api.example.com/yaml").json() == {"from": "yaml"}
    assert [requests.get("https://api.example.com/seq").status_code for _ in range(3)] == [202, 204, 204]


def test_a_bad_entry_is_refused_naming_the_field(mocklib):
    with pytest.raises(mocklib_module.MocklibError) as refused:
        mocklib.use({"path": "https://api.example.com/x", "staus": 200})
    assert refused.value.status == 400
    assert "staus" in refused.value.body


def test_module_level_use(mocklib):
    mocklib_module.use(http.get("https://api.example.com/module", HttpResponse.text("module")))
    assert requests.get("https://api.example.com/module").text == "module"


def test_graphql_query_and_mutation(mocklib):
    endpoint = "https://api.example.com/graphql"
    mocklib.use(
        graphql.query("GetUser", lambda variables: HttpResponse.json({"data": {"user": {"id": variables["id"]}}})),
        graphql.mutation("AddUser", lambda variables, operation_name: HttpResponse.json(
            {"data": {"added": variables["name"], "operation": operation_name}})),
        http.post(endpoint, HttpResponse.text("not theirs")),  # behind them
    )
    got = requests.post(endpoint, json={"query": "query GetUser($id: ID!) { user(id: $id) { id } }",
                                        "variables": {"id": "7"}}).json()
    assert got == {"data": {"user": {"id": "7"}}}
    added = requests.post(endpoint, json={"query": "mutation AddUser($name: String!) { add(name: $name) }",
                                          "variables": {"name": "Kate"}}).json()
    assert added == {"data": {"added": "Kate", "operation": "AddUser"}}
    # The name in the body, but another operation: it falls through.
    other = requests.post(endpoint, json={"query": "query GetUserList { users { id } } # GetUser"})
    assert other.text == "not theirs"
    # A mutation of that name is not the query.
    assert requests.post(endpoint, json={"query": "mutation GetUser { x }"}).text == "not theirs"


def test_a_constant_graphql_answer_is_a_graphql_entry_for_get_and_post(mocklib):
    # A constant {"data": ...} is answered by the server's own GraphQL
    # handlers: the operation read from the document, GET as well as POST.
    endpoint = "https://api.example.com/graphql"
    mocklib.use(graphql.link(endpoint).query("GetUser", HttpResponse.json({"data": {"user": {"name": "Kate"}}})))
    listed = mocklib.list_handlers()[0]
    assert listed["added_at_runtime"] and "callback" not in listed["handler"], listed
    query = "query GetUser { user { name } }"
    assert requests.post(endpoint, json={"query": query}).json() == {"data": {"user": {"name": "Kate"}}}
    assert requests.get(endpoint, params={"query": query}).json() == {"data": {"user": {"name": "Kate"}}}


def test_httpx_urllib_and_a_child_process(mocklib):
    mocklib.use(http.get("https://api.example.com/clients", lambda request: HttpResponse.text("to " + (request.header("user-agent") or "")[:4])))
    assert httpx.get("https://api.example.com/clients").text == "to pyth"
    with urllib.request.urlopen("https://api.example.com/clients") as response:
        assert response.read() == b"to Pyth"
    curl = subprocess.run(["curl", "-s", "https://api.example.com/clients"], capture_output=True, text=True, check=True)
    assert curl.stdout == "to curl"


def test_urllib_opener_built_before_the_scope_is_reset(mocklib):
    # urlopen's cached opener would keep an earlier test's proxy: the
    # fixture forgets it, so this reaches this scope's handler.
    mocklib.use(http.get("https://api.example.com/opener", HttpResponse.text("this scope")))
    with urllib.request.urlopen("https://api.example.com/opener") as response:
        assert response.read() == b"this scope"


def test_an_unmet_expectation_fails_the_test(pytester):
    pytester.makepyfile("""
        import requests
        from mocklib import http, HttpResponse

        def test_expects_two(mocklib):
            mocklib.use(http.get("https://api.example.com/twice", HttpResponse.text("x"), times=2))
            requests.get("https://api.example.com/twice")
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerifyError*", "*twice*"])


def test_record_then_replay(pytester, upstream):
    # What the tests perform for real goes into the HAR file; the next run
    # (mode `once`, the file now there) is answered from it.
    pytester.makepyfile(f"""
        import requests

        def test_calls_the_real_api(mocklib):
            assert requests.get("{upstream}/recorded").json()["real"] is True
    """)
    har = pytester.path / "recorded.har"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mocklib-record", str(har))
    result.assert_outcomes(passed=1)
    recorded = json.loads(har.read_text())
    assert [entry["request"]["url"] for entry in recorded["log"]["entries"]] == [f"{upstream}/recorded"]
    replayed = pytester.makepyfile(test_replayed=f"""
        import requests

        def test_answered_from_the_recording(mocklib):
            assert requests.get("{upstream}/recorded").json()["path"] == "/recorded"
            [entry] = mocklib.requests()
            assert entry.answer == "mocked", entry.data
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mocklib-record", str(har), str(replayed))
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("per_worker", [False, True])
def test_xdist_workers_share_one_server(pytester, per_worker):
    pytester.makepyfile(f"""
        import os
        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_names_its_server(mocklib_server, mocklib, n):
            with open(os.path.join({str(pytester.path)!r}, os.environ["PYTEST_XDIST_WORKER"] + ".url"), "w") as file:
                file.write(mocklib_server.url)
    """)
    options = ["--mocklib-per-worker"] if per_worker else []
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", *options)
    result.assert_outcomes(passed=4)
    urls = {path.read_text() for path in pytester.path.glob("gw*.url")}
    assert len(urls) == (2 if per_worker else 1), urls


def test_a_checkout_flow_answers_by_the_state_its_requests_set(mocklib):
    # Scenarios: the cart answers by its state, each step moves it on; the
    # orders keep a state per id (`key`), and the test reads and sets them.
    shop = "https://shop.example"
    mocklib.use(
        http.get(f"{shop}/cart", HttpResponse.json({"items": []}), scenario="checkout", when_state="started"),
        http.post(f"{shop}/cart", lambda request: HttpResponse.json({"added": request.json()["book"]}, status=201),
                  scenario="checkout", when_state="started", set_state="filled"),
        http.get(f"{shop}/cart", HttpResponse.json({"items": ["Dune"]}), scenario="checkout", when_state="filled"),
        http.post(f"{shop}/pay", HttpResponse.json({"paid": True}), scenario="checkout", when_state="filled",
                  set_state="paid", times=1),
        http.get(f"{shop}/cart", HttpResponse.json({"items": [], "paid": True}), scenario="checkout", when_state="paid"),
        http.post(f"{shop}/pay", HttpResponse.json({"error": "nothing to pay"}, status=409)),
        http.get(f"{shop}/orders/:id", HttpResponse.json({"state": "open"}), scenario="order",
                 key="{{ request.params.id }}", when_state="started"),
        http.get(f"{shop}/orders/:id", HttpResponse.json({"state": "shipped"}), scenario="order",
                 key="{{ request.params.id }}", when_state="shipped"),
    )
    assert requests.post(f"{shop}/pay").status_code == 409
    assert requests.get(f"{shop}/cart").json() == {"items": []}
    added = requests.post(f"{shop}/cart", json={"book": "Dune"})
    assert (added.status_code, added.json()) == (201, {"added": "Dune"})
    assert requests.get(f"{shop}/cart").json() == {"items": ["Dune"]}
    assert requests.post(f"{shop}/pay").json() == {"paid": True}
    assert requests.get(f"{shop}/cart").json() == {"items": [], "paid": True}
    assert requests.post(f"{shop}/pay").status_code == 409
    assert {"scenario": "checkout", "key": "", "state": "paid"} in mocklib.scenarios()

    mocklib.set_scenario_state("order", "shipped", key="7")
    assert requests.get(f"{shop}/orders/7").json() == {"state": "shipped"}
    assert requests.get(f"{shop}/orders/8").json() == {"state": "open"}
    mocklib.reset_scenarios()
    assert requests.get(f"{shop}/orders/7").json() == {"state": "open"}
    # The fixture's verify: paid once, as `times=1` expects.


def test_chaos_on_a_handler_fails_a_share_of_its_requests_replayably(mocklib):
    chaos = {"fault_rate": 0.3, "fault": "connection_reset", "seed": 42}

    def pattern():
        failed = []
        for _ in range(60):
            try:
                requests.get("https://api.example.com/flaky").raise_for_status()
                failed.append(False)
            except requests.ConnectionError:
                failed.append(True)
        return failed

    mocklib.use(http.get("https://api.example.com/flaky", HttpResponse.text("ok"), chaos=chaos))
    first = pattern()
    assert 6 <= sum(first) <= 30, first
    # The same seed, a handler anew: the same requests fail.
    mocklib.reset_handlers(http.get("https://api.example.com/flaky", HttpResponse.text("ok"), chaos=chaos))
    assert pattern() == first


def test_a_webhook_calls_a_real_receiver_after_the_answer(mocklib):
    got = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            got.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        mocklib.use(http.post(
            "https://pay.example/charges", HttpResponse.json({"id": "ch_1"}, status=201),
            webhook={"url": f"http://127.0.0.1:{receiver.server_port}/events",
                     "json": {"type": "charge.succeeded", "charge": "{{ response.json.id }}"}},
        ))
        assert requests.post("https://pay.example/charges").status_code == 201
        for _ in range(500):
            webhooks = mocklib.requests()[-1].data["webhooks"]
            if webhooks and webhooks[0]["outcome"] != "pending":
                break
            threading.Event().wait(0.01)
        assert webhooks[0]["outcome"] == "answered" and webhooks[0]["status"] == 204, webhooks
        assert got == [{"type": "charge.succeeded", "charge": "ch_1"}]
    finally:
        receiver.shutdown()
