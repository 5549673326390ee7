"""The repositories whose own programs (hooks, filters, fsmonitor) may run: the user's choice.

Like a workspace trust: a repository is untrusted until the user trusts it in the Git panel
(or an administrator lists its folder). The record names the work tree and its git dir, is
kept in a private file (atomic, 0600) in the server's state folder, and every change is
audited. A store that is not private is not honoured: nothing is trusted then.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from terax_jupyter.exceptions import Unavailable
from terax_jupyter.security.storage import read_private_json, write_private_file
from terax_jupyter.security.workspace import is_within

if TYPE_CHECKING:
    from collections.abc import Iterable

    from terax_jupyter.security.audit import AuditLog

log = logging.getLogger(__name__)

TrustSource = Literal["user", "admin"]


@dataclass(frozen=True)
class TrustRecord:
    root: str
    git_dir: str
    source: TrustSource
    trusted_by: str | None = None
    trusted_at: str | None = None
    # device:inode of the git dir when trusted: a repository re-created at the same path
    # (deleted and cloned again, swapped for another) is a new one, not trusted.
    identity: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return asdict(self)


class TrustStore:
    """Trusted repositories: the user's (persisted) and the administrator's folders."""

    def __init__(
        self,
        store_path: str | None,
        *,
        audit: AuditLog | None = None,
        admin_folders: Iterable[str] = (),
    ) -> None:
        self._store_path = store_path
        self._audit = audit
        self._admin_folders = tuple(admin_folders)
        self._lock = threading.Lock()
        self._records: dict[str, TrustRecord] = {r.root: r for r in self._load()}

    def lookup(self, root: str, git_dir: str) -> TrustRecord | None:
        """The trust of the work tree ``root`` whose git dir is ``git_dir`` (both canonical).

        A user's record holds only for the git dir it was given for: a folder replaced by
        another repository (or pointed at another git dir) is not trusted by it.
        """
        for folder in self._admin_folders:
            if is_within(root, folder):
                return TrustRecord(root, git_dir, "admin")
        with self._lock:
            record = self._records.get(root)
        if record is None or record.git_dir != git_dir:
            return None
        return record if record.identity == _identity(git_dir) else None

    def trust(self, root: str, git_dir: str, *, user: str | None) -> TrustRecord:
        record = TrustRecord(
            root,
            git_dir,
            "user",
            user,
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            _identity(git_dir),
        )
        with self._lock:
            self._records[root] = record
            self._save()
        if self._audit is not None:
            self._audit.record("git.repository_trusted", user=user, path=root, git_dir=git_dir)
        return record

    def revoke(self, root: str, *, user: str | None) -> bool:
        """Forget the user's trust of ``root``; False when there was none."""
        with self._lock:
            if self._records.pop(root, None) is None:
                return False
            self._save()
        if self._audit is not None:
            self._audit.record("git.repository_untrusted", user=user, path=root)
        return True

    def admin_trusted(self, root: str) -> bool:
        return any(is_within(root, folder) for folder in self._admin_folders)

    def _load(self) -> list[TrustRecord]:
        if not self._store_path:
            return []
        try:
            data = read_private_json(
                self._store_path, "The git trust store {path} is not valid JSON; ignored."
            )
        except (Unavailable, OSError) as error:
            # Someone else may have written it: trust nothing rather than what it says.
            log.warning("Not honouring the git trust store: %s", error)
            return []
        records = []
        for item in data.get("repositories", []) if isinstance(data, dict) else []:
            if (
                isinstance(item, dict)
                and isinstance(item.get("root"), str)
                and isinstance(item.get("git_dir"), str)
                and os.path.isabs(item["root"])
            ):
                records.append(
                    TrustRecord(
                        item["root"],
                        item["git_dir"],
                        "user",
                        item.get("trusted_by") if isinstance(item.get("trusted_by"), str) else None,
                        item.get("trusted_at") if isinstance(item.get("trusted_at"), str) else None,
                        item.get("identity") if isinstance(item.get("identity"), str) else None,
                    )
                )
        return records

    def _save(self) -> None:
        if not self._store_path:
            return
        rows = [
            {k: v for k, v in record.to_dict().items() if k != "source"}
            for record in self._records.values()
        ]
        write_private_file(self._store_path, json.dumps({"repositories": rows}, indent=2))


def _identity(git_dir: str) -> str | None:
    """device:inode of a git dir (a stat of git's own folder, named by git)."""
    try:
        info = os.stat(git_dir)
    except OSError:
        return None
    return f"{info.st_dev}:{info.st_ino}"
