"""The objects one server shares between its handlers: security layer and managers.

The agent and the headless browser are built on first use (``build_ai``, ``build_browser``):
their modules and state stay out of an idle server, which a hub runs by the hundred.
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
    preview: PreviewManager
    build_ai: Callable[[TeraxContext], AiManager]
    build_browser: Callable[[TeraxContext], BrowserManager]
    _built: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ai(self) -> AiManager:
        return self._area("ai", self.build_ai)

    @property
    def browser(self) -> BrowserManager:
        return self._area("browser", self.build_browser)

    def built(self, area: str) -> Any | None:
        """The manager of ``area`` if something has used it, else None (nothing is built)."""
        return self._built.get(area)

    def _area(self, area: str, build: Callable[[TeraxContext], Any]) -> Any:
        # Handlers run on the server's one event loop, so two first uses cannot race.
        manager = self._built.get(area)
        if manager is None:
            manager = self._built[area] = build(self)
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
