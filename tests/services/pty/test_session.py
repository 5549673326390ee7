"""PtySession and PtyManager with real shells on real PTYs (no server)."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import (
    Conflict,
    InvalidRequest,
    NotFound,
    PathDenied,
    Timeout,
    TooLarge,
    Unavailable,
)
from terax_jupyter.services.pty.session import SGR_RESET

from .helpers import (
    PRODUCER,
    SHELLS,
    Recorder,
    alive,
    at_prompt,
    progress,
    stalled,
    wait_for,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.services.pty.manager import PtyManager
    from terax_jupyter.services.pty.session import PtySession

PYTHON = shlex.quote(sys.executable)
SUBSHELL_EXIT_3 = {"bash": "(exit 3)", "zsh": "(exit 3)", "fish": "fish --no-config -c 'exit 3'"}
MULTI_LINE = {
    "bash": b"for i in 1 2\rdo echo n$i\rdone\r",
    "zsh": b"for i in 1 2\rdo echo n$i\rdone\r",
    "fish": b"for i in 1 2\recho n$i\rend\r",
}


async def started(manager: PtyManager, shell: str = "bash") -> PtySession:
    session = await manager.create(shell=shell)
    await at_prompt(session)
    return session


async def typed(session: PtySession, data: bytes, timeout: float = 10) -> None:
    """Type at the prompt and wait for the block it starts to end."""
    ended = session.block_ended()
    session.write(data)
    await asyncio.wait_for(ended, timeout)


def words(command: str) -> str:
    return " ".join(re.split(r"[\s;]+", command.strip()))


# -- blocks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", SHELLS)
async def test_blocks_have_commands_exit_codes_and_output(
    manager: PtyManager, root: Path, shell: str
) -> None:
    session = await started(manager, shell)
    client = Recorder()
    session.attach(client)
    cases = [
        ("echo hi", 0, "hi"),
        ("false", 1, ""),
        (SUBSHELL_EXIT_3[shell], 3, ""),
        ("echo \"héllo 'wörld'\" ✓ && printf '%s\\n' 'a \"b\"'", 0, "héllo 'wörld' ✓\na \"b\""),
    ]
    for command, code, output in cases:
        result = await manager.run(session.id, command, timeout=10)
        block = result["block"]
        assert (block["command"], block["exit_code"], result["text"].strip()) == (
            command,
            code,
            output,
        )
        assert block["cwd"] == str(root)
        assert not block["running"]
        assert block["output_start"] <= block["output_end"]
        assert block["duration_ms"] >= 0
        assert result["format"] == "plain"
        assert not result["truncated"]
    await typed(session, MULTI_LINE[shell])
    block = session.blocks.all()[-1]
    expected = "for i in 1 2 echo n$i end" if shell == "fish" else "for i in 1 2 do echo n$i done"
    assert (words(block.command), block.exit_code) == (expected, 0)
    text = (await session.block_text(block.id, rendered=False))["text"]
    assert text.split() == ["n1", "n2"]
    # Every block was announced to the client as it started and ended, in order.
    ends = [m["block"] for m in client.events("block") if m["event"] == "end"]
    starts = [m["block"] for m in client.events("block") if m["event"] == "start"]
    assert [b["id"] for b in starts] == [b["id"] for b in ends] == [1, 2, 3, 4, 5]
    assert [b["exit_code"] for b in ends] == [0, 1, 3, 0, 0]
    assert session.describe()["blocks"] == 5
    assert manager.history.commands()[0] == block.command


@pytest.mark.parametrize("shell", SHELLS)
async def test_empty_lines_make_no_blocks(manager: PtyManager, shell: str) -> None:
    session = await started(manager, shell)
    session.write(b"\r   \r\r")
    result = await manager.run(session.id, "echo after", timeout=10)
    assert [b.command for b in session.blocks.all()] == ["echo after"]
    assert result["block"]["id"] == 1


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_run_after_enters_typed_ahead_is_answered_by_its_own_prompt(
    manager: PtyManager, shell: str
) -> None:
    # Each Enter typed ahead brings a prompt of its own; none of them may answer the run,
    # whether it is still on its way or long drawn (fish, interrupted on an empty line, ran
    # the next command without its marks).
    session = await started(manager, shell)
    session.write(b"\r" * 40)
    result = await manager.run(session.id, "echo after", timeout=20)
    session.write(b"\r \r\r")
    await asyncio.sleep(0.5)
    again = await manager.run(session.id, "echo again", timeout=20)
    assert [b.command for b in session.blocks.all()] == ["echo after", "echo again"]
    assert (result["text"].split(), again["text"].split()) == (["after"], ["again"])


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_run_after_enters_typed_during_a_command_is_answered_by_its_own_prompt(
    manager: PtyManager, shell: str
) -> None:
    # Enters typed while a command runs reach the line editor once it ends, one prompt each.
    session = await started(manager, shell)
    session.write(b"sleep 0.5\r")
    await wait_for(lambda: session.phase == "running", 10, "the command's start")
    session.write(b"\r" * 40)
    ended = session.block_ended()
    await asyncio.wait_for(ended, 10)
    result = await manager.run(session.id, "echo after", timeout=20)
    assert [b.command for b in session.blocks.all()] == ["sleep 0.5", "echo after"]
    assert result["text"].split() == ["after"]


@pytest.mark.parametrize("shell", SHELLS)
async def test_cwd_follows_cd_and_ignores_programs(
    manager: PtyManager, root: Path, shell: str
) -> None:
    session = await started(manager, shell)
    client = Recorder()
    session.attach(client)
    await manager.run(session.id, 'cd "sub dir"', timeout=10)
    await wait_for(lambda: session.cwd == str(root / "sub dir"), 5, "cwd after cd")
    assert client.events("cwd")[-1] == {"type": "cwd", "cwd": str(root / "sub dir")}
    result = await manager.run(session.id, "pwd", timeout=10)
    assert result["block"]["cwd"] == str(root / "sub dir")
    # A running program printing OSC 7 does not move the session.
    await manager.run(
        session.id, "printf '\\033]7;file://host/etc\\007'; sleep 0.2; echo done", timeout=10
    )
    await manager.run(session.id, "cd ..", timeout=10)
    await wait_for(lambda: session.cwd == str(root), 5, "cwd after cd ..")
    assert [m["cwd"] for m in client.events("cwd")] == [str(root / "sub dir"), str(root)]


@pytest.mark.parametrize("shell", SHELLS)
async def test_marks_printed_by_a_program_do_not_end_its_block(
    manager: PtyManager, shell: str
) -> None:
    session = await started(manager, shell)
    forged = (
        "printf '\\033]133;D;0\\007\\033]133;D;0;nonce=00ff\\033\\\\'; "
        "printf '\\033]133;A\\007\\033]133;C;cmdline_url=rm\\007'; "
        f"sleep 0.3; echo after; printf '\\033]133;D;0;nonce={session.nonce[:-1]}x\\007'; false"
    )
    result = await manager.run(session.id, forged, timeout=10)
    assert result["block"]["command"] == forged
    assert result["block"]["exit_code"] == 1
    assert result["text"].strip() == "after"
    assert len(session.blocks.all()) == 1


async def test_block_text_plain_rendered_and_last_lines(manager: PtyManager) -> None:
    session = await started(manager)
    result = await manager.run(
        session.id, "printf 'ab\\033[1Dc\\n\\033[31mred\\033[0m\\n'; seq 1 30", timeout=10
    )
    block_id = result["block"]["id"]
    plain = await session.block_text(block_id, rendered=False)
    rendered = await session.block_text(block_id, rendered=True)
    assert plain["text"].splitlines()[:2] == ["abc", "red"]
    assert rendered["text"].splitlines()[:2] == ["ac", "red"]
    assert rendered["format"] == "rendered"
    assert rendered["text"].splitlines()[-1] == "30"
    assert await session.block_text(999, rendered=False) is None
    await wait_for(lambda: session.phase == "input", 5, "prompt drawn")
    last = (await session.last_lines(3, rendered=False)).splitlines()
    assert last[:2] == ["29", "30"]
    assert last[2].startswith("MYPROMPT-bash[0]")
    assert (await session.last_lines(2, rendered=True)).splitlines()[0] == "30"


async def test_block_text_says_when_the_ring_lost_its_start(
    make_manager: Callable[..., PtyManager],
) -> None:
    manager = make_manager(scrollback_bytes=64 * 1024)
    session = await started(manager)
    result = await manager.run(session.id, "seq 1 50000", timeout=10)
    assert result["truncated"]
    assert result["text"].splitlines()[-1] == "50000"
    assert not result["text"].startswith("1\n")
    assert len(session.scrollback) <= 64 * 1024


async def test_run_checks(manager: PtyManager) -> None:
    session = await manager.create(shell="bash")
    # Right after the start: run waits for the first prompt instead of refusing.
    result = await manager.run(session.id, "echo ready", timeout=10)
    assert result["text"].strip() == "ready"
    with pytest.raises(InvalidRequest):
        await manager.run(session.id, "echo a\necho b", timeout=5)
    with pytest.raises(Timeout):
        await manager.run(session.id, "sleep 30", timeout=0.3)
    with pytest.raises(Conflict) as caught:
        await manager.run(session.id, "echo busy", timeout=5)
    assert caught.value.reason == "busy"
    session.write(b"\x03")
    await wait_for(lambda: session.phase != "running", 5, "interrupt")
    assert session.blocks.all()[-1].exit_code == 130
    # A command that ends the shell returns its block with the shell's status.
    client = Recorder()
    session.attach(client)  # someone still looks, so the session stays listed
    result = await manager.run(session.id, "exit 7", timeout=10)
    assert (result["block"]["command"], result["block"]["exit_code"]) == ("exit 7", 7)
    assert session.exited
    assert session.exit_code == 7
    with pytest.raises(Conflict) as caught:
        await manager.run(session.id, "echo gone", timeout=5)
    assert caught.value.reason == "exited"
    session.detach(client)
    with pytest.raises(NotFound):
        await manager.run(session.id, "echo gone", timeout=5)


# -- the manager ----------------------------------------------------------------------------------


async def test_create_checks_the_folder_and_the_shell(
    make_manager: Callable[..., PtyManager], root: Path
) -> None:
    manager = make_manager(max_sessions=2)
    (root / ".git").mkdir()
    with pytest.raises(PathDenied):
        await manager.create(cwd=str(root / ".git"))
    with pytest.raises(NotFound):
        await manager.create(cwd=str(root / "missing"))
    with pytest.raises(InvalidRequest) as caught:
        await manager.create(cwd=str(root / "notes.txt"))
    assert caught.value.reason == "not_a_directory"
    with pytest.raises(InvalidRequest) as caught:
        await manager.create(shell="nosuchshell")
    assert caught.value.reason == "unknown_shell"
    assert manager.sessions == {}
    first = await manager.create(cwd="sub dir", shell="bash", columns=5000, rows=0)
    assert first.cwd == str(root / "sub dir")
    assert (first.columns, first.rows) == (1000, 1)
    await manager.create(shell="bash", name="  \x1b[31mmine\x07  ")
    with pytest.raises(TooLarge):
        await manager.create(shell="bash")
    assert [s["name"] for s in manager.list()] == ["Terminal 1", "[31mmine"]


async def test_a_shell_that_cannot_start_is_a_clear_error(
    make_manager: Callable[..., PtyManager], root: Path
) -> None:
    manager = make_manager(shell_command=[str(root / "no-such-shell")])
    with pytest.raises(Unavailable) as caught:
        await manager.create()
    assert caught.value.reason == "shell_failed"
    assert "no-such-shell" in caught.value.message
    assert manager.sessions == {}


async def test_programs_start_with_default_signals(manager: PtyManager) -> None:
    # The server ignores SIGPIPE (Python does); a shell cannot undo an inherited ignore, so
    # the spawn must: otherwise `yes | head -1` ends with "Broken pipe" and status 1.
    session = await started(manager)
    result = await manager.run(
        session.id, "yes | head -1; echo status=${PIPESTATUS[0]}", timeout=10
    )
    assert result["text"].split() == ["y", "status=141"]
    assert "Broken pipe" not in result["text"]
    result = await manager.run(session.id, "grep -E '^Sig(Ign|Blk)' /proc/self/status", timeout=10)
    masks = dict(line.split(":") for line in result["text"].split("\n") if ":" in line)
    assert {name: int(value, 16) for name, value in masks.items()} == {"SigIgn": 0, "SigBlk": 0}


async def test_get_rename_close(manager: PtyManager) -> None:
    session = await manager.create(shell="bash")
    client = Recorder()
    session.attach(client)
    assert manager.get(session.id) is session
    with pytest.raises(NotFound):
        manager.get("0123456789ab")
    for bad in ("", "   ", "\x00\x07", "x" * 101):
        with pytest.raises(InvalidRequest):
            manager.rename(session.id, bad)
    manager.rename(session.id, " build\tlogs ")
    assert session.name == "buildlogs"
    assert client.events("renamed") == [{"type": "renamed", "name": "buildlogs"}]
    await at_prompt(session)
    pid = session.process.pid
    await manager.close(session.id)
    assert not alive(pid)
    assert session.exited
    assert client.events("closed")
    assert client.events("exit")
    with pytest.raises(NotFound):
        manager.get(session.id)
    with pytest.raises(NotFound):
        await manager.close(session.id)
    assert manager.list() == []


async def test_an_exited_session_is_forgotten_once_nobody_views_it(
    manager: PtyManager,
) -> None:
    watched = await started(manager)
    unwatched = await started(manager)
    client = Recorder()
    watched.attach(client)
    watched.write(b"exit 4\r")
    unwatched.write(b"exit 5\r")
    await watched.wait_exit(10)
    await unwatched.wait_exit(10)
    await wait_for(lambda: unwatched.id not in manager.sessions, 5, "forgotten")
    # Someone still looks at the other one: it stays, with its status, until they leave.
    assert manager.get(watched.id).exit_code == 4
    assert client.events("exit") == [{"type": "exit", "code": 4}]
    watched.detach(client)
    assert watched.id not in manager.sessions


@pytest.mark.parametrize("shell", SHELLS)
async def test_exit_with_a_background_job_ends_the_session(manager: PtyManager, shell: str) -> None:
    """The job holds the terminal open, so no end of file comes: the shell's own exit must
    end the session (it hung for ever, with the shell a zombie of the server)."""
    session = await started(manager, shell)
    client = Recorder()
    session.attach(client)
    job = "sleep 600 &" if shell != "fish" else "sleep 600 &; disown"
    await typed(session, job.encode() + b"\r")
    # bash and zsh warn once about running jobs; the second exit goes.
    session.write(b"exit\r")
    await asyncio.sleep(0.3)
    if not session.exited:
        session.write(b"exit\r")
    assert await session.wait_exit(10) == 0
    assert client.events("exit") == [{"type": "exit", "code": 0}]
    assert not alive(session.process.pid)  # reaped, not left a zombie
    session.detach(client)
    await wait_for(lambda: session.id not in manager.sessions, 5, "forgotten")


async def test_idle_sessions_without_viewers_are_culled(
    make_manager: Callable[..., PtyManager],
) -> None:
    manager = make_manager(cull_idle_timeout=0.4, cull_interval=0.1)
    idle = await manager.create(shell="bash")
    viewed = await manager.create(shell="bash")
    viewed.attach(Recorder())
    busy = await manager.create(shell="bash")
    await at_prompt(busy)
    busy.write(b"while :; do echo tick; sleep 0.1; done\r")
    await wait_for(lambda: idle.id not in manager.sessions and idle.exited, 10, "cull")
    assert not alive(idle.process.pid)
    await asyncio.sleep(0.6)
    assert viewed.id in manager.sessions
    assert busy.id in manager.sessions
    assert not viewed.exited
    assert not busy.exited


# -- replay ---------------------------------------------------------------------------------------


async def test_output_made_while_nobody_watched_is_replayed(manager: PtyManager) -> None:
    session = await started(manager)
    first = Recorder()
    session.attach(first)
    session.detach(first)
    await manager.run(session.id, "printf '\\033[1;31mred-while-away\\n'", timeout=10)
    # Queries a program made (vim asks for the cursor position and the terminal's version)
    # were answered back then; replayed, they would be answered again, as typed input.
    queries = b"\x1b[c\x1b[>c\x1b[6n\x1b[5n"
    session.attach(first)
    await manager.run(session.id, "printf '\\033[c\\033[>c\\033[6n\\033[5nasked\\n'", timeout=10)
    assert queries in first.output
    session.detach(first)
    second = Recorder()
    session.attach(second, 100, 30)
    assert second.controls[0]["type"] == "attached"
    assert second.controls[0]["nonce"] == session.nonce
    replay = await second.replayed()
    assert replay.startswith(SGR_RESET)
    assert b"red-while-away" in replay
    assert b"asked" in replay
    assert queries in session.scrollback.read()[0]
    for query in (b"\x1b[c", b"\x1b[>c", b"\x1b[6n", b"\x1b[5n"):
        assert query not in replay
    assert replay.endswith(session.scrollback.read()[0][-20:])
    assert (session.columns, session.rows) == (100, 30)


async def test_replay_of_a_wrapped_ring_starts_on_a_line(
    make_manager: Callable[..., PtyManager],
) -> None:
    manager = make_manager(scrollback_bytes=4096)
    session = await started(manager)
    await manager.run(session.id, "printf '\\033[1;31m%0100d\\n' $(seq 1 100)", timeout=10)
    client = Recorder()
    session.attach(client)
    replay = await client.replayed()
    ring = session.scrollback.read()[0]
    assert replay.startswith(SGR_RESET)
    # It begins just after the ring's first newline, so no cut escape sequence shows.
    assert replay[len(SGR_RESET) :] == ring[ring.index(b"\n") + 1 :]


WINCH_PROGRAM = """
import signal, sys, time
signal.signal(signal.SIGWINCH, lambda *_: (sys.stdout.write("REPAINT\\n"), sys.stdout.flush()))
sys.stdout.write("before-screen\\n\\x1b[?1049hSECRET-SCREEN\\n"); sys.stdout.flush()
time.sleep(30)
"""


async def test_alternate_screen_is_not_replayed_but_repainted(
    manager: PtyManager, root: Path
) -> None:
    (root / "winch.py").write_text(WINCH_PROGRAM)
    session = await started(manager)
    session.write(f"{PYTHON} winch.py\r".encode())
    await wait_for(lambda: b"SECRET-SCREEN" in session.scrollback.read()[0], 10, "screen")
    assert session.alt_screen
    client = Recorder()
    session.attach(client)
    replay = await client.replayed()
    assert replay.startswith(SGR_RESET)
    assert replay.endswith(b"before-screen\r\n\x1b[?1049h")
    assert b"SECRET-SCREEN" not in replay
    await wait_for(lambda: b"REPAINT" in client.output, 5, "SIGWINCH repaint")
    session.write(b"\x03")


# Draws once, and again only when the size really changed (as curses programs that compare
# sizes, or refresh only what changed, do): a bare SIGWINCH leaves a reattached view blank.
SIZE_CHANGE_PROGRAM = """
import os, signal, sys, time
last = os.get_terminal_size()
def redraw(*_):
    global last
    size = os.get_terminal_size()
    if size != last:
        last = size
        sys.stdout.write("\\x1b[2J\\x1b[HDRAWN-%dx%d\\n" % size); sys.stdout.flush()
signal.signal(signal.SIGWINCH, redraw)
sys.stdout.write("\\x1b[?1049hDRAWN-FIRST\\n"); sys.stdout.flush()
while True:
    time.sleep(1)
"""


async def test_a_reattached_view_gets_a_full_screen_program_redrawn_at_its_size(
    manager: PtyManager, root: Path
) -> None:
    (root / "sizes.py").write_text(SIZE_CHANGE_PROGRAM)
    session = await started(manager)
    session.write(f"{PYTHON} sizes.py\r".encode())
    await wait_for(lambda: b"DRAWN-FIRST" in session.scrollback.read()[0], 10, "screen")
    columns, rows = session.columns, session.rows
    client = Recorder()
    session.attach(client, columns, rows)  # the same size: no resize of its own
    final = f"DRAWN-{columns}x{rows}".encode()
    await wait_for(lambda: final in client.output, 5, "a redraw at the real size")
    # It ends at the real size, and the session never said it was resized.
    assert (session.columns, session.rows) == (columns, rows)
    assert not client.events("size")
    session.write(b"\x03")


# -- device queries -------------------------------------------------------------------------------

DA_PROGRAM = """
import os, select, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
try:
    os.write(1, b"\\x1b[c")
    reply = b""
    while not reply.endswith(b"c") and select.select([0], [], [], 1.0)[0]:
        reply += os.read(0, 64)
finally:
    termios.tcsetattr(0, termios.TCSADRAIN, old)
print("DA:" + (reply.hex() or "none"))
"""


async def test_device_attributes_answered_only_without_a_client(
    manager: PtyManager, root: Path
) -> None:
    (root / "da.py").write_text(DA_PROGRAM)
    session = await started(manager)
    result = await manager.run(session.id, f"{PYTHON} da.py", timeout=10)
    assert result["text"].strip() == "DA:" + b"\x1b[?1;2c".hex()
    client = Recorder()
    session.attach(client)
    result = await manager.run(session.id, f"{PYTHON} da.py", timeout=10)
    assert result["text"].strip() == "DA:none"
    # The query reached the client, whose terminal answers it.
    assert b"\x1b[c" in client.output


# -- flow control ---------------------------------------------------------------------------------


async def test_a_client_that_takes_nothing_stalls_the_program(
    manager: PtyManager, root: Path
) -> None:
    (root / "producer.py").write_text(PRODUCER)
    session = await started(manager)
    client = Recorder()
    session.attach(client)
    client.hold()
    session.write(f"{PYTHON} producer.py 200000000 progress\r".encode())
    await wait_for(lambda: session.paused, 10, "paused")
    made = await asyncio.wait_for(stalled(root / "progress"), 10)
    assert made < 8 * 1024 * 1024  # a PTY buffer or two past what the session holds
    limits = session.limits
    assert limits.high_water <= session.queued_bytes <= limits.high_water + 2 * 256 * 1024
    assert client.held_bytes == session.queued_bytes
    # Taking the bytes lets it run on, and it pauses again at the next high-water mark.
    client.release()
    client.hold()
    await wait_for(lambda: progress(root / "progress") > made, 10, "resumed")
    session.write(b"\x03")
    client.release()
    await wait_for(lambda: session.phase != "running", 10, "interrupted")
    assert session.blocks.all()[-1].exit_code == 130
    await wait_for(lambda: session.queued_bytes == 0, 5, "all taken")
    assert not session.paused


async def test_a_stuck_client_stops_pacing_after_the_grace_and_is_skipped_ahead(
    make_manager: Callable[..., PtyManager], root: Path
) -> None:
    manager = make_manager(lag_grace=0.3, client_cap=1024 * 1024)
    (root / "producer.py").write_text(PRODUCER)
    session = await started(manager)
    stuck, live = Recorder(), Recorder()
    session.attach(stuck)
    session.attach(live)
    stuck.hold()
    await typed(session, f"{PYTHON} producer.py 30000000 progress\r".encode(), 30)
    assert session.blocks.all()[-1].exit_code == 0
    # The live client got everything; the stuck one was capped, not buffered without end.
    assert live.output.count(b"y" * 1023 + b"\r\n") >= 30_000_000 // 1024
    assert stuck.held_bytes <= 1024 * 1024 + 256 * 1024
    delayed = len(stuck.frames) + stuck.held_frames
    stuck.release()
    await wait_for(lambda: stuck.events("notice"), 5, "skipped notice")
    [notice] = stuck.events("notice")
    assert notice["kind"] == "skipped"
    assert notice["bytes"] > 20_000_000
    # After what it had been sent, a reset, so skipped colours do not leak into what follows.
    assert stuck.frames[delayed] == SGR_RESET
    await wait_for(lambda: session.queued_bytes == 0, 5, "all taken")


async def test_a_client_stopped_between_the_marks_does_not_stall_the_others(
    make_manager: Callable[..., PtyManager], root: Path
) -> None:
    # The pause came from a slow client; the one that holds the resume back took part of
    # its output and stopped, so it sits between the low and high marks. It must still
    # stop pacing after the grace, or the program never runs again.
    mib = 1024 * 1024
    manager = make_manager(high_water=2 * mib, lag_grace=0.3, client_cap=8 * mib)
    (root / "producer.py").write_text(PRODUCER)
    session = await started(manager)
    stopped, slow = Recorder(), Recorder()
    session.attach(stopped)
    session.attach(slow)
    stopped.hold()
    slow.hold()
    ended = session.block_ended()
    session.write(f"{PYTHON} producer.py 12000000 progress\r".encode())
    await wait_for(lambda: session.paused, 10, "paused by the clients")
    stopped.take_until(mib)
    assert session.limits.low_water < stopped.held_bytes <= mib < session.limits.high_water
    slow.release()
    await asyncio.wait_for(ended, 30)
    assert slow.output.count(b"y" * 1023 + b"\r\n") >= 12_000_000 // 1024


async def test_interrupt_drops_output_not_yet_sent(manager: PtyManager, root: Path) -> None:
    (root / "producer.py").write_text(PRODUCER)
    session = await started(manager)
    client = Recorder()
    session.attach(client)
    client.hold()
    session.write(f"{PYTHON} producer.py 200000000 progress\r".encode())
    await wait_for(lambda: session.paused, 10, "paused")
    in_flight = client.held_bytes
    session.write(b"\x03")
    client.release()
    await wait_for(lambda: session.phase != "running", 10, "interrupted")
    # Past what was in flight, only the PTY's own small buffer and the prompt come through.
    after = len(client.output) - in_flight
    assert after < 256 * 1024, after


async def test_a_client_that_goes_away_is_dropped(manager: PtyManager) -> None:
    session = await started(manager)

    class Gone(Recorder):
        def send_output(self, data: bytes) -> None:  # type: ignore[override]
            return None

    gone = Gone()
    session.attach(gone)
    await manager.run(session.id, "echo x", timeout=10)
    assert session.client_count == 0
    await wait_for(lambda: session.queued_bytes == 0, 5, "all taken")


async def test_processes_end_with_the_session(manager: PtyManager) -> None:
    session = await started(manager)
    await manager.run(session.id, "sleep 1000 &", timeout=10)
    children = [
        pid
        for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
        if alive(pid) and os.getsid(pid) == session.process.pid and pid != session.process.pid
    ]
    assert children
    await manager.close(session.id)
    assert not any(alive(pid) for pid in children)
