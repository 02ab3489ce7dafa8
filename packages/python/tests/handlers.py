# The API the tests' code calls, mocked as MSW's handlers.ts would mock it:
# Python resolvers where an answer depends on the request, a handler-file
# entry (a dict) for the stateful todo collection, which needs no code.
from mocklib import HttpResponse, http


def read_report(request):
    # Only with the key and the year, as the YAML `match:` block said.
    if request.header("x-api-key") != "secret" or "year=2025" not in request.url:
        return None  # falls through: unhandled
    return HttpResponse.json({"total": 42, "year": 2025})


handlers = [
    http.get("https://api.example.com/users/:id", HttpResponse.json({"id": 7, "name": "Kate"})),
    http.post(
        "https://api.example.com/users",
        HttpResponse.json({"id": 8}, status=201, headers={"location": "/users/8"}),
    ),
    http.get("https://api.example.com/reports", read_report),
    http.get(
        "https://api.example.com/orders/:id",
        lambda params: HttpResponse.json({"id": params["id"], "status": "shipped"}),
    ),
    {"resource": "https://api.example.com/todos", "seed": [{"id": 1, "title": "Write tests"}]},
]
