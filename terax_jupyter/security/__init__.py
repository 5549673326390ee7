"""The security layer: every path, command and URL a manager uses passes through here."""

from __future__ import annotations

from dataclasses import dataclass

from terax_jupyter.security.audit import AuditLog
from terax_jupyter.security.commands import check_command
from terax_jupyter.security.denylist import DenyList
from terax_jupyter.security.paths import Access, CheckedPath, PathGuard
from terax_jupyter.security.redact import Redactor
from terax_jupyter.security.workspace import WorkspaceRoot, WorkspaceRoots

__all__ = [
    "Access",
    "AuditLog",
    "CheckedPath",
    "DenyList",
    "PathGuard",
    "Redactor",
    "SecurityLayer",
    "WorkspaceRoot",
    "WorkspaceRoots",
    "check_command",
]


@dataclass
class SecurityLayer:
    """The security objects one server shares between its managers."""

    paths: PathGuard
    roots: WorkspaceRoots
    deny: DenyList
    redactor: Redactor
    audit: AuditLog
