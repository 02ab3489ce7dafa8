# Per-test cost: open a scope, add a handler, one HTTPS request through it,
# verify, close (the mocklib fixture), against pytest-httpserver's fixture
# doing the same over plain HTTP. Each variant runs ROUNDS tests, one after
# the other (pytest -p no:xdist: the cost of one test, not a throughput).
import os

import pytest
import requests

from mocklib import HttpResponse, http

ROUNDS = int(os.environ.get("MOCKLIB_BENCH_ROUNDS", "200"))


@pytest.mark.parametrize("round", range(ROUNDS))
def test_mocklib_static(mocklib, round):
    # A constant response: a handler-file entry, answered by the server alone.
    mocklib.use(http.get("https://api.example.com/users/7", HttpResponse.json({"id": 7}), times=1))
    assert requests.get("https://api.example.com/users/7").json() == {"id": 7}


@pytest.mark.parametrize("round", range(ROUNDS))
def test_mocklib_resolver(mocklib, round):
    # A Python resolver: a callback entry, answered over the scope's channel.
    mocklib.use(http.get("https://api.example.com/users/:id",
                         lambda params: HttpResponse.json({"id": int(params["id"])}), times=1))
    assert requests.get("https://api.example.com/users/7").json() == {"id": 7}


@pytest.mark.parametrize("round", range(ROUNDS))
def test_httpserver(httpserver, round):
    httpserver.expect_request("/users/7").respond_with_json({"id": 7})
    assert requests.get(httpserver.url_for("/users/7")).json() == {"id": 7}
    httpserver.check_assertions()


@pytest.mark.parametrize("round", range(ROUNDS))
def test_mocklib_base_url(mocklib, round):
    # The same over plain HTTP: the scope's own port as the API's base URL.
    mocklib.use(http.get("/users/7", HttpResponse.json({"id": 7}), times=1))
    assert requests.get(mocklib.url + "/users/7").json() == {"id": 7}
