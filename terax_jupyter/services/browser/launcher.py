"""Start and stop a headless Chromium with a private profile, kept off the network.

The browser speaks the DevTools protocol over a pipe (``--remote-debugging-pipe``): it reads
our calls on its file descriptor 3 and writes answers and events on 4 (``cdp.CdpPipe``). No
port is opened, so no other process, and no other local user, can reach DevTools: only this
server holds the other ends, which are close-on-exec here, so no other child inherits them.
(A DevTools port on 127.0.0.1 let any local user drive the browser and read the server
user's files through ``file://``.) Python cannot place a child's descriptors at fixed numbers,
so the browser is started through a tiny trampoline (``sys.executable -I -S -c``) that moves
its two ends onto 3 and 4 and execs the browser in the same process: the pid, the process
group and the parent-death signal carry over.

Chromium's sandbox stays on unless the server runs as root (where Chromium refuses to start
with it) or the administrator turns it off (``sandbox=False``, from
``BrowserManager.chromium_sandbox``); a browser whose sandbox cannot start says which setting
to change.

The browser runs in its own session (so in its own process group): ``close`` signals the whole
group, the zygote and renderers included, SIGTERM first and SIGKILL after a grace, reaps the
leader and removes the profile. Its environment is minimal (no API keys or tokens of the
server's environment) with HOME and the XDG folders inside the profile, so nothing lands in the
user's home.

Network: besides the flags that stop Chromium's own background traffic, ``lockdown`` (on by
default) points every proxied request at a dead proxy on loopback. Chromium never proxies
loopback hosts (localhost, 127.0.0.0/8, [::1]), so local dev servers are reached directly while
anything else fails, including traffic the per-page request guard in ``page.py`` cannot see
(WebSockets, service and shared workers, popups). Turn it off only to let pages reach a dev
server on a private, non-loopback address that a page policy also allows.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING

from terax_jupyter.exceptions import BrowserError, Timeout, Unavailable
from terax_jupyter.services.browser.cdp import CdpConnection, CdpPipe

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["BROWSER_NAMES", "ChromiumLauncher", "find_chromium"]

PR_SET_PDEATHSIG = 1  # linux/prctl.h
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

INSTALL_HINT = (
    "install Chromium (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask"
    " chromium) or set the browser's path explicitly"
)

# Features whose only job is talking to Google or showing UI nobody sees in headless mode.
DISABLED_FEATURES = (
    "Translate",
    "OptimizationHints",
    "OptimizationGuideModelDownloading",
    "OptimizationHintsFetching",
    "OptimizationTargetPrediction",
    "MediaRouter",
    "DialMediaRouteProvider",
    "AutofillServerCommunication",
    "CertificateTransparencyComponentUpdater",
    "InterestFeedContentSuggestions",
    "PrivacySandboxSettings4",
    "HttpsUpgrades",
    "CalculateNativeWinOcclusion",
)

BASE_FLAGS = (
    "--headless=new",
    "--remote-debugging-pipe",  # DevTools on fds 3 and 4 only: no port anyone could reach
    "--no-first-run",
    "--no-default-browser-check",
    "--no-pings",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--metrics-recording-only",
    "--safebrowsing-disable-auto-update",
    "--password-store=basic",
    "--use-mock-keychain",
    f"--disable-features={','.join(DISABLED_FEATURES)}",
    "--mute-audio",
    "--hide-scrollbars",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # Headless tabs count as hidden; without these, timers and rendering are throttled.
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-hang-monitor",
    "--disable-prompt-on-repost",
    "--disable-auto-reload",  # an error page would retry the failed URL on its own
    # WebRTC sends UDP around any proxy unless told not to.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)

# Where ``lockdown`` sends non-loopback traffic: the discard port on loopback, where nothing
# listens on a normal machine, so a connection is refused at once.
DEAD_PROXY = "http://127.0.0.1:9"

# Variables worth passing to the browser; everything else (keys, tokens) stays behind.
KEPT_ENVIRONMENT = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "FONTCONFIG_PATH")

STDERR_TAIL_LINES = 40

NO_SANDBOX = "--no-sandbox"
SANDBOX_SETTING = "c.BrowserManager.chromium_sandbox = False"

# Run as ``python -I -S -c TRAMPOLINE <our read end> <our write end> <browser> <args...>``:
# puts the browser's ends of the two pipes on fds 3 and 4 (first moved above 9, as either may
# sit on 3 or 4 already) and becomes the browser. Only 0-2 and the two ends are open here
# (close_fds), and the interpreter's own descriptors are close-on-exec.
TRAMPOLINE = """\
import fcntl, os, sys
reads, writes = int(sys.argv[1]), int(sys.argv[2])
high_reads = fcntl.fcntl(reads, fcntl.F_DUPFD, 10)
high_writes = fcntl.fcntl(writes, fcntl.F_DUPFD, 10)
os.close(reads)
os.close(writes)
os.dup2(high_reads, 3)
os.dup2(high_writes, 4)
os.close(high_reads)
os.close(high_writes)
try:
    os.execv(sys.argv[3], sys.argv[3:])
except OSError as error:
    sys.stderr.write(f"cannot run {sys.argv[3]}: {error}\\n")
    os._exit(127)
"""


def find_chromium(binary: str | None = None) -> str:
    """The browser executable: ``binary`` if given (a path or a name on PATH), else the first
    of ``BROWSER_NAMES`` on PATH; ``Unavailable`` saying what to install if there is none."""
    if binary:
        found = shutil.which(binary)
        if found is None:
            raise Unavailable(
                f"the browser {binary!r} was not found or is not executable; {INSTALL_HINT}",
                reason="browser_missing",
            )
        return found
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise Unavailable(
        f"no Chromium found on PATH (looked for {', '.join(BROWSER_NAMES)}); {INSTALL_HINT}",
        reason="browser_missing",
    )


_SPAWNER = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="terax-chromium-spawn"
)


PROFILE_PREFIX = "terax-chromium-"
OWNER_FILE = "owner.pid"
_swept = threading.Event()


def _sweep_orphaned_profiles() -> None:
    """Once per process: remove the temporary profiles of browsers whose server is gone."""
    if _swept.is_set():
        return
    _swept.set()
    for profile in Path(tempfile.gettempdir()).glob(PROFILE_PREFIX + "*"):
        try:
            owner = int((profile / OWNER_FILE).read_text(encoding="ascii"))
        except (OSError, ValueError):
            continue  # not ours to judge (no owner written yet, or not a profile)
        if owner == os.getpid() or _process_exists(owner):
            continue
        shutil.rmtree(profile, ignore_errors=True)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGKILL when the server goes away without closing
    the browser (killed, crashed), so that no Chromium outlives it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class ChromiumLauncher:
    """One headless Chromium process (group) and its throw-away profile.

    ``await start()`` returns the browser's DevTools pipe (``CdpPipe``, for
    ``CdpConnection.connect``) once the browser answered on it; ``await close()`` ends the
    whole process group, closes the pipe and removes the profile (safe to call twice, or after
    a crash). The process is plain ``subprocess.Popen`` (started and waited for on threads) and
    the pipe is read in whichever loop connects to it, so a launcher may be started under one
    loop and used or closed under another (one at a time).

    ``sandbox`` (default on) keeps Chromium's sandbox; it is off anyway when the server runs
    as root, where Chromium cannot start with it.
    """

    def __init__(
        self,
        binary: str | None = None,
        *,
        extra_args: Sequence[str] = (),
        startup_timeout: float = 30.0,
        close_grace: float = 3.0,
        window_size: tuple[int, int] = (1280, 800),
        lockdown: bool = True,
        sandbox: bool = True,
    ) -> None:
        self.binary = binary
        self.extra_args = tuple(extra_args)
        self.startup_timeout = startup_timeout
        self.close_grace = close_grace
        self.window_size = window_size
        self.lockdown = lockdown
        self.sandbox = sandbox
        self.pipe: CdpPipe | None = None
        self.product: str | None = None  # what the browser said it is (Browser.getVersion)
        self.profile_dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The browser's process id, which is also its process group id."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def returncode(self) -> int | None:
        return self._process.poll() if self._process is not None else None

    def exit_code(self, wait: float) -> int | None:
        """The exit code, waiting up to ``wait`` seconds for it: a browser that just closed
        its pipe may not be reapable yet (its files close before it becomes a zombie)."""
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    @property
    def sandboxed(self) -> bool:
        """Whether the browser runs with Chromium's sandbox: asked for, and not as root."""
        return self.sandbox and not _is_root()

    def stderr_tail(self) -> str:
        """The last lines the browser wrote to stderr (for error messages)."""
        return "\n".join(self._stderr_tail)

    def arguments(self, executable: str, profile: Path) -> list[str]:
        width, height = self.window_size
        args = [
            executable,
            *BASE_FLAGS,
            f"--user-data-dir={profile / 'data'}",
            f"--window-size={width},{height}",
        ]
        if not self.sandboxed:
            args.append(NO_SANDBOX)
        if self.lockdown:
            args.append(f"--proxy-server={DEAD_PROXY}")
        args.extend(self.extra_args)
        args.append("about:blank")
        return args

    async def start(self) -> CdpPipe:
        """Start the browser and wait until it answers on its DevTools pipe; the pipe."""
        if self._process is not None:
            if self.pipe is not None and self.pipe.lost is None and self.running:
                return self.pipe
            raise BrowserError("this launcher was already used; make a new one")
        if os.name != "posix":
            raise Unavailable(
                "the headless browser needs a POSIX system (Linux or macOS): it talks to"
                " Chromium over inherited pipes",
                reason="browser_unsupported",
            )
        executable = find_chromium(self.binary)
        # Spawned from one long-lived thread: on Linux the browser is told to die with the
        # thread that started it (PR_SET_PDEATHSIG), so it must be one that lives as long as
        # the server, not a worker that may come and go.
        await asyncio.wrap_future(_SPAWNER.submit(self._spawn, executable))
        try:
            await self._handshake()
        except BaseException:
            await self.close()
            raise
        assert self.pipe is not None
        return self.pipe

    def _spawn(self, executable: str) -> None:
        _sweep_orphaned_profiles()
        profile = Path(tempfile.mkdtemp(prefix=PROFILE_PREFIX))
        # Who owns it: a server that died without closing its browser (killed, crashed)
        # leaves the folder behind, and the next server to start a browser removes it.
        (profile / OWNER_FILE).write_text(str(os.getpid()), encoding="ascii")
        self.profile_dir = profile
        environment = {k: os.environ[k] for k in KEPT_ENVIRONMENT if k in os.environ}
        environment.update(
            HOME=str(profile / "home"),
            XDG_CONFIG_HOME=str(profile / "config"),
            XDG_CACHE_HOME=str(profile / "cache"),
            XDG_DATA_HOME=str(profile / "share"),
            TMPDIR=str(profile),
        )
        # Two pipes: ours are close-on-exec (os.pipe), so only the browser gets the others.
        browser_reads, we_write = os.pipe()
        we_read, browser_writes = os.pipe()
        try:
            self._process = subprocess.Popen(
                [
                    _python(),
                    "-I",
                    "-S",
                    "-c",
                    TRAMPOLINE,
                    str(browser_reads),
                    str(browser_writes),
                    *self.arguments(executable, profile),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(browser_reads, browser_writes),
                env=environment,
                cwd=profile,
                start_new_session=True,  # its own process group, ended as a whole in close()
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        except (OSError, Unavailable) as error:
            for fd in (we_read, we_write):
                os.close(fd)
            shutil.rmtree(profile, ignore_errors=True)
            self.profile_dir = None
            detail = error.message if isinstance(error, Unavailable) else str(error)
            raise Unavailable(
                f"the browser {executable} could not start: {detail}", reason="browser_missing"
            ) from None
        finally:
            # The browser has its copies now; ours would keep the pipe open after it died.
            os.close(browser_reads)
            os.close(browser_writes)
        self.pipe = CdpPipe(we_read, we_write)
        assert self._process.stderr is not None
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr,
            args=(self._process.stderr,),
            name="terax-chromium-stderr",
            daemon=True,
        )
        self._stderr_thread.start()

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        # Read to the end so that a chatty browser never blocks on a full pipe.
        with contextlib.suppress(OSError, ValueError):
            for line in iter(stream.readline, b""):
                text = line.decode("utf-8", "replace").rstrip()
                if text:
                    self._stderr_tail.append(text[:500])

    async def _handshake(self) -> None:
        """Ask the browser what it is over the pipe: it answers once it is up (it reads the
        pipe from its start, so nothing is lost in between)."""
        assert self.pipe is not None
        connection = await CdpConnection.connect(self.pipe, timeout=self.startup_timeout)
        try:
            version = await connection.send("Browser.getVersion")
        except Timeout:
            raise Timeout(
                f"the browser did not answer on its DevTools pipe within"
                f" {self.startup_timeout:g} s{_tail_text(self.stderr_tail())}"
            ) from None
        except BrowserError:
            raise await self._start_up_failure() from None
        finally:
            await connection.close()
        self.product = str(version.get("product") or "") or None

    async def _start_up_failure(self) -> BrowserError:
        """The error for a browser that closed its pipe before answering (it exited)."""
        process = self._process
        assert process is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            await asyncio.to_thread(process.wait, 5.0)
        # Its last words may still be in the pipe: let the reader finish them.
        if self._stderr_thread is not None:
            await asyncio.to_thread(self._stderr_thread.join, 2.0)
        tail = self.stderr_tail()
        code = process.poll()
        what = (
            f"the browser exited during start-up (exit code {code})"
            if code is not None
            else "the browser closed its DevTools pipe during start-up"
        )
        hint = ""
        if self.sandboxed and "sandbox" in tail.lower():
            hint = (
                "; its sandbox could not start. Let it start (unprivileged user namespaces,"
                " or Chromium's setuid chrome-sandbox helper) or, to run the browser without"
                f" its sandbox, set {SANDBOX_SETTING} in the server's configuration"
            )
        return BrowserError(f"{what}{hint}{_tail_text(tail)}", reason="browser_start_failed")

    async def close(self) -> None:
        """End the browser's process group (SIGTERM, SIGKILL after the grace), reap it, remove
        the profile; close the pipe. Safe to call more than once."""
        await asyncio.to_thread(self._close_blocking)
        if self.pipe is not None:
            self.pipe.close()

    def _close_blocking(self) -> None:
        with self._lock:
            process = self._process
            if process is not None:
                _end_group(process, self.close_grace)
                if self._stderr_thread is not None:
                    self._stderr_thread.join(timeout=2)
                if process.stderr is not None:
                    with contextlib.suppress(OSError):
                        process.stderr.close()
            if self.profile_dir is not None:
                shutil.rmtree(self.profile_dir, ignore_errors=True)
                self.profile_dir = None


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _python() -> str:
    """The interpreter that runs the trampoline: this server's own."""
    if not sys.executable:
        raise Unavailable(
            "cannot start the browser: Python's own executable is unknown (sys.executable)",
            reason="browser_missing",
        )
    return sys.executable


def _end_group(process: subprocess.Popen[bytes], grace: float) -> None:
    if os.name != "posix":
        # Windows: Chromium's helpers live in the browser's job object and end with it.
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return
    group = process.pid  # start_new_session made the browser its group's leader
    _signal_group(group, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _signal_group(group, signal.SIGKILL)
        process.wait()
    # Helpers that outlive the leader are taken too. Those already dead stay zombies until
    # init reaps them (they are not our children), so there is nothing to wait for.
    _signal_group(group, signal.SIGKILL)


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _tail_text(tail: str) -> str:
    return f"; its last output:\n{tail}" if tail else ""
