"""Preview capabilities without a server: lifetimes, revocation, what the store keeps."""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import AccessDenied
from terax_jupyter.services.preview.capabilities import Navigation, PreviewCapabilities

if TYPE_CHECKING:
    from pathlib import Path

HOUR = 3600.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def store(path: Path | None, clock: Clock) -> PreviewCapabilities:
    return PreviewCapabilities(
        str(path) if path else None, idle=8 * HOUR, lifetime=48 * HOUR, clock=clock
    )


def reason(call: object) -> str:
    with pytest.raises(AccessDenied) as caught:
        call()  # type: ignore[operator]
    return caught.value.reason


def test_one_live_capability_per_target_until_it_idles_out() -> None:
    clock = Clock()
    caps = store(None, clock)
    first, token = caps.issue("alice", "5173")
    assert caps.issue("bob", "5173")[1] == token  # the same prefix while it lives
    assert caps.issue("alice", "8000")[1] != token
    assert len(token) >= 32  # 24 random bytes
    clock.now += 7 * HOUR
    assert caps.check(token, "5173") is first  # used: the idle time starts again
    clock.now += 7 * HOUR
    assert caps.check(token, "5173") is first
    clock.now += 8 * HOUR + 1
    assert reason(lambda: caps.check(token, "5173")) == "preview_expired"
    assert caps.issue("alice", "5173")[1] != token


def test_a_capability_ends_at_its_lifetime_however_much_it_is_used() -> None:
    clock = Clock()
    caps = store(None, clock)
    _, token = caps.issue("alice", "5173")
    for _ in range(47):
        clock.now += HOUR
        caps.check(token, "5173")
    clock.now += HOUR + 1
    assert reason(lambda: caps.check(token, "5173")) == "preview_expired"


def test_a_capability_names_one_target() -> None:
    caps = store(None, Clock())
    _, token = caps.issue("alice", "5173")
    assert reason(lambda: caps.check(token, "5174")) == "preview_capability_mismatch"
    assert reason(lambda: caps.check(token, "localhost:5173")) == "preview_capability_mismatch"
    assert reason(lambda: caps.check(token + "x", "5173")) == "preview_expired"
    assert reason(lambda: caps.check("", "5173")) == "preview_expired"


def test_revoking_ends_them_all() -> None:
    caps = store(None, Clock())
    tokens = [caps.issue("alice", t)[1] for t in ("5173", "8000")]
    assert caps.revoke() == 2
    for token, target in zip(tokens, ("5173", "8000"), strict=True):
        assert reason(lambda t=token, g=target: caps.check(t, g)) == "preview_expired"
    assert caps.revoke() == 0


def test_the_store_keeps_digests_only_and_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state" / "preview-capabilities.json"
    clock = Clock()
    _, token = store(path, clock).issue("alice", "5173")
    text = path.read_text()
    assert token not in text  # a copy of the store opens nothing
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    entry = json.loads(text)["capabilities"][0]
    assert entry["user"] == "alice"
    assert entry["target"] == "5173"
    # After a restart the dev server's --base (the old prefix) still works, and once a page
    # used it, it is the one handed out again.
    restarted = store(path, clock)
    assert restarted.check(token, "5173").target == "5173"
    assert restarted.issue("alice", "5173")[1] == token


def test_a_restart_does_not_revive_what_expired_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "caps.json"
    clock = Clock()
    _, token = store(path, clock).issue("alice", "5173")
    clock.now += 9 * HOUR
    assert reason(lambda: store(path, clock).check(token, "5173")) == "preview_expired"


@pytest.mark.parametrize(
    "content", ["not json", "[]", '{"format": 1, "capabilities": [{"digest": 1}]}', '{"format": 9}']
)
def test_an_unreadable_store_ends_every_capability(tmp_path: Path, content: str) -> None:
    path = tmp_path / "caps.json"
    path.write_text(content)
    path.chmod(0o600)
    caps = store(path, Clock())
    assert caps.find("5173") is None
    assert caps.issue("alice", "5173")[1]


def test_the_last_navigation_is_kept_for_the_tab() -> None:
    caps = store(None, Clock())
    capability, _ = caps.issue("alice", "5173")
    caps.navigated(capability, Navigation("/a", 200))
    caps.navigated(capability, Navigation("/b?x=1", 502, {"reason": "nothing_listening"}))
    found = caps.find("5173")
    assert found is not None
    assert found.navigation == Navigation("/b?x=1", 502, {"reason": "nothing_listening"}, 2)
