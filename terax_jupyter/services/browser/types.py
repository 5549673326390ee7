"""What the parts of the browser engine agree on: an accessibility snapshot of a page, the
page operations replay needs, and the engine's refusals.

The engine after the TERX design has two paths. The cold path drives a real page for the agent
(``page.py`` over ``cdp.py``) and records what it did as semantic actions (``ir.py``). The warm
path (``replay.py``) replays recorded actions under a policy, against any ``ReplayPage``: it
re-resolves every target in a fresh snapshot by exact role and name and refuses instead of
guessing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class AXNode:
    """One node of a page's accessibility tree, as the agent and replay see it."""

    ref: str  # stable within one snapshot only ("e12"); what the agent's tools name
    role: str  # ARIA role, lower-case ("button", "textbox", "link", "heading", ...)
    name: str  # accessible name, whitespace collapsed
    depth: int = 0
    value: str | None = None  # current value of a field (never stored by replay)
    backend_node_id: int | None = None  # the DOM node, for the page that made the snapshot
    properties: tuple[tuple[str, str], ...] = ()  # ("checked", "true"), ("disabled", "true")


@dataclass(frozen=True)
class Snapshot:
    """An accessibility snapshot: the page's url and title, and its nodes in document order."""

    url: str
    title: str
    nodes: tuple[AXNode, ...] = field(default_factory=tuple)

    def find(self, role: str, name: str) -> list[AXNode]:
        """Nodes with exactly this role and name (no fuzzy matching: replay refuses instead)."""
        return [n for n in self.nodes if n.role == role and n.name == name]

    def by_ref(self, ref: str) -> AXNode | None:
        return next((n for n in self.nodes if n.ref == ref), None)

    def structure(self) -> list[str]:
        """The page's shape for drift checks: role and name of each node, no values."""
        return [f"{n.depth}:{n.role}:{n.name}" for n in self.nodes]

    def structural_hash(self) -> str:
        digest = hashlib.sha256("\n".join(self.structure()).encode("utf-8"))
        return digest.hexdigest()

    def render(self, limit: int = 400) -> str:
        """The snapshot as the model reads it: one indented line per node with its ref."""
        lines = [f"url: {self.url}", f"title: {self.title}"]
        for node in self.nodes[:limit]:
            extra = "".join(f" [{k}={v}]" for k, v in node.properties)
            value = f' value="{node.value}"' if node.value else ""
            lines.append(
                f'{"  " * node.depth}- {node.role} "{node.name}"{value}{extra} [ref={node.ref}]'
            )
        if len(self.nodes) > limit:
            lines.append(f"... {len(self.nodes) - limit} more nodes")
        return "\n".join(lines)


class ReplayPage(Protocol):
    """The page operations the warm path uses; ``page.BrowserPage`` implements them over CDP."""

    async def navigate(self, url: str) -> None:
        """Load ``url`` and wait for the load event (raises BrowserError on failure)."""

    async def snapshot(self) -> Snapshot:
        """A fresh accessibility snapshot."""

    async def click(self, node: AXNode) -> None:
        """Click the node of the latest snapshot (scrolled into view, by its DOM node)."""

    async def type_text(self, node: AXNode, text: str) -> None:
        """Focus the node, replace its value with ``text`` as typed input."""

    async def text_contains(self, text: str) -> bool:
        """Whether the page's visible text contains ``text``."""

    async def selector_exists(self, selector: str) -> bool:
        """Whether a CSS selector matches an element."""
