import pytest

pytest_plugins = ["terax_jupyter.pytest_plugin"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "every_base_url: run each test of the module under every base URL of BASE_URLS "
        "(a plain server and a JupyterHub single-user prefix)",
    )


def pytest_generate_tests(metafunc):
    """``every_base_url``: the server fixtures' ``jp_base_url`` takes each of BASE_URLS."""
    from terax_jupyter.pytest_plugin import BASE_URLS

    if metafunc.definition.get_closest_marker("every_base_url") is None:
        return
    if "jp_base_url" not in metafunc.fixturenames:
        return
    # A test that names its own base URLs keeps them.
    for parametrized in metafunc.definition.iter_markers("parametrize"):
        names = parametrized.args[0]
        if "jp_base_url" in (
            names.replace(" ", "").split(",") if isinstance(names, str) else names
        ):
            return
    metafunc.parametrize("jp_base_url", BASE_URLS)


@pytest.fixture
def jp_server_config(terax_server_config):
    return terax_server_config


@pytest.fixture(scope="session")
def second_user():
    """Another Unix account on this machine (``tests/second_user.py``)."""
    from tests.second_user import other_user

    return other_user()
