# examples/serve-python's suite on the plugin: the code under test calls
# https://api.example.com with `requests`, as it would in production; the
# `mocklib` fixture sends it to the handlers of handlers.py and of the test.
import pytest
import requests

from mocklib import HttpResponse, http


def test_reads_a_user(mocklib):
    user = requests.get("https://api.example.com/users/7").json()
    assert user["name"] == "Kate"


def test_creates_a_user(mocklib):
    response = requests.post("https://api.example.com/users", json={"name": "Sarah"})
    assert response.status_code == 201
    [sent] = mocklib.requests()  # this test's requests only, whatever runs beside it
    assert sent.body == '{"name": "Sarah"}'
    assert sent.handler == "POST https://api.example.com/users"


def test_reads_a_report_with_the_api_key(mocklib):
    response = requests.get("https://api.example.com/reports", params={"year": 2025},
                            headers={"x-api-key": "secret"})
    assert response.json() == {"total": 42, "year": 2025}


def test_echoes_the_order_id(mocklib):
    order = requests.get("https://api.example.com/orders/42").json()
    assert order == {"id": "42", "status": "shipped"}


def test_overrides_a_handler_for_one_test(mocklib):
    mocklib.use(http.get("https://api.example.com/users/7", HttpResponse(status=503)))
    assert requests.get("https://api.example.com/users/7").status_code == 503


def test_adds_a_todo_and_lists_it(mocklib):
    created = requests.post("https://api.example.com/todos", json={"title": "Ship"})
    assert created.status_code == 201
    todos = requests.get("https://api.example.com/todos").json()
    assert [todo["title"] for todo in todos] == ["Write tests", "Ship"]  # this scope's list


@pytest.mark.parametrize("owner", range(40))
def test_parallel_tests_see_only_their_own_mocks(mocklib, owner):
    # A Python resolver: each of the 50 requests is a call on this scope's
    # channel, while 7 other workers do the same on theirs.
    mocklib.use(http.get("https://api.example.com/orders/:id",
                         lambda params: HttpResponse.json({"owner": owner, "order": params["id"]}),
                         times=50))  # checked after the test
    with requests.Session() as session:
        for order in range(50):
            answer = session.get(f"https://api.example.com/orders/{order}").json()
            assert answer == {"owner": owner, "order": str(order)}
    assert len(mocklib.requests()) == 50
