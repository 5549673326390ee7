"""The workspace-roots registry: the only directories Terax tools may touch."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from terax_jupyter.exceptions import (
    AccessDenied,
    AlreadyExists,
    InvalidPath,
    NotFound,
    PathDenied,
    ProtectedPath,
)
from terax_jupyter.security.normalize import reject_unusable
from terax_jupyter.security.storage import write_private_file

if TYPE_CHECKING:
    from collections.abc import Iterable

    from terax_jupyter.security.audit import AuditLog
    from terax_jupyter.security.denylist import DenyList

RootKind = Literal["server", "admin", "user"]


@dataclass(frozen=True)
class WorkspaceRoot:
    path: str
    kind: RootKind
    added_by: str | None = None
    added_at: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return asdict(self)


class WorkspaceRoots:
    """Server root, admin roots, and roots users added on purpose (persisted, audited).

    Home is never a root unless someone adds it explicitly.
    """

    def __init__(
        self,
        server_root: str,
        deny: DenyList,
        *,
        admin_roots: Iterable[str] = (),
        store_path: str | None = None,
        audit: AuditLog | None = None,
        allow_user_roots: bool = True,
    ) -> None:
        self._deny = deny
        self._store_path = store_path
        self._audit = audit
        self.allow_user_roots = allow_user_roots
        # Reentrant: add() holds it across its containment check, which reads the roots too.
        self._lock = threading.RLock()
        self._roots: list[WorkspaceRoot] = [WorkspaceRoot(_canonical_dir(server_root), "server")]
        # Stored user roots that are not active now (a folder that vanished, an unmounted
        # drive): kept in the store so that saving other changes does not forget them.
        self._dormant: list[WorkspaceRoot] = []
        for root in admin_roots:
            self._append(WorkspaceRoot(_canonical_dir(root), "admin"))
        # With user roots turned off, roots users added earlier are not honoured either.
        for stored in self._load() if allow_user_roots else []:
            try:
                canonical = _canonical_dir(stored.path)
                self._refuse_unfit(canonical)
            except (InvalidPath, NotFound):
                self._dormant.append(stored)
                continue
            except AccessDenied:
                # The store is a file: a root it names must still pass the rules add() applies.
                continue
            self._append(WorkspaceRoot(canonical, "user", stored.added_by, stored.added_at))

    @property
    def server_root(self) -> str:
        return self._roots[0].path

    def all(self) -> list[WorkspaceRoot]:
        with self._lock:
            return list(self._roots)

    def containing(self, canonical: str) -> WorkspaceRoot | None:
        """The innermost root that holds ``canonical`` (itself included)."""
        best: WorkspaceRoot | None = None
        for root in self.all():
            if is_within(canonical, root.path) and (
                best is None or len(root.path) > len(best.path)
            ):
                best = root
        return best

    def _absolute(self, path: str) -> str:
        """``~`` expanded; a relative path is relative to the server root, as everywhere."""
        expanded = os.path.expanduser(path)
        return expanded if os.path.isabs(expanded) else os.path.join(self.server_root, expanded)

    def is_root(self, canonical: str) -> bool:
        key = os.path.normcase(canonical)
        return any(os.path.normcase(root.path) == key for root in self.all())

    def add(self, path: str, *, user: str | None) -> WorkspaceRoot:
        """Add a root by an explicit, authorized action; the action is recorded."""
        if not self.allow_user_roots:
            raise AccessDenied(
                "The administrator does not allow adding workspace roots.", reason="roots_locked"
            )
        reject_unusable(path)
        canonical = _canonical_dir(self._absolute(path))
        self._refuse_unfit(canonical)
        root = WorkspaceRoot(
            canonical, "user", user, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        )
        with self._lock:
            existing = self.containing(canonical)
            if existing is not None:
                raise AlreadyExists(
                    f"{canonical} is already inside the workspace root {existing.path}."
                )
            self._dormant = [
                r for r in self._dormant if os.path.normcase(r.path) != os.path.normcase(canonical)
            ]
            self._roots.append(root)
            self._save()
        if self._audit is not None:
            self._audit.record("workspace.root_added", user=user, path=canonical)
        return root

    def remove(self, path: str, *, user: str | None) -> None:
        reject_unusable(path)
        canonical = os.path.realpath(self._absolute(path))
        key = os.path.normcase(canonical)
        with self._lock:
            matches = [r for r in self._roots + self._dormant if os.path.normcase(r.path) == key]
            if not matches:
                raise NotFound(f"{canonical} is not a workspace root.")
            if matches[0].kind != "user":
                raise ProtectedPath(
                    f"{canonical} is configured by the server or the administrator."
                )
            for group in (self._roots, self._dormant):
                if matches[0] in group:
                    group.remove(matches[0])
            self._save()
        if self._audit is not None:
            self._audit.record("workspace.root_removed", user=user, path=canonical)

    def _refuse_unfit(self, canonical: str) -> None:
        if os.path.dirname(canonical) == canonical:
            raise ProtectedPath("A filesystem root cannot be a workspace root.")
        denial = self._deny.check(canonical, write=False)
        if denial is not None:
            raise PathDenied(f"{canonical} cannot be a workspace root: {denial.explain()}.")

    def _append(self, root: WorkspaceRoot) -> None:
        if not any(os.path.normcase(r.path) == os.path.normcase(root.path) for r in self._roots):
            self._roots.append(root)

    def _load(self) -> list[WorkspaceRoot]:
        if not self._store_path:
            return []
        try:
            with open(self._store_path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (FileNotFoundError, ValueError):
            return []
        roots = []
        for item in data.get("roots", []) if isinstance(data, dict) else []:
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                roots.append(
                    WorkspaceRoot(item["path"], "user", item.get("added_by"), item.get("added_at"))
                )
        return roots

    def _save(self) -> None:
        if not self._store_path:
            return
        user_roots = [r.to_dict() for r in self._roots + self._dormant if r.kind == "user"]
        write_private_file(self._store_path, json.dumps({"roots": user_roots}, indent=2))


def _canonical_dir(path: str) -> str:
    canonical = os.path.realpath(path)
    if not os.path.exists(canonical):
        raise NotFound(f"{path} does not exist.")
    if not os.path.isdir(canonical):
        raise InvalidPath(f"{path} is not a directory.")
    return canonical


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it (both canonical)."""
    path_key, root_key = os.path.normcase(path), os.path.normcase(root)
    if path_key == root_key:
        return True
    prefix = root_key if root_key.endswith(os.sep) else root_key + os.sep
    return path_key.startswith(prefix)
