import pytest

pytest_plugins = ["terax_jupyter.pytest_plugin"]


@pytest.fixture
def jp_server_config(terax_server_config):
    return terax_server_config
