"""``terax.agent()``: the server's agent driven from a cell, in a session the Lab AI panel shares.

A run is started through REST and followed on the session's events WebSocket, both on the
background loop; the calling thread (the cell) consumes the events: it updates the view,
answers approvals through the policy (``policy.py``), and builds the result. So approvals
a policy decides run the user's callable in the user's thread, output lands in the right
cell, and a kernel interrupt cancels the run on the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import time
from typing import TYPE_CHECKING, Any

from terax_jupyter.client.api import TeraxAPIError, segment
from terax_jupyter.notebook import background, kernel
from terax_jupyter.notebook.policy import Approval, ApprovalPolicy, PolicySpec, Verdict
from terax_jupyter.notebook.results import AgentResult, RunFold
from terax_jupyter.notebook.views import RunView

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.notebook.connection import Connection

_END = {"type": "_end"}  # the producer's last item
RECONNECTS = 5  # a dropped events socket is reopened after the last event seen, this often


class AgentRunError(Exception):
    """The run could not be followed (its events socket kept failing)."""


class Agent:
    """One agent session on the server. ``ask()`` sends a prompt and waits for the answer."""

    def __init__(
        self,
        connection: Connection,
        session: dict[str, Any],
        policy: ApprovalPolicy,
        *,
        display: bool | Callable[[], RunView] = True,
        notebook: bool | str = True,
    ) -> None:
        self.connection = connection
        self.session = session
        self.policy = policy
        self.display = display
        # True: prompts name the notebook and cell they are asked from; a path: that notebook.
        self.notebook = notebook
        self.last_result: AgentResult | None = None

    def __repr__(self) -> str:
        session = self.session
        model = f"{session.get('provider')}/{session.get('model')}"
        return (
            f"<terax agent {session.get('agent')!r} session {self.session_id} "
            f"({session.get('title') or 'untitled'!r}, {model})>"
        )

    @property
    def session_id(self) -> str:
        return str(self.session["id"])

    @property
    def title(self) -> str:
        return str(self.session.get("title") or "")

    def _path(self, *parts: str) -> str:
        return "/".join(["ai/sessions", segment(self.session_id), *parts])

    def refresh(self) -> dict[str, Any]:
        """The session as the server has it now (title, usage, pending approvals, ...)."""
        self.session = self.connection.call("GET", self._path())
        return self.session

    def messages(self) -> list[dict[str, Any]]:
        """The session's stored messages (every run, the Lab panel's too)."""
        return list(self.connection.call("GET", self._path("messages"))["messages"])

    def cancel(self) -> bool:
        """Cancel the session's run, if one is running."""
        try:
            self.connection.call("POST", self._path("cancel"))
        except TeraxAPIError as error:
            if error.reason == "no_run":
                return False
            raise
        return True

    # -- asking ---------------------------------------------------------------------------

    def ask(
        self,
        prompt: str,
        *,
        display: bool | None = None,
        timeout: float | None = None,
        plan_mode: bool | None = None,
    ) -> AgentResult:
        """Send ``prompt``, show the run as it streams, answer approvals by the policy (or
        wait for a person), and return the result. Interrupting the kernel (or ``timeout``
        seconds) cancels the run on the server."""
        from terax_jupyter.notebook import set_current

        set_current(self)
        view = self._view(display)
        fold = RunFold(self.session_id)
        headless = kernel.headless()
        items: queue.Queue[dict[str, Any]] = queue.Queue()
        sent = self._with_notebook(prompt)
        future = background.submit(self._follow(prompt, plan_mode, items.put, sent=sent))
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                # Checked on every item too: a steady stream of events must not outlast it.
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(
                        f"The agent did not finish within {timeout:g} s; its run was cancelled."
                    )
                try:
                    item = items.get(timeout=0.2)
                except queue.Empty:
                    continue
                if item is _END:
                    break
                approval = self._consume(item, fold, view)
                if approval is not None:
                    verdict = self.policy.verdict(approval, headless=headless, resolve=_resolve)
                    if verdict is None:
                        view.waiting(approval, self.session)
                    else:
                        self._record(approval, verdict, fold, view)
                        background.run(self._post_verdict(approval, verdict))
            stored = future.result()
        except BaseException:
            future.cancel()
            if fold.run_id is not None and fold.finish is None:
                with contextlib.suppress(Exception):
                    self.cancel()
            raise
        return self._finish(fold, view, stored)

    async def ask_async(
        self,
        prompt: str,
        *,
        display: bool | None = None,
        timeout: float | None = None,
        plan_mode: bool | None = None,
    ) -> AgentResult:
        """``ask`` for ``await`` (a cell's top-level await, or any event loop). A policy
        callable may be a coroutine function here."""
        from terax_jupyter.notebook import set_current

        set_current(self)
        view = self._view(display)
        fold = RunFold(self.session_id)
        headless = kernel.headless()
        loop = asyncio.get_running_loop()
        items: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def put(item: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(items.put_nowait, item)

        sent = self._with_notebook(prompt)
        follow = asyncio.ensure_future(
            background.wait(self._follow(prompt, plan_mode, put, sent=sent))
        )

        async def consume() -> None:
            while True:
                item = await items.get()
                if item is _END:
                    return
                approval = self._consume(item, fold, view)
                if approval is not None:
                    verdict = await self.policy.averdict(approval, headless=headless)
                    if verdict is None:
                        view.waiting(approval, self.session)
                    else:
                        self._record(approval, verdict, fold, view)
                        await background.wait(self._post_verdict(approval, verdict))

        try:
            try:
                await asyncio.wait_for(consume(), timeout)
            except asyncio.TimeoutError:
                raise TimeoutError(
                    f"The agent did not finish within {timeout:g} s; its run was cancelled."
                ) from None
            stored = await follow
        except BaseException:
            follow.cancel()
            if fold.run_id is not None and fold.finish is None:
                with contextlib.suppress(Exception):
                    await background.wait(self.connection.request("POST", self._path("cancel")))
            raise
        return self._finish(fold, view, stored)

    # -- the consumer (the caller's thread) -----------------------------------------------

    def _view(self, display: bool | None) -> RunView:
        chosen = self.display if display is None else display
        if chosen is False:
            return RunView()
        if callable(chosen) and chosen is not True:
            return chosen()
        from terax_jupyter.notebook import widget

        return widget.best_view()

    def _consume(self, item: dict[str, Any], fold: RunFold, view: RunView) -> Approval | None:
        """Apply one item of the run; an approval this side must answer is returned."""
        if item.get("type") == "_run":
            fold.run_id = item["run"]["id"]
            view.started(item["prompt"], self.session)
            return None
        if not fold.ours(item):
            return None
        fold.apply(item)
        view.event(item, fold)
        if item.get("type") != "approval_requested" or item.get("parent_call_id"):
            return None
        approval = Approval.from_json(item["approval"])
        if approval.raw.get("status", "pending") != "pending":
            return None
        return approval

    def _record(self, approval: Approval, verdict: Verdict, fold: RunFold, view: RunView) -> None:
        """Keep and show this side's ``verdict`` before it is sent: it never goes unseen."""
        fold.decided(approval.id, verdict)
        view.decided(approval, verdict)

    async def _post_verdict(self, approval: Approval, verdict: Verdict) -> None:
        try:
            await self.connection.request(
                "POST", f"ai/approvals/{segment(approval.id)}", body=verdict.body()
            )
        except TeraxAPIError as error:
            if error.reason != "already_decided":  # someone was quicker (the Lab panel)
                raise

    def _finish(
        self,
        fold: RunFold,
        view: RunView,
        stored: tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]],
    ) -> AgentResult:
        messages, calls, session = stored
        self.session = session
        result = fold.result(messages, calls)
        self.last_result = result
        view.finished(result)
        return result

    # -- the producer (the background loop) -----------------------------------------------

    def _with_notebook(self, prompt: str) -> str:
        """The prompt as sent: with the notebook (and cell) it is asked from, when known."""
        if self.notebook is False:
            return prompt
        path, cell_id, code = kernel.notebook_cell()
        if isinstance(self.notebook, str) and self.notebook != path:
            path, cell_id, code = self.notebook, None, None
        return kernel.with_notebook_context(prompt, path, cell_id, code)

    async def _follow(
        self,
        prompt: str,
        plan_mode: bool | None,
        put: Callable[[dict[str, Any]], None],
        *,
        sent: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
        """Start the run (``sent``: the prompt with its context) and pass its events to
        ``put`` until it finishes; then the stored messages and tool calls of the session,
        and the session."""
        connection = self.connection
        try:
            session = await connection.request("GET", self._path())
            self.session = session
            after = int(session.get("last_seq") or 0)
            socket = await connection.websocket(self._path("events"), {"after": after})
            try:
                body: dict[str, Any] = {"prompt": prompt if sent is None else sent}
                if plan_mode is not None:
                    body["plan_mode"] = plan_mode
                run = await connection.request("POST", self._path("runs"), body=body)
                put({"type": "_run", "run": run, "prompt": prompt})
                await self._events(socket, run["id"], after, put)
            finally:
                with contextlib.suppress(Exception):
                    await socket.close()
            messages = await connection.request("GET", self._path("messages"))
            calls = await connection.request("GET", self._path("tool-calls"))
            session = await connection.request("GET", self._path())
            return messages["messages"], calls["tool_calls"], session
        finally:
            put(_END)

    async def _events(
        self, socket: Any, run_id: str, after: int, put: Callable[[dict[str, Any]], None]
    ) -> None:
        from websockets.exceptions import ConnectionClosed

        last, failures = after, 0
        while True:
            try:
                message = await socket.recv()
            except ConnectionClosed:
                failures += 1
                if failures > RECONNECTS:
                    raise AgentRunError(
                        "The agent's event stream kept closing; the run may still be going "
                        "on: see the session in the Terax AI panel."
                    ) from None
                await asyncio.sleep(min(0.25 * 2**failures, 4.0))
                with contextlib.suppress(Exception):
                    await socket.close()
                socket = await self.connection.websocket(self._path("events"), {"after": last})
                continue
            event = json.loads(message)
            if not isinstance(event, dict):
                continue
            last = max(last, int(event.get("seq") or last))
            failures = 0
            put(event)
            if event.get("type") == "overflow":
                socket = await self._reopen(socket, last)
            elif event.get("type") == "finish" and event.get("run_id") == run_id:
                return

    async def _reopen(self, socket: Any, after: int) -> Any:
        with contextlib.suppress(Exception):
            await socket.close()
        return await self.connection.websocket(self._path("events"), {"after": after})


def _split_model(
    connection: Connection, model: str | None, provider: str | None
) -> tuple[str | None, str | None]:
    """``provider/model`` (a known provider id before the first slash) or a model alone:
    OpenRouter's model names have slashes of their own."""
    if provider is not None or model is None or "/" not in model:
        return provider, model
    head, _, rest = model.partition("/")
    providers = connection.call("GET", "ai/providers").get("providers", [])
    if any(p.get("id") == head for p in providers):
        return head, rest
    return None, model


def create_agent(
    connection: Connection,
    *,
    model: str | None = None,
    agent: str | None = None,
    provider: str | None = None,
    session: str | Agent | dict[str, Any] | None = None,
    policy: PolicySpec = None,
    plan_mode: bool | None = None,
    title: str | None = None,
    display: bool | Callable[[], RunView] = True,
    notebook: bool | str = True,
) -> Agent:
    """A new session, or ``session`` (an id, an Agent, or a session from the panel's list)
    continued; fields given here are set on it."""
    provider, model = _split_model(connection, model, provider)
    known_tools = background.run(connection.tool_names()) if isinstance(policy, list) else None
    chosen = ApprovalPolicy.of(policy, known_tools)
    fields: dict[str, Any] = {}
    for name, value in (
        ("agent", agent),
        ("provider", provider),
        ("model", model),
        ("plan_mode", plan_mode),
        ("title", title),
    ):
        if value is not None:
            fields[name] = value
    if session is None:
        fields.setdefault("agent", "coder")
        created = connection.call("POST", "ai/sessions", body=fields)
        return Agent(connection, created, chosen, display=display, notebook=notebook)
    if isinstance(session, Agent):
        session_id = session.session_id
    elif isinstance(session, dict):
        session_id = str(session["id"])
    else:
        session_id = str(session)
    path = f"ai/sessions/{segment(session_id)}"
    found = connection.call("PATCH", path, body=fields) if fields else connection.call("GET", path)
    return Agent(connection, found, chosen, display=display, notebook=notebook)


def _resolve(awaitable: Awaitable[Any]) -> Any:
    """An async policy's answer, awaited on the background loop (``ask()`` is sync)."""

    async def wait() -> Any:
        return await awaitable

    return background.run(wait())
