"""Runs of notebook cells in the notebook's live kernel, for the agent's notebook tools.

The kernel is the one Jupyter's session of the notebook uses, so what runs is what the user
sees in Lab (a session is made, with the notebook's kernel, when there is none). A run is
bound to the kernel it was approved against: its id and its incarnation (the process, which
a restart replaces), so that an approval never carries over to another kernel state. Runs go
on in the background; their handles answer status, and their outputs land in the notebook as
if the user had run the cells: a Lab page that has the notebook open takes them into its
model (``live.py``), else they are written into the file, cell by cell, only where the cell
still holds the source that ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from traitlets import Integer
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import Conflict, NotFound, Unavailable
from terax_jupyter.notebook_view.cells import EXECUTED_KEY, HASH_CHARS, raw_notebook, source_hash
from terax_jupyter.notebook_view.render import joined
from terax_jupyter.notebook_view.serialize import notebook_text
from terax_jupyter.services.kernels.execution import CellRun, run_cell
from terax_jupyter.services.kernels.variables import list_variables

if TYPE_CHECKING:
    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.fs.manager import FileManager

READY_TIMEOUT_S = 60.0
MAX_WAIT_S = 300.0
OUTPUT_SETTLE_S = 0.5  # a wait for new output lets more of it come for this long
LANDING_RETRIES = 3
SEND_INTERVAL_S = 0.1


@dataclass(frozen=True)
class KernelState:
    """A notebook's kernel as an approval binds it."""

    id: str
    name: str
    state: str
    incarnation: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "state": self.state,
            "incarnation": self.incarnation,
        }


@dataclass
class Run:
    id: str
    path: str
    kernel_id: str
    owner: str
    cells: list[CellRun]
    started: float = field(default_factory=time.time)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    problem: str | None = None
    # How far the model has read each cell's outputs (notebook_run_status).
    delivered: dict[str, int] = field(default_factory=dict)
    revisions: dict[str, int] = field(default_factory=dict)
    # The length of the last output shown of each cell, when it is a stream that may grow.
    delivered_text: dict[str, int] = field(default_factory=dict)
    landed: dict[str, str] = field(default_factory=dict)  # cell id -> where its outputs went
    sent_at: dict[str, float] = field(default_factory=dict)  # to the Lab pages, per cell
    send_pending: set[str] = field(default_factory=set)

    @property
    def finished(self) -> bool:
        return self.done.is_set()

    def unseen(self) -> bool:
        """Whether a cell has outputs the model has not been shown (notebook_run_status)."""
        return any(
            len(cell.outputs) != self.delivered.get(cell.id, 0)
            or cell.revision != self.revisions.get(cell.id, 0)
            or cell.stream_length(self.delivered.get(cell.id, 0))
            > self.delivered_text.get(cell.id, 0)
            for cell in self.cells
        )


class KernelRunner(LoggingConfigurable):
    """Runs cells in notebooks' kernels and keeps their handles."""

    max_output_bytes = Integer(
        8 * 1024 * 1024,
        help="The most output (bytes of nbformat JSON) one cell run keeps; outputs past it "
        "are dropped, and counted.",
    ).tag(config=True)
    max_runs = Integer(100, help="Run handles kept (the oldest finished ones go first).").tag(
        config=True
    )

    def __init__(
        self,
        security: SecurityLayer,
        files: FileManager,
        *,
        kernel_manager: Any,
        session_manager: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.security = security
        self.files = files
        self.kernel_manager = kernel_manager
        self.session_manager = session_manager
        self.runs: dict[str, Run] = {}
        # Lab pages that have notebooks open: they take the outputs of those notebooks.
        self.listeners: set[Any] = set()

    # -- kernels -----------------------------------------------------------------------------

    async def kernel_of(self, path: str) -> KernelState | None:
        """The kernel of the notebook's Jupyter session, or None when it has none."""
        for session in await self.session_manager.list_sessions():
            kernel = session.get("kernel") or {}
            if session.get("path") == path and kernel.get("id"):
                try:
                    return self._state(kernel["id"])
                except NotFound:
                    continue
        return None

    def kernel_specs(self) -> dict[str, tuple[str, str]]:
        """The installed kernels: name -> (display name, language). Blocking (reads files)."""
        specs = self.kernel_manager.kernel_spec_manager.get_all_specs()
        return {
            name: (
                str(entry.get("spec", {}).get("display_name") or name),
                str(entry.get("spec", {}).get("language") or ""),
            )
            for name, entry in specs.items()
        }

    def _state(self, kernel_id: str) -> KernelState:
        if kernel_id not in self.kernel_manager:
            raise NotFound(f"Kernel {kernel_id} is not running.", reason="no_kernel")
        manager = self.kernel_manager.get_kernel(kernel_id)
        provisioner = getattr(manager, "provisioner", None)
        pid = getattr(provisioner, "pid", None)
        incarnation = str(pid) if pid else f"p{id(provisioner):x}"
        return KernelState(
            id=kernel_id,
            name=str(getattr(manager, "kernel_name", "") or ""),
            state=str(getattr(manager, "execution_state", "unknown")),
            incarnation=incarnation,
        )

    async def _session_kernel(self, path: str, kernel_name: str | None) -> KernelState:
        """The notebook's kernel, started in a new session of the notebook if it has none."""
        current = await self.kernel_of(path)
        if current is not None:
            return current
        try:
            session = await self.session_manager.create_session(
                path=path, name=os.path.basename(path), type="notebook", kernel_name=kernel_name
            )
        except Exception as error:  # the kernel spec is missing, the kernel did not start
            raise Unavailable(
                f"No kernel could be started for {path}: {error}", reason="no_kernel"
            ) from None
        return self._state(session["kernel"]["id"])

    def check_binding(self, approved: dict[str, Any] | None, current: KernelState | None) -> None:
        """Refuse a run whose kernel is not the one the user approved it against."""
        if approved is None and current is not None:
            raise Conflict(
                "A kernel started for this notebook after the run was approved (it was "
                "approved to start one); ask again so the user sees which kernel runs it.",
                reason="kernel_changed",
            )
        if approved is not None and (
            current is None
            or current.id != approved.get("id")
            or current.incarnation != approved.get("incarnation")
        ):
            what = "stopped" if current is None else "restarted or was replaced"
            raise Conflict(
                f"The notebook's kernel {what} after the run was approved; its state is not "
                "the one the user approved the run in. Ask again.",
                reason="kernel_changed",
            )

    async def interrupt(self, path: str) -> KernelState:
        kernel = await self._require_kernel(path)
        await self.kernel_manager.interrupt_kernel(kernel.id)
        return kernel

    async def restart(self, path: str, approved: dict[str, Any]) -> KernelState:
        kernel = await self._require_kernel(path)
        self.check_binding(approved, kernel)
        await self.kernel_manager.restart_kernel(kernel.id)
        return self._state(kernel.id)

    async def variables(self, path: str, *, limit: int) -> tuple[KernelState, list[dict[str, Any]]]:
        kernel = await self._require_kernel(path)
        client = self.kernel_manager.get_kernel(kernel.id).client()
        client.start_channels()
        try:
            return kernel, await list_variables(client, limit=limit)
        finally:
            client.stop_channels()

    async def _require_kernel(self, path: str) -> KernelState:
        kernel = await self.kernel_of(path)
        if kernel is None:
            raise NotFound(
                f"{path} has no running kernel; notebook_run starts one.", reason="no_kernel"
            )
        return kernel

    # -- runs --------------------------------------------------------------------------------

    async def start(
        self,
        path: str,
        cells: list[tuple[str, str]],
        *,
        approved_kernel: dict[str, Any] | None,
        kernel_name: str | None,
        owner: str,
    ) -> Run:
        """Start running ``cells`` ((id, source), in order) and return the run at once."""
        busy = [run for run in self.runs.values() if run.path == path and not run.finished]
        if busy:
            raise Conflict(
                f"A run of {path} is still going (handle {busy[0].id}); wait for it with "
                "notebook_run_status or stop it with notebook_interrupt.",
                reason="run_in_progress",
            )
        self.check_binding(approved_kernel, await self.kernel_of(path))
        kernel = await self._session_kernel(path, kernel_name)
        run = Run(
            id=uuid.uuid4().hex[:16],
            path=path,
            kernel_id=kernel.id,
            owner=owner,
            cells=[CellRun(cell_id, source) for cell_id, source in cells],
        )
        self._keep(run)
        run.task = asyncio.create_task(self._execute(run))
        return run

    def get(self, run_id: str) -> Run:
        run = self.runs.get(run_id)
        if run is None:
            raise NotFound(f"No run has the handle {run_id!r}.", reason="unknown_run")
        return run

    async def wait(self, run: Run, timeout: float, *, until_output: bool = False) -> None:
        """Until the run ends or ``timeout`` seconds pass (at most MAX_WAIT_S); with
        ``until_output``, also until it printed something the model has not seen (and then
        OUTPUT_SETTLE_S more, so that a burst of lines comes as one answer)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(max(timeout, 0.0), MAX_WAIT_S)
        if until_output:
            while not run.finished and not run.unseen() and loop.time() < deadline:
                run.changed.clear()
                if run.unseen():
                    break
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(run.changed.wait(), deadline - loop.time())
            deadline = min(deadline, loop.time() + OUTPUT_SETTLE_S)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(run.done.wait(), max(deadline - loop.time(), 0.0))

    async def _execute(self, run: Run) -> None:
        client = None
        try:
            client = self.kernel_manager.get_kernel(run.kernel_id).client()
            client.start_channels()
            await client.wait_for_ready(timeout=READY_TIMEOUT_S)
            stopped = False
            for cell in run.cells:
                if stopped:
                    cell.status = "not_run"
                    continue
                await run_cell(
                    client,
                    cell,
                    max_output_bytes=self.max_output_bytes,
                    on_output=functools.partial(self._changed, run, cell),
                )
                await self._land(run, cell)
                stopped = cell.status != "ok"
        except Exception as error:  # the kernel died, or never became ready
            self.log.warning("Terax: the run of %s failed: %s", run.path, error)
            run.problem = f"The kernel stopped answering: {error}"
            for cell in run.cells:
                if not cell.finished:
                    cell.status = "not_run" if cell.status == "queued" else "interrupted"
        finally:
            if client is not None:
                client.stop_channels()
            run.done.set()
            run.changed.set()

    def _changed(self, run: Run, cell: CellRun) -> None:
        """Wake status waiters; tell the pages holding the notebook, at most every
        SEND_INTERVAL_S per cell while it prints (each frame has all its outputs), and at
        once when it starts or ends."""
        run.changed.set()
        if not self._claimants(run.path):
            return
        now = time.monotonic()
        last = run.sent_at.get(cell.id)
        if cell.finished or last is None or now - last >= SEND_INTERVAL_S:
            self._send(run, cell)
        elif cell.id not in run.send_pending:
            run.send_pending.add(cell.id)
            asyncio.get_running_loop().call_later(
                SEND_INTERVAL_S - (now - last), self._send_pending, run, cell
            )

    def _send_pending(self, run: Run, cell: CellRun) -> None:
        if cell.id in run.send_pending:
            self._send(run, cell)

    def _send(self, run: Run, cell: CellRun) -> None:
        run.send_pending.discard(cell.id)
        run.sent_at[cell.id] = time.monotonic()
        event = {
            "type": "cell",
            "run": run.id,
            "path": run.path,
            "cell_id": cell.id,
            "status": cell.status,
            "execution_count": cell.execution_count,
            "outputs": cell.outputs,
            "executed_hash": source_hash(cell.source)[:HASH_CHARS],
        }
        for listener in self._claimants(run.path):
            listener.send(event)

    def _claimants(self, path: str) -> list[Any]:
        return [listener for listener in self.listeners if path in listener.paths]

    def _keep(self, run: Run) -> None:
        self.runs[run.id] = run
        finished = [r for r in self.runs.values() if r.finished]
        while len(self.runs) > self.max_runs and finished:
            self.runs.pop(finished.pop(0).id, None)

    # -- where outputs land ------------------------------------------------------------------

    async def _land(self, run: Run, cell: CellRun) -> None:
        """The cell's outputs into the notebook: an open Lab page took them already, else
        they are written into the file if the cell still holds the source that ran."""
        if cell.status == "not_run":
            return
        if self._claimants(run.path):
            run.landed[cell.id] = "the notebook open in Lab"
            return
        for _ in range(LANDING_RETRIES):
            try:
                run.landed[cell.id] = await self._land_in_file(run.path, cell)
                return
            except Conflict:
                continue  # written meanwhile (Lab saved it): read it again
            except Exception as error:  # gone, denied, not a notebook any more
                run.landed[cell.id] = f"not saved: {getattr(error, 'message', error)}"
                return
        run.landed[cell.id] = "not saved: the notebook kept changing"

    async def _land_in_file(self, path: str, cell: CellRun) -> str:
        document = await self.files.read(path, format="text")
        book = raw_notebook(document["path"], document["content"])
        target = next((c for c in book["cells"] if c.get("id") == cell.id), None)
        if target is None:
            return "not saved: the cell is no longer in the notebook"
        if joined(target.get("source")) != cell.source:
            return "not saved: the cell was edited while it ran"
        target["outputs"] = copy.deepcopy(cell.outputs)
        target["execution_count"] = cell.execution_count
        terax = target.setdefault("metadata", {}).setdefault("terax", {})
        terax[EXECUTED_KEY] = source_hash(cell.source)[:HASH_CHARS]
        await self.files.write(path, notebook_text(book), etag=document["etag"])
        return "saved in the notebook"
