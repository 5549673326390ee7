"""Saved workflows: a recorded flow kept under a name with its declared inputs, run again later.

Running one goes through the ``Replayer`` like any cached flow (same checks, same refusals);
the caller supplies the page and the scope it is working in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import Conflict, InvalidRequest, NotFound
from terax_jupyter.services.browser.ir import declared_inputs

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from terax_jupyter.services.browser.ir import Recording
    from terax_jupyter.services.browser.policy import ReplayPolicy
    from terax_jupyter.services.browser.replay import Replayer, ReplayResult
    from terax_jupyter.services.browser.store import ReplayStore, SavedWorkflow
    from terax_jupyter.services.browser.types import ReplayPage

MAX_DESCRIPTION = 2000
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 _.\-]{0,78}[A-Za-z0-9_.\-])?")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # a newline is allowed in descriptions


def check_name(name: object) -> str:
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise InvalidRequest(
            "A workflow name is 1 to 80 letters, digits, spaces, '_', '.' or '-', starting with "
            "a letter or digit and not ending with a space.",
            reason="invalid_workflow_name",
        )
    return name


class WorkflowManager:
    """Save, list, get, delete and run named workflows.

    ``save``/``list``/``get``/``delete`` block on SQLite (call them from a worker thread);
    ``run`` is a coroutine and moves its own store access off the event loop.
    """

    def __init__(self, store: ReplayStore, replayer: Replayer) -> None:
        self._store = store
        self._replayer = replayer

    def save(
        self,
        name: str,
        recording: Recording,
        policy: ReplayPolicy,
        *,
        inputs: Sequence[str],
        description: str = "",
        overwrite: bool = False,
        now: float | None = None,
    ) -> SavedWorkflow:
        """Save ``recording`` as ``name``; ``inputs`` must be exactly its placeholders. A
        non-cacheable recording is refused (``non_cacheable``); replacing a workflow needs
        ``overwrite`` and a higher ``workflow_version``."""
        check_name(name)
        recording.require_cacheable()
        names = declared_inputs(recording, list(inputs))
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise InvalidRequest(
                f"A description is text of at most {MAX_DESCRIPTION} characters.",
                reason="invalid_description",
            )
        if _CONTROL.search(description):
            raise InvalidRequest(
                "A description must not contain control characters.", reason="invalid_description"
            )
        if overwrite:
            try:
                existing = self._store.get_workflow(name)
            except NotFound:
                existing = None
            if existing is not None and policy.workflow_version <= existing.policy.workflow_version:
                raise Conflict(
                    f"Workflow {name!r} is at version {existing.policy.workflow_version}; a "
                    "replacement needs a higher workflow_version.",
                    reason="version_not_newer",
                )
        return self._store.save_workflow(
            name,
            recording,
            policy,
            inputs=names,
            description=description,
            overwrite=overwrite,
            now=now,
        )

    def list(self) -> list[SavedWorkflow]:
        return self._store.list_workflows()

    def get(self, name: str) -> SavedWorkflow:
        return self._store.get_workflow(check_name(name))

    def delete(self, name: str) -> None:
        self._store.delete_workflow(check_name(name))

    async def run(
        self,
        name: str,
        page: ReplayPage,
        inputs: Mapping[str, str],
        *,
        task: str,
        scope_id: str,
        workflow_version: int | None = None,
        verifier_token: str | None = None,
        now: float | None = None,
    ) -> ReplayResult:
        """Replay the workflow on ``page`` with ``inputs``, in the caller's ``scope_id`` (and,
        if given, only at ``workflow_version``)."""
        workflow = await asyncio.to_thread(self.get, name)
        expected = dataclasses.replace(
            workflow.policy,
            scope_id=scope_id,
            workflow_version=(
                workflow.policy.workflow_version if workflow_version is None else workflow_version
            ),
        )
        return await self._replayer.replay(
            workflow,
            page,
            inputs,
            task=task,
            policy=expected,
            verifier_token=verifier_token,
            now=now,
        )
