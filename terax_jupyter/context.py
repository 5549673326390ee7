"""The objects one server shares between its handlers: security layer and managers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    ai: AiManager
    preview: PreviewManager
    browser: BrowserManager

    def on_roots_changed(self) -> None:
        self.search.invalidate()

    async def close(self) -> None:
        await self.ai.close()
        await self.browser.close()
        await self.pty.close_all()
        await self.git.close()
        self.watch.stop()
        await self.search.close()
