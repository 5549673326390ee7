"""The security layer: every path, command and URL a manager uses passes through here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from terax_jupyter.security.audit import AuditLog
from terax_jupyter.security.commands import check_command
from terax_jupyter.security.denylist import DenyList
from terax_jupyter.security.hardlinks import HardLinkRule
from terax_jupyter.security.network import OutboundPolicy
from terax_jupyter.security.paths import Access, CheckedPath, PathGuard
from terax_jupyter.security.policy import Policy
from terax_jupyter.security.redact import Redactor
from terax_jupyter.security.workspace import WorkspaceRoot, WorkspaceRoots

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "Access",
    "AuditLog",
    "CheckedPath",
    "DenyList",
    "HardLinkRule",
    "OutboundPolicy",
    "PathGuard",
    "Policy",
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
    network: OutboundPolicy
    policy: Policy = field(default_factory=Policy)  # the administrator's (policy.py)

    @classmethod
    def build(
        cls,
        server_root: str,
        state_dir: str,
        *,
        read_only: bool = False,
        extra_roots: Iterable[str] = (),
        allow_user_roots: bool = True,
        extra_deny_patterns: Iterable[str] = (),
        extra_deny_prefixes: Iterable[str] = (),
        extra_write_deny_prefixes: Iterable[str] = (),
        extra_local_hosts: Iterable[str] = (),
        hard_links: str = "stores",
        extra_hard_link_stores: Iterable[str] = (),
        policy: Policy | None = None,
    ) -> SecurityLayer:
        """The layer for one server. ``state_dir`` holds the audit log and the user roots,
        and is itself protected: no Terax tool reads or writes it."""
        redactor = Redactor()
        deny = DenyList(
            extra_patterns=extra_deny_patterns,
            extra_prefixes=[*extra_deny_prefixes, state_dir],
            extra_write_prefixes=extra_write_deny_prefixes,
        )
        audit = AuditLog(os.path.join(state_dir, "audit.jsonl"), redactor)
        roots = WorkspaceRoots(
            server_root,
            deny,
            admin_roots=extra_roots,
            store_path=os.path.join(state_dir, "workspace-roots.json"),
            audit=audit,
            allow_user_roots=allow_user_roots,
        )
        return cls(
            paths=PathGuard(
                roots,
                deny,
                read_only=read_only,
                hard_links=HardLinkRule.build(hard_links, extra_hard_link_stores),
            ),
            roots=roots,
            deny=deny,
            redactor=redactor,
            audit=audit,
            network=OutboundPolicy.build(extra_local_hosts),
            policy=policy or Policy(),
        )
