# The package's own tests: they run against the installed wheel (the
# `mocklib` fixture comes from its pytest11 entry point, the server from
# the command it carries).
import pytest

from handlers import handlers


@pytest.fixture
def mocklib_handlers():
    return handlers
pytest_plugins = ["pytester"]
