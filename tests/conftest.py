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


@pytest.fixture(autouse=True)
def wire_messages_fit_their_schema(monkeypatch):
    """Every AI event published or delivered, and every control message a terminal sends,
    in any test is checked against ``AiEvent`` / ``PtyServerMessage`` of the OpenAPI document
    (what the Lab extension's types are generated from): a server change that the document,
    and so the client, does not know fails the test that makes it. A misfit is also recorded
    and fails the test at teardown, since some senders swallow errors (a broadcast to views
    goes on when one view fails). The fixture's value is that list of misfits."""
    from terax_jupyter.services.ai.events import EventHub, Subscription
    from terax_jupyter.services.pty.session import PtySession
    from terax_jupyter.services.pty.stream import PtyStreamWebSocket
    from terax_jupyter.testing.wire import check_message

    misfits = []

    def check(component, message):
        try:
            check_message(component, message)
        except AssertionError as misfit:
            misfits.append(str(misfit))
            raise

    publish, push = EventHub.publish, Subscription.push

    def checked_publish(self, session_id, event, **options):
        numbered = publish(self, session_id, event, **options)
        check("AiEvent", numbered)
        return numbered

    def checked_push(self, event):
        check("AiEvent", event)
        push(self, event)

    control, send_control = PtySession._control, PtyStreamWebSocket.send_control

    def checked_control(self, attached, message):
        check("PtyServerMessage", message)
        control(self, attached, message)

    def checked_send_control(self, message):
        check("PtyServerMessage", message)
        return send_control(self, message)

    monkeypatch.setattr(EventHub, "publish", checked_publish)
    monkeypatch.setattr(Subscription, "push", checked_push)
    monkeypatch.setattr(PtySession, "_control", checked_control)
    monkeypatch.setattr(PtyStreamWebSocket, "send_control", checked_send_control)
    yield misfits  # a test of the check itself empties it
    assert not misfits, "messages off their declared schema:\n" + "\n".join(misfits)
