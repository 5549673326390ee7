import pytest

pytest_plugins = ["terax_jupyter.pytest_plugin"]


@pytest.fixture
def jp_server_config(terax_server_config):
    return terax_server_config


@pytest.fixture(scope="session")
def second_user():
    """Another Unix account on this machine (``tests/second_user.py``)."""
    from tests.second_user import other_user

    return other_user()
