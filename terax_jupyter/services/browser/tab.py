"""A recording tab: one browser page plus the recorder of what is done on it (the cold path).

The agent's browser tools, the REST API and the evals all act through a ``RecordingTab``, so a
flow is recorded the same way wherever it is driven: the agent names targets by the ``ref`` of
the latest snapshot; each action is recorded as the semantic IR (role and name, never a ref or
coordinates) only after it succeeded; typed text is recorded as a ``{{placeholder}}`` when the
caller names the input it stands for, and anything replay could not reproduce (typed literals,
raw keys, coordinate clicks, scripts) makes the recording non-cacheable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import InvalidRequest, NotFound
from terax_jupyter.services.browser.ir import Recorder, is_identifier

if TYPE_CHECKING:
    from terax_jupyter.services.browser.ir import Recording
    from terax_jupyter.services.browser.page import BrowserPage
    from terax_jupyter.services.browser.types import AXNode, Snapshot


class RecordingTab:
    """A page and its recording. Not safe for concurrent use: callers serialize (one agent
    step at a time, or the manager's per-tab lock)."""

    def __init__(self, page: BrowserPage) -> None:
        self.page = page
        self.recorder = Recorder()
        self.last: Snapshot | None = None
        page.raw_used = False

    def restart_recording(self) -> None:
        """Forget what was recorded so far (a new flow starts here)."""
        self.recorder = Recorder()
        self.page.raw_used = False

    @property
    def recording(self) -> Recording:
        # The page's raw flag is read here, so that a raw operation done on the page by
        # anyone (not only through this tab's methods) keeps the flow from being cached.
        return self.recorder.finish(raw_used=bool(getattr(self.page, "raw_used", False)))

    async def snapshot(self) -> Snapshot:
        self.last = await self.page.snapshot()
        return self.last

    async def open(self, url: str) -> Snapshot:
        """Navigate (recorded as ``Navigate``) and return the new page's snapshot."""
        await self.page.navigate(url)
        self.recorder.navigate(url)
        return await self.snapshot()

    async def click(
        self, ref: str | None = None, *, role: str | None = None, name: str | None = None
    ) -> Snapshot:
        """Click the element ``ref`` of the latest snapshot, or the one element with exactly
        ``role`` and ``name`` in a fresh one."""
        before, node = await self._target(ref, role, name)
        await self.page.click(node)
        self.recorder.click(node, before=before)
        return await self.snapshot()

    async def type(
        self,
        ref: str | None,
        text: str,
        *,
        input_name: str | None = None,
        role: str | None = None,
        name: str | None = None,
    ) -> Snapshot:
        """Type ``text`` into the node; with ``input_name`` the recording says
        ``{{input_name}}`` (a value given again at replay), otherwise it cannot be replayed."""
        if input_name is not None and not is_identifier(input_name):
            raise InvalidRequest(
                "An input name is letters, digits and '_' (not starting with a digit).",
                reason="invalid_input_name",
            )
        before, node = await self._target(ref, role, name)
        await self.page.type_text(node, text)
        if input_name is None:
            self.recorder.type(node, text, before=before)
        else:
            self.recorder.declare_input(input_name)
            self.recorder.type(node, "{{" + input_name + "}}", before=before, typed=text)
        return await self.snapshot()

    async def wait(self, **condition: Any) -> Snapshot:
        await self.page.wait_for(**condition)
        return await self.snapshot()

    async def press_key(self, key: str) -> Snapshot:
        await self.page.press_key(key)
        self.recorder.raw_input(f"the key {key}")
        return await self.snapshot()

    async def click_at(self, x: float, y: float) -> Snapshot:
        await self.page.click_at(x, y)
        self.recorder.coordinate_click(x, y)
        return await self.snapshot()

    async def evaluate(self, expression: str) -> Any:
        self.recorder.evaluate(expression)
        return await self.page.evaluate(expression)

    async def _target(
        self, ref: str | None, role: str | None, name: str | None
    ) -> tuple[Snapshot, AXNode]:
        if ref is not None and (role is not None or name is not None):
            raise InvalidRequest("Name an element by ref, or by role and name; not both.")
        if ref is None:
            if not role or name is None:
                raise InvalidRequest("Name an element by its ref, or by role and name.")
            before = await self.snapshot()
            matches = before.find(role, name)
            if len(matches) != 1:
                raise NotFound(
                    f"{len(matches) or 'No'} {role} elements are named {name!r} on the page"
                    + ("; use a ref from the snapshot." if matches else "."),
                    reason="target_ambiguous" if matches else "target_missing",
                )
            return before, matches[0]
        before = self.last if self.last is not None else await self.snapshot()
        node = before.by_ref(ref)
        if node is None:
            raise NotFound(
                f"No element {ref!r} in the latest snapshot; take a snapshot and use its refs.",
                reason="ref_not_found",
            )
        return before, node
