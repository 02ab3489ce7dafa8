# A scope of its own for each test on the one `mocklib serve` that run.sh
# starts: its own handlers, journal and expectations, verified and ended
# after the test.
import os

import pytest
import requests

SERVER = os.environ["MOCKLIB_URL"]
admin = requests.Session()
admin.trust_env = False  # straight to the server, not through a scope's proxy


class Scope:
    def __init__(self, described):
        self.admin_url = described["admin_url"]

    def mock(self, yaml):
        added = admin.post(self.admin_url + "/handlers", data=yaml,
                           headers={"content-type": "application/yaml"})
        assert added.status_code == 201, added.text

    def requests(self):
        return admin.get(self.admin_url + "/requests").json()


@pytest.fixture
def mocklib(monkeypatch):
    described = admin.post(SERVER + "/__mocklib/scopes").json()
    for name, value in described["env"].items():
        monkeypatch.setenv(name, value)  # requests reads HTTPS_PROXY, REQUESTS_CA_BUNDLE
    yield Scope(described)
    verified = admin.get(described["admin_url"] + "/verify").json()
    admin.delete(f"{SERVER}/__mocklib/scopes/{described['id']}")
    assert verified["ok"], verified["report"]
