"""The agent's notebook_create: a new, empty Jupyter notebook for a kernel the server has.

A creation is a file change like write_file's: proposed as a diff, approved by the user,
written through ``FileManager`` (roots, the deny-list) and refused if the path exists, at
proposal and again at apply. Cells are then added with notebook_edit.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import AlreadyExists, InvalidRequest
from terax_jupyter.notebook_view.cells import NOTEBOOK_SUFFIX
from terax_jupyter.services.ai.tools.base import Proposal, Tool, ToolResult, object_schema
from terax_jupyter.services.ai.tools.edits import apply_edit, current_file, edit_proposal
from terax_jupyter.services.ai.tools.files import string_arg

if TYPE_CHECKING:
    from terax_jupyter.services.ai.tools.base import ToolContext

DEFAULT_KERNEL = "python3"


def empty_notebook(kernel: str, display_name: str, language: str) -> str:
    """An nbformat 4.5 notebook with no cells, as Jupyter writes it (indent 1)."""
    document = {
        "cells": [],
        "metadata": {
            "kernelspec": {"display_name": display_name, "language": language, "name": kernel},
            "language_info": {"name": language},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


async def kernel_spec(context: ToolContext, name: str) -> tuple[str, str]:
    """The display name and language of kernel ``name``; an unknown one is refused."""
    specs = await asyncio.to_thread(context.kernels.kernel_specs) if context.kernels else {}
    if not specs:
        # No kernel service (or none installed): the notebook names the kernel asked for.
        return name, "python" if name.startswith("python") else name
    if name not in specs:
        raise InvalidRequest(
            f"There is no kernel named {name!r}; the kernels here are: {', '.join(sorted(specs))}.",
            reason="unknown_kernel",
        )
    return specs[name]


class NotebookCreate(Tool):
    name: ClassVar[str] = "notebook_create"
    description: ClassVar[str] = (
        "Create a new, empty Jupyter notebook (.ipynb) for a kernel (default python3), then "
        "add cells with notebook_edit (insert with after null). Refused if the file exists. "
        "The user approves the new file before it is written."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "path": {
                "type": "string",
                "description": "The new .ipynb file, relative to the workspace root.",
            },
            "kernel": {
                "type": "string",
                "description": f"The kernel's name, e.g. python3 (default {DEFAULT_KERNEL}).",
            },
        },
        ["path"],
    )
    mutating: ClassVar[bool] = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        path = string_arg(arguments, "path")
        if not path.lower().endswith(NOTEBOOK_SUFFIX):
            raise InvalidRequest(
                f"{path} is not a notebook path; a notebook's name ends in {NOTEBOOK_SUFFIX}.",
                reason="not_a_notebook",
            )
        kernel = str(arguments.get("kernel") or DEFAULT_KERNEL).strip() or DEFAULT_KERNEL
        display_name, language = await kernel_spec(context, kernel)
        current = await current_file(context, path, missing_ok=True)
        if current.exists:
            raise AlreadyExists(
                f"{current.path} already exists; change it with notebook_edit.",
                reason="already_exists",
            )
        content = empty_notebook(kernel, display_name, language)
        proposal = edit_proposal(self.name, "write", current, content, {"content": content})
        proposal.summary = f"Create notebook {current.path} ({display_name})"
        return proposal

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        content = string_arg(proposal.payload, "content")
        result = await apply_edit(proposal, context, hunks, lambda _file: content)
        if result.content.startswith("Created "):
            shown = result.data.get("path", "")
            result.content = f"Created the empty notebook {shown}; add cells with notebook_edit."
        return result
