"""Chromium's accessibility tree (``Accessibility.getFullAXTree``) as ``AXNode`` lines: roles
and names the agent reads and replay matches exactly, in document order, with refs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from terax_jupyter.services.browser.types import AXNode

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_NODES = 5000
MAX_NAME = 400
MAX_VALUE = 2000

# Chromium's own role names, as the agent and replay read them.
ROLE_NAMES = {
    "RootWebArea": "document",
    "WebArea": "document",
    "StaticText": "text",
    "LabelText": "label",
    "GenericContainer": "generic",
}
# Pieces of text layout, never worth a line.
SKIPPED_ROLES = frozenset({"InlineTextBox", "LineBreak", "ListMarker"})
# Containers that only matter when they carry a name.
UNNAMED_NOISE = frozenset({"none", "presentation", "generic", "label", "text"})
VALUE_ROLES = frozenset(
    {"textbox", "searchbox", "combobox", "spinbutton", "slider", "progressbar", "meter"}
)
# Properties shown whatever their value, and ones shown only when set.
STATE_PROPERTIES = ("checked", "pressed", "expanded")
FLAG_PROPERTIES = ("selected", "disabled", "readonly", "required", "invalid", "focused", "modal")


def clipped_text(value: object, limit: int) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _ax_value(field: object) -> object:
    return field.get("value") if isinstance(field, dict) else None


def _properties(node: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for item in node.get("properties") or ():
        name = item.get("name")
        value = _ax_value(item.get("value"))
        if value is None:
            continue
        text = str(value).lower() if isinstance(value, bool) else str(value)
        shown = name == "level" or name in STATE_PROPERTIES
        if shown or (name in FLAG_PROPERTIES and text not in ("false", "", "0")):
            found[name] = text
    order = ("level", *STATE_PROPERTIES, *FLAG_PROPERTIES)
    return tuple((name, found[name]) for name in order if name in found)


def ax_nodes(raw: Iterable[dict[str, Any]], *, limit: int = MAX_NODES) -> list[AXNode]:
    """``Accessibility.getFullAXTree`` nodes -> AXNodes in document order, refs e1, e2, ...

    Left out (their children move up): ignored nodes, pieces of text layout, unnamed generic
    containers, and text that repeats its parent: a button's label, a field's value.
    """
    raw = list(raw)
    by_id = {n.get("nodeId"): n for n in raw}
    roots = [n for n in raw if n.get("parentId") not in by_id]
    out: list[AXNode] = []
    # (node, depth, nearest kept ancestor's role and name)
    stack: list[tuple[dict[str, Any], int, str, str]] = [(r, 0, "", "") for r in reversed(roots)]
    seen: set[object] = set()
    while stack and len(out) < limit:
        node, depth, parent_role, parent_name = stack.pop()
        if node.get("nodeId") in seen:
            continue  # a malformed tree with a cycle
        seen.add(node.get("nodeId"))
        raw_role = str(_ax_value(node.get("role")) or "none")
        role = ROLE_NAMES.get(raw_role, raw_role.lower())
        name = clipped_text(_ax_value(node.get("name")) or "", MAX_NAME)
        keep = not (
            node.get("ignored")
            or raw_role in SKIPPED_ROLES
            or (role in UNNAMED_NOISE and not name)
            or (role == "text" and (name == parent_name or parent_role in VALUE_ROLES))
        )
        below = (depth, parent_role, parent_name)
        if keep:
            value = _ax_value(node.get("value")) if role in VALUE_ROLES else None
            backend = node.get("backendDOMNodeId")
            out.append(
                AXNode(
                    ref=f"e{len(out) + 1}",
                    role=role,
                    name=name,
                    depth=depth,
                    value=None if value is None else str(value)[:MAX_VALUE],
                    backend_node_id=backend if isinstance(backend, int) else None,
                    properties=_properties(node),
                )
            )
            below = (depth + 1, role, name)
        children = [by_id[c] for c in node.get("childIds") or () if c in by_id]
        stack.extend((child, *below) for child in reversed(children))
    return out
