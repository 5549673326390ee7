"""The objects one server shares between its handlers: security layer and managers.

The agent and the headless browser are built on first use (``builders``, from their areas'
factories in ``services/<area>/__init__.py``): their modules and state stay out of an idle
server, which a hub runs by the hundred.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.manager import AiManager
    from terax_jupyter.services.browser.manager import BrowserManager
    from terax_jupyter.services.fs.grep import GrepSearch
    from terax_jupyter.services.fs.manager import FileManager
    from terax_jupyter.services.fs.search import FileSearch
    from terax_jupyter.services.fs.watch import WatchService
    from terax_jupyter.services.git.manager import GitManager
    from terax_jupyter.services.kernels.runner import KernelRunner
    from terax_jupyter.services.preview.manager import PreviewManager
    from terax_jupyter.services.pty.manager import PtyManager
    from terax_jupyter.services.secrets.manager import SecretsManager


@dataclass
class TeraxContext:
    security: SecurityLayer
    files: FileManager
    search: FileSearch
    grep: GrepSearch
    watch: WatchService
    pty: PtyManager
    git: GitManager
    secrets: SecretsManager
    kernels: KernelRunner
    preview: PreviewManager
    # Area name ("ai", "browser") -> its manager, built from this context on first use.
    builders: dict[str, Callable[[TeraxContext], Any]]
    _built: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ai(self) -> AiManager:
        ai: AiManager = self._area("ai")
        return ai

    @property
    def browser(self) -> BrowserManager:
        browser: BrowserManager = self._area("browser")
        return browser

    def built(self, area: str) -> Any | None:
        """The manager of ``area`` if something has used it, else None (nothing is built)."""
        return self._built.get(area)

    def _area(self, area: str) -> Any:
        # Handlers run on the server's one event loop, so two first uses cannot race.
        manager = self._built.get(area)
        if manager is None:
            manager = self._built[area] = self.builders[area](self)
        return manager

    def on_roots_changed(self) -> None:
        self.search.invalidate()

    async def close(self) -> None:
        ai, browser = self.built("ai"), self.built("browser")
        if ai is not None:
            await ai.close()
        if browser is not None:
            await browser.close()
        await self.pty.close_all()
        await self.git.close()
        self.watch.stop()
        await self.search.close()
