"""File operations on checked paths, verified at the moment of use.

The guard's check and the operation are separated in time; a symlink planted in
between must not redirect the operation. So every operation opens the checked
parent directory without following links, proves the opened descriptor is the
checked directory, and works relative to that descriptor (``*at`` system calls)
with ``O_NOFOLLOW`` on the final name. Where the platform has no ``*at`` calls
(Windows) the descriptor is compared with a fresh ``stat`` instead.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import secrets
import shutil
import stat
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from terax_jupyter.exceptions import (
    AccessDenied,
    AlreadyExists,
    InvalidPath,
    InvalidRequest,
    NotEmpty,
    NotFound,
    PathChanged,
    TooLarge,
    Unsupported,
)
from terax_jupyter.security.paths import Access
from terax_jupyter.security.workspace import is_within as _is_within

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from terax_jupyter.security.hardlinks import HardLinkRule
    from terax_jupyter.security.paths import CheckedPath

P = ParamSpec("P")
R = TypeVar("R")
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_AT_CALLS = os.name == "posix" and os.open in os.supports_dir_fd and os.unlink in os.supports_dir_fd
_LINUX = sys.platform.startswith("linux")
# A rewrite never keeps set-user-ID or set-group-ID (the kernel drops them on a plain write too).
_PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID
# Ranges of one file this close together are read with one system call.
_ONE_READ = 64 * 1024
# What one step of a copy moves (a buffer of this size where the kernel cannot copy).
_COPY_CHUNK = 1 << 20
# copy_file_range and sendfile say so with these when they cannot copy between two files.
_NO_KERNEL_COPY = frozenset(
    {errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF}
)
# Room left in a 255-byte name for ".<name>.terax-xxxxxxxx.tmp".
_TEMP_STEM_BYTES = 200


@dataclass(frozen=True)
class OpenFile:
    """File content to stream from an open, verified descriptor (from its offset to its end)."""

    fd: int


@dataclass(frozen=True)
class EntryInfo:
    name: str
    kind: str  # "file" | "directory" | "symlink" | "other"
    size: int
    mtime_ns: int
    mode: int
    target_kind: str | None = None


def no_permission(path: str, verb: str = "opened") -> AccessDenied:
    """The refusal for a path the server's Unix account may not open or change (EACCES,
    EPERM): the operating system's answer, so 403 ``permission_denied``, not a server fault."""
    return AccessDenied(
        f"{path} cannot be {verb}: the Unix account this server runs as ({_account()}) "
        "has no permission to.",
        reason="permission_denied",
    )


def _refused_by_os(function: Callable[P, R]) -> Callable[P, R]:
    """A change the operating system refuses (a folder the account may not write) is 403
    ``permission_denied`` naming the path changed, not a 500."""

    @functools.wraps(function)
    def change(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except PermissionError:
            checked = args[0]
            raise no_permission(getattr(checked, "path", str(checked)), "changed") from None

    return change


def _account() -> str:
    if not hasattr(os, "getuid"):  # Windows: the message names no account
        return "the server's user"
    try:
        import pwd  # POSIX only

        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid without a name (containers)
        return f"uid {os.getuid()}"


def stat_path(checked: CheckedPath) -> os.stat_result:
    if checked.is_root:
        with open_directory(checked.path) as fd:
            return os.fstat(fd) if fd is not None else os.stat(checked.path)
    with _parent_fd(checked) as (parent_fd, name):
        try:
            info = os.stat(
                name if _AT_CALLS else checked.path, dir_fd=parent_fd, follow_symlinks=False
            )
        except FileNotFoundError:
            raise NotFound(f"{checked.path} does not exist.") from None
        except PermissionError:
            raise no_permission(checked.path) from None
        # A link where the guard resolved every link came after the check (409, not "not a
        # folder" or the link's own metadata).
        _refuse_new_link(checked, info)
        return info


def is_directory(checked: CheckedPath) -> bool:
    """Whether the checked path is a folder (NotFound if nothing is there)."""
    return stat.S_ISDIR(stat_path(checked).st_mode)


def read_bytes(checked: CheckedPath, limit: int) -> tuple[bytes, os.stat_result]:
    """The whole file (a regular file, at most ``limit`` bytes) and its stat at open time.

    For a path checked for reading, a file with several names is refused unless the
    hard-link rule allows it (``security.hardlinks``). A path checked for writing is read
    only to be compared before it is replaced (``write_atomic`` gives the name a file of
    its own), so nothing read that way may be returned to a client.
    """
    with _open_file(checked, os.O_RDONLY) as fd:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise Unsupported(f"{checked.path} is {kind}.", reason="not_a_file")
        if checked.access is Access.READ:
            checked.hard_links.check(checked.path, info)
        if info.st_size > limit:
            raise TooLarge(
                f"{checked.path} is {_human(info.st_size)}; "
                f"files over {_human(limit)} are not opened."
            )
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise TooLarge(f"{checked.path} grew past {_human(limit)} while it was read.")
        return data, info


def list_directory(checked: CheckedPath) -> list[EntryInfo]:
    with open_directory(checked.path) as fd:
        entries = []
        with os.scandir(fd if _AT_CALLS else checked.path) as iterator:
            for entry in iterator:
                try:
                    entries.append(_entry_info(entry))
                except FileNotFoundError:
                    # Removed between the listing and its stat: it is no longer there.
                    continue
        return entries


@_refused_by_os
def write_atomic(
    checked: CheckedPath, data: bytes | OpenFile, *, mode: int | None = None
) -> os.stat_result:
    """Replace (or create) a file: temp file beside it, fsync, rename. Keeps the old mode."""
    with _parent_fd(checked) as (parent_fd, name):
        existing = _lstat_at(parent_fd, name, checked)
        if existing is not None and stat.S_ISLNK(existing.st_mode):
            raise PathChanged(f"{checked.path} became a symbolic link after it was checked.")
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise InvalidRequest(f"{checked.path} is a directory.", reason="is_directory")
        file_mode = (
            mode
            if mode is not None
            else (stat.S_IMODE(existing.st_mode) if existing is not None else _default_file_mode())
        )
        temp_name = _write_temp(parent_fd, checked, name, data, file_mode)
        try:
            _replace(parent_fd, temp_name, name, checked)
        except BaseException:
            _unlink_quietly(parent_fd, temp_name, checked)
            raise
        _fsync_directory(parent_fd)
        return os.stat(name if _AT_CALLS else checked.path, dir_fd=parent_fd, follow_symlinks=False)


@_refused_by_os
def create_file(
    checked: CheckedPath, data: bytes | OpenFile, *, mode: int | None = None
) -> os.stat_result:
    """Create a new file with ``data``; AlreadyExists if anything has the name. Atomic."""
    with _parent_fd(checked) as (parent_fd, name):
        existing = _lstat_at(parent_fd, name, checked)
        if existing is not None:
            _refuse_new_link(checked, existing)
            raise AlreadyExists(f"{checked.path} already exists.")
        file_mode = mode if mode is not None else _default_file_mode()
        temp_name = _write_temp(parent_fd, checked, name, data, file_mode)
        try:
            _link_no_replace(parent_fd, temp_name, name, checked)
        finally:
            _unlink_quietly(parent_fd, temp_name, checked)
        _fsync_directory(parent_fd)
        return os.stat(name if _AT_CALLS else checked.path, dir_fd=parent_fd, follow_symlinks=False)


@_refused_by_os
def make_directory(checked: CheckedPath, *, parents: bool = False) -> None:
    """Create a directory. With ``parents``, each missing level is created and verified."""
    missing: list[str] = []
    probe = checked.path
    while not os.path.lexists(probe):
        missing.append(os.path.basename(probe))
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not missing:
        # lexists followed every link on the way: only a path still its canonical self exists.
        if os.path.realpath(checked.path) != checked.path:
            raise PathChanged(f"{checked.path} changed after it was checked.")
        raise AlreadyExists(f"{checked.path} already exists.")
    if not _is_within(probe, checked.root.path):
        raise PathChanged(f"{checked.path} is no longer inside its workspace root.")
    with open_directory(probe):
        # Prove the deepest existing folder is the checked one before saying anything about it.
        pass
    if len(missing) > 1 and not parents:
        raise NotFound(f"The parent folder of {checked.path} does not exist.")
    current = probe
    for name in reversed(missing):
        with open_directory(current) as fd:
            try:
                os.mkdir(name if _AT_CALLS else os.path.join(current, name), 0o777, dir_fd=fd)
            except FileExistsError:
                raise AlreadyExists(f"{os.path.join(current, name)} already exists.") from None
        current = os.path.join(current, name)


@_refused_by_os
def rename(source: CheckedPath, target: CheckedPath, *, overwrite: bool) -> None:
    if target.path != source.path and _is_within(target.path, source.path):
        raise InvalidRequest("A folder cannot be moved into itself.", reason="move_into_self")
    with (
        _parent_fd(source) as (source_fd, source_name),
        _parent_fd(target) as (target_fd, target_name),
    ):
        info = _lstat_at(source_fd, source_name, source)
        if info is None:
            raise NotFound(f"{source.path} does not exist.")
        _refuse_new_link(source, info)
        existing = _lstat_at(target_fd, target_name, target)
        if existing is not None and not overwrite:
            raise AlreadyExists(f"{target.path} already exists.")
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise AlreadyExists(f"{target.path} is a directory; it is not replaced.")
        if _AT_CALLS:
            os.replace(source_name, target_name, src_dir_fd=source_fd, dst_dir_fd=target_fd)
        else:
            os.replace(source.path, target.path)
        _fsync_directory(target_fd)


@_refused_by_os
def copy(
    source: CheckedPath,
    target: CheckedPath,
    *,
    overwrite: bool,
    skip: Callable[[str], bool],
) -> int:
    """Copy a file or a directory tree; symlinks are copied as links. Returns entries copied.

    ``skip`` receives each source path inside a tree and the path it would be copied
    to; an entry is left out when either is protected.
    """
    info = stat_path(source)
    if stat.S_ISDIR(info.st_mode):
        if os.path.lexists(target.path):
            raise AlreadyExists(f"{target.path} already exists.")
        if _is_within(target.path, source.path):
            raise InvalidRequest("A folder cannot be copied into itself.", reason="copy_into_self")
        make_directory(target)
        return 1 + _copy_tree(source.path, target.path, skip, source.hard_links)
    if stat.S_ISLNK(info.st_mode):
        _refuse_new_link(source, info)
        with _parent_fd(source) as (source_fd, source_name):
            link = os.readlink(source_name if _AT_CALLS else source.path, dir_fd=source_fd)
        with _parent_fd(target) as (target_fd, target_name):
            existing = _lstat_at(target_fd, target_name, target)
            if existing is not None and (not overwrite or stat.S_ISDIR(existing.st_mode)):
                raise AlreadyExists(f"{target.path} already exists.")
            # A new link under a temporary name, then renamed: the target is replaced whole.
            temp_name = f".{_temp_stem(target_name)}.terax-{secrets.token_hex(4)}.tmp"
            os.symlink(
                link,
                temp_name if _AT_CALLS else os.path.join(target.parent, temp_name),
                dir_fd=target_fd,
            )
            try:
                _replace(target_fd, temp_name, target_name, target)
            except BaseException:
                _unlink_quietly(target_fd, temp_name, target)
                raise
        return 1
    # Streamed from the verified descriptor to the temp file in bounded chunks: a copy
    # of a file of any size costs the server no more memory than a small one.
    with _open_file(source, os.O_RDONLY) as reader:
        info = os.fstat(reader)
        if not stat.S_ISREG(info.st_mode):
            raise Unsupported(f"{source.path} is not a regular file.", reason="not_a_file")
        if source.access is Access.READ:
            source.hard_links.check(source.path, info)  # the rule read_bytes applies
        content = OpenFile(reader)
        if overwrite:
            write_atomic(target, content, mode=stat.S_IMODE(info.st_mode))
        else:
            create_file(target, content, mode=stat.S_IMODE(info.st_mode))
    return 1


@_refused_by_os
def delete(checked: CheckedPath, *, recursive: bool) -> None:
    with _parent_fd(checked) as (parent_fd, name):
        info = _lstat_at(parent_fd, name, checked)
        if info is None:
            raise NotFound(f"{checked.path} does not exist.")
        _refuse_new_link(checked, info)
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(name if _AT_CALLS else checked.path, dir_fd=parent_fd)
        elif recursive:
            if _AT_CALLS and sys.version_info >= (3, 11):
                shutil.rmtree(name, dir_fd=parent_fd)
            else:
                shutil.rmtree(checked.path)
        else:
            try:
                os.rmdir(name if _AT_CALLS else checked.path, dir_fd=parent_fd)
            except OSError as error:
                if error.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise NotEmpty(f"{checked.path} is not empty; delete it recursively.") from None
                raise
        _fsync_directory(parent_fd)


# -- verified descriptors ----------------------------------------------------------------


@contextlib.contextmanager
def open_directory(path: str) -> Iterator[int | None]:
    """A descriptor of ``path`` proven to be ``path`` (None where ``*at`` calls do not exist)."""
    if not _AT_CALLS:
        if not os.path.isdir(path) or os.path.islink(path):
            raise PathChanged(f"{path} is no longer a directory.")
        yield None
        return
    fd = _open_verified_directory(path)
    try:
        yield fd
    finally:
        os.close(fd)


def _open_verified_directory(path: str) -> int:
    """A descriptor of the folder ``path`` names, proven to be it (the caller closes it)."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        raise NotFound(f"{path} does not exist.") from None
    except PermissionError:
        raise no_permission(path) from None
    except OSError as error:
        if error.errno == errno.ENOTDIR and not os.path.islink(path):
            # A path through a file ("README.md/x"): nothing there, not an attack.
            raise NotFound(f"{path} is not a folder.") from None
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PathChanged(f"{path} is no longer the directory that was checked.") from None
        raise
    try:
        _verify_descriptor(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _parent_fd(checked: CheckedPath) -> Iterator[tuple[int | None, str]]:
    if checked.is_root:
        raise InvalidRequest(f"{checked.path} is a workspace root.", reason="is_root")
    with open_directory(checked.parent) as fd:
        yield fd, checked.name


@contextlib.contextmanager
def _open_file(checked: CheckedPath, flags: int) -> Iterator[int]:
    with _parent_fd(checked) as (parent_fd, name):
        open_flags = flags | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY
        try:
            fd = os.open(name if _AT_CALLS else checked.path, open_flags, dir_fd=parent_fd)
        except FileNotFoundError:
            raise NotFound(f"{checked.path} does not exist.") from None
        except IsADirectoryError:
            raise Unsupported(f"{checked.path} is a directory.", reason="not_a_file") from None
        except PermissionError:
            raise no_permission(checked.path) from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise PathChanged(
                    f"{checked.path} became a symbolic link after it was checked."
                ) from None
            raise
        try:
            if not _AT_CALLS:
                _verify_descriptor(fd, checked.path)
            yield fd
        finally:
            os.close(fd)


def _verify_descriptor(fd: int, expected: str) -> None:
    actual = _descriptor_path(fd)
    if actual is not None:
        if actual != expected and os.path.normcase(actual) != os.path.normcase(expected):
            raise PathChanged(f"{expected} changed while it was being opened.")
        return
    try:
        opened, current = os.fstat(fd), os.stat(expected)
    except FileNotFoundError:
        raise PathChanged(f"{expected} changed while it was being opened.") from None
    if (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino):
        raise PathChanged(f"{expected} changed while it was being opened.")
    # The stat above followed any link on the way; without the descriptor's own path,
    # only a path that is still its canonical self proves no folder on it became a link.
    if os.path.normcase(os.path.realpath(expected)) != os.path.normcase(expected):
        raise PathChanged(f"{expected} changed while it was being opened.")


def _descriptor_path(fd: int) -> str | None:
    if _LINUX:
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
    if sys.platform == "darwin":
        import fcntl  # macOS only

        try:
            raw = fcntl.fcntl(fd, getattr(fcntl, "F_GETPATH", 50), b"\0" * 1024)
        except OSError:
            return None
        return os.fsdecode(raw.split(b"\0", 1)[0])
    return None


# -- names a listing found -----------------------------------------------------------------


class ListedFiles:
    """Files a listing of a checked folder named (ripgrep's output, a file index, a watch
    event), looked at through descriptors proven to be ``<folder>/<relative>`` now.

    A listing tool reads by path: a folder swapped for a link while it runs makes it read,
    and report under an innocent name, a file outside the folder or a protected one. Here
    each folder on the way is opened without following a link and its descriptor proven
    to be the folder its canonical path names (as ``open_directory`` does; a descriptor
    kept for the next name in the same folder is proven again before it is used; with
    Linux's ``openat2`` the kernel walks below the checked folder refusing every link), and
    the last name is opened or looked at with ``O_NOFOLLOW``: what is seen is
    ``<folder>/<relative>`` itself, canonical, with no link anywhere below ``folder``.
    Names with empty, ``.`` or ``..`` segments are refused. Folder descriptors are kept
    until ``close`` (one object per batch of names, or per search with ``prove_again``
    between its batches; used by one thread at a time), at most ``max_open`` at a time.
    """

    def __init__(self, top: CheckedPath, *, max_open: int = 32) -> None:
        self.top = top
        self._max_open = max_open
        self._folders: dict[str, int] = {}
        self._top: int | None = None
        self._top_proven = False

    def __enter__(self) -> ListedFiles:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        folders, self._folders = self._folders, {}
        if self._top is not None:
            folders[""] = self._top
            self._top = None
        for fd in folders.values():
            os.close(fd)

    def path(self, relative: str) -> str:
        return os.path.join(self.top.path, relative) if relative else self.top.path

    def lstat(self, relative: str) -> os.stat_result | None:
        """The entry itself (a link is not followed), or None when nothing has the name.

        PathChanged when a folder on the way is not the folder its name says.
        """
        folder, name = _split_listed(relative)
        if not _AT_CALLS:
            path = self._canonical_now(relative)
            try:
                return os.lstat(path)
            except FileNotFoundError:
                return None
        fd = self._folder(folder)
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    @contextlib.contextmanager
    def open_file(self, relative: str) -> Iterator[tuple[int, os.stat_result]]:
        """A descriptor of the regular file ``relative`` names and its ``fstat``.

        The hard-link rule of the checked folder applies: this is for reading content.
        """
        fd, info = self._open_regular(relative)
        try:
            yield fd, info
        finally:
            os.close(fd)

    def read_head(self, relative: str, length: int) -> bytes:
        """The first ``length`` bytes (fewer if the file is shorter) of the regular file
        ``relative`` names, read from one verified descriptor (as ``open_file``)."""
        fd, _info = self._open_regular(relative)
        try:
            return _read_at(fd, length, 0)
        finally:
            os.close(fd)

    def read_ranges(self, relative: str, ranges: list[tuple[int, int]]) -> list[bytes]:
        """The bytes at each ``(offset, length)`` of the regular file ``relative`` names.

        All from one verified descriptor (as ``open_file``), in one read when the ranges
        lie within 64 KiB of each other; a range past the end of the file comes back short.
        """
        fd, _info = self._open_regular(relative)
        try:
            if not ranges:
                return []
            start = min(offset for offset, _ in ranges)
            end = max(offset + length for offset, length in ranges)
            if end - start <= _ONE_READ:
                block = _read_at(fd, end - start, start)
                if len(ranges) == 1:
                    return [block]
                return [block[o - start : o - start + n] for o, n in ranges]
            return [_read_at(fd, length, offset) for offset, length in ranges]
        finally:
            os.close(fd)

    def _open_regular(self, relative: str) -> tuple[int, os.stat_result]:
        folder, name = _split_listed(relative)
        try:
            if _OPENAT2 is not None:
                # One call: below the proven folder, refusing a link anywhere on the way.
                fd = _OPENAT2(self._top_fd(), os.fsencode(relative))
            elif _AT_CALLS:
                fd = os.open(name, _LISTED_FLAGS, dir_fd=self._folder(folder))
            else:
                fd = os.open(self._canonical_now(relative), _LISTED_FLAGS)
        except FileNotFoundError:
            raise NotFound(f"{self.path(relative)} does not exist.") from None
        except IsADirectoryError:
            raise Unsupported(
                f"{self.path(relative)} is a directory.", reason="not_a_file"
            ) from None
        except NotADirectoryError:
            raise NotFound(f"{self.path(relative)} does not exist.") from None
        except PermissionError:
            raise no_permission(self.path(relative)) from None
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.EXDEV):
                raise PathChanged(
                    f"{self.path(relative)} became a symbolic link after it was listed."
                ) from None
            raise
        try:
            if not _AT_CALLS:
                _verify_descriptor(fd, self.path(relative))
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise Unsupported(
                    f"{self.path(relative)} is not a regular file.", reason="not_a_file"
                )
            if info.st_nlink > 1:
                self.top.hard_links.check(self.path(relative), info)
        except BaseException:
            os.close(fd)
            raise
        return fd, info

    def prove_again(self) -> None:
        """Prove the checked folder's descriptor again at its next use (a new batch)."""
        self._top_proven = False

    def _top_fd(self) -> int:
        """The checked folder's own descriptor (for ``openat2``), proven once per batch.

        Below a proven folder, ``openat2`` refuses every link; what could change later in
        a batch is only where the folder itself is, and a folder moved out of the workspace
        with files then moved into it exposes nothing that moving those files into the
        workspace would not.
        """
        if self._top is None:
            self._top = _open_verified_directory(self.top.path)
        elif not self._top_proven:
            _verify_descriptor(self._top, self.top.path)
        self._top_proven = True
        return self._top

    def _folder(self, folder: str) -> int:
        path = self.path(folder)
        fd = self._folders.get(folder)
        if fd is not None:
            try:
                # Proven when it was opened; proven again now, for this use.
                _verify_descriptor(fd, path)
            except PathChanged:
                os.close(self._folders.pop(folder))
                raise
            return fd
        if len(self._folders) >= self._max_open:
            oldest = next(iter(self._folders))
            os.close(self._folders.pop(oldest))
        fd = _open_verified_directory(path)
        self._folders[folder] = fd
        return fd

    def _canonical_now(self, relative: str) -> str:
        path = self.path(relative)
        if os.path.normcase(os.path.realpath(path)) != os.path.normcase(path):
            raise PathChanged(f"{path} is no longer the path that was listed.")
        return path


_LISTED_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY


def _find_openat2() -> Callable[[int, bytes], int] | None:
    """Linux's ``openat2`` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or None.

    It opens a path below a folder's descriptor in one call and fails (ELOOP, EXDEV) if any
    component is a link or the path leaves the folder: the whole walk ``ListedFiles`` does
    one folder at a time, done by the kernel. Python has no binding (3.11), so it is called
    by number (437 on every architecture); a kernel before 5.6, or a sandbox that forbids
    it, leaves the folder-by-folder walk.
    """
    if not _LINUX:
        return None
    try:
        import ctypes  # only where the kernel call exists

        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    syscall.argtypes = [
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
    ]

    class OpenHow(ctypes.Structure):
        _fields_ = (
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        )

    resolve_no_magiclinks, resolve_no_symlinks, resolve_beneath = 0x02, 0x04, 0x08
    how = OpenHow(_LISTED_FLAGS, 0, resolve_no_magiclinks | resolve_no_symlinks | resolve_beneath)
    how_pointer, how_size = ctypes.addressof(how), ctypes.sizeof(how)

    def openat2(dir_fd: int, path: bytes) -> int:
        fd = syscall(437, dir_fd, path, how_pointer, how_size)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), os.fsdecode(path))
        return int(fd)

    openat2.how = how  # type: ignore[attr-defined]  # keeps the structure alive
    try:
        probe = os.open("/", os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        try:
            os.close(openat2(probe, b"."))
            try:
                # The flags must hold: a link is refused (or there is no /proc to try it on).
                os.close(openat2(probe, b"proc/self"))
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOENT):
                    raise
            else:
                return None
        finally:
            os.close(probe)
    except OSError:
        return None
    return openat2


_OPENAT2 = _find_openat2() if _AT_CALLS else None


def _read_at(fd: int, length: int, offset: int) -> bytes:
    """Up to ``length`` bytes at ``offset`` (fewer only at the end of the file)."""
    chunks: list[bytes] = []
    while length > 0:
        if _PREAD is not None:
            chunk = _PREAD(fd, min(length, 1 << 30), offset)
        else:
            os.lseek(fd, offset, os.SEEK_SET)
            chunk = os.read(fd, min(length, 1 << 30))
        if not chunk:
            break
        if not chunks and len(chunk) == length:
            return chunk
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return b"".join(chunks)


_PREAD: Callable[[int, int, int], bytes] | None = getattr(os, "pread", None)


def _split_listed(relative: str) -> tuple[str, str]:
    """``relative`` as (its folder, its name), or InvalidPath for a name that is not plain."""
    if os.sep != "/":
        relative = relative.replace(os.sep, "/")
    framed = f"/{relative}/"
    if not relative or "\0" in relative or "//" in framed or "/./" in framed or "/../" in framed:
        raise InvalidPath(f"{relative!r} is not a plain relative path.")
    folder, _, name = relative.rpartition("/")
    return folder, name


# -- helpers -------------------------------------------------------------------------------


def _refuse_new_link(checked: CheckedPath, info: os.stat_result) -> None:
    """A path checked through its links is canonical: a link there now came after the check."""
    if checked.follows_symlinks and stat.S_ISLNK(info.st_mode):
        raise PathChanged(f"{checked.path} became a symbolic link after it was checked.")


def _temp_stem(name: str) -> str:
    # Cut by bytes, not characters: 200 CJK characters are 600 bytes, past NAME_MAX.
    return os.fsdecode(os.fsencode(name)[:_TEMP_STEM_BYTES])


def _lstat_at(parent_fd: int | None, name: str, checked: CheckedPath) -> os.stat_result | None:
    try:
        return os.stat(name if _AT_CALLS else checked.path, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _write_temp(
    parent_fd: int | None, checked: CheckedPath, name: str, data: bytes | OpenFile, mode: int
) -> str:
    temp_name = f".{_temp_stem(name)}.terax-{secrets.token_hex(4)}.tmp"
    target = temp_name if _AT_CALLS else os.path.join(checked.parent, temp_name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
    fd = os.open(target, flags, 0o600, dir_fd=parent_fd)
    try:
        if isinstance(data, OpenFile):
            copy_descriptor(data.fd, fd)
        else:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode & ~_PRIVILEGE_BITS)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(parent_fd, temp_name, checked)
        raise
    os.close(fd)
    return temp_name


def _replace(parent_fd: int | None, temp_name: str, name: str, checked: CheckedPath) -> None:
    if _AT_CALLS:
        os.replace(temp_name, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
    else:
        os.replace(os.path.join(checked.parent, temp_name), checked.path)


def _link_no_replace(
    parent_fd: int | None, temp_name: str, name: str, checked: CheckedPath
) -> None:
    """Give the temp file its final name only if the name is free (link fails if it exists)."""
    try:
        if _AT_CALLS:
            os.link(temp_name, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
        else:
            os.link(os.path.join(checked.parent, temp_name), checked.path)
    except FileExistsError:
        raise AlreadyExists(f"{checked.path} already exists.") from None
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS):
            raise
        # Filesystems without hard links: the existence check above is the best we have.
        if _lstat_at(parent_fd, name, checked) is not None:
            raise AlreadyExists(f"{checked.path} already exists.") from None
        _replace(parent_fd, temp_name, name, checked)


def _unlink_quietly(parent_fd: int | None, name: str, checked: CheckedPath) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name if _AT_CALLS else os.path.join(checked.parent, name), dir_fd=parent_fd)


def _fsync_directory(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.fsync(fd)


def _copy_tree(source: str, target: str, skip: Callable[[str], bool], links: HardLinkRule) -> int:
    with open_directory(source) as source_fd, open_directory(target) as target_fd:
        return _copy_entries(source_fd, target_fd, source, target, skip, links)


def _copy_entries(
    source_fd: int | None,
    target_fd: int | None,
    source: str,
    target: str,
    skip: Callable[[str], bool],
    links: HardLinkRule,
) -> int:
    """Copy the entries of the open folder ``source_fd`` into the open folder ``target_fd``.

    Both were proven when opened and are held throughout; sub-folders are opened from
    them without following links. Each entry is re-read with ``lstat`` (not the
    listing's cached type), so an entry swapped for a symlink mid-copy is copied as a
    link, never followed out of the workspace.
    """
    copied = 0
    with os.scandir(source_fd if _AT_CALLS else source) as iterator:
        names = [entry.name for entry in iterator]
    for name in names:
        source_path, target_path = os.path.join(source, name), os.path.join(target, name)
        if skip(source_path) or skip(target_path):
            continue
        source_name = name if _AT_CALLS else source_path
        target_name = name if _AT_CALLS else target_path
        try:
            info = os.stat(source_name, dir_fd=source_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            link = os.readlink(source_name, dir_fd=source_fd)
            os.symlink(link, target_name, dir_fd=target_fd)
        elif stat.S_ISDIR(info.st_mode):
            os.mkdir(target_name, 0o777, dir_fd=target_fd)
            with (
                _open_child(source_fd, source_name, source_path) as child_source,
                _open_child(target_fd, target_name, target_path) as child_target,
            ):
                copied += _copy_entries(
                    child_source, child_target, source_path, target_path, skip, links
                )
        elif stat.S_ISREG(info.st_mode):
            _copy_file(source_fd, source_name, target_fd, target_name, source_path, links)
        else:
            continue
        copied += 1
    return copied


@contextlib.contextmanager
def _open_child(parent_fd: int | None, name: str, path: str) -> Iterator[int | None]:
    """A sub-folder of a proven folder, opened from it without following a link."""
    if parent_fd is None:
        with open_directory(path) as fd:
            yield fd
        return
    try:
        fd = os.open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=parent_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PathChanged(f"{path} is no longer the directory that was listed.") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def _copy_file(
    source_fd: int | None,
    source_name: str,
    target_fd: int | None,
    target_name: str,
    shown: str,
    links: HardLinkRule,
) -> None:
    flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
    try:
        reader = os.open(source_name, flags, dir_fd=source_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise PathChanged(f"{shown} became a symbolic link while it was copied.") from None
        raise
    try:
        info = os.fstat(reader)
        if not stat.S_ISREG(info.st_mode):
            raise PathChanged(f"{shown} stopped being a regular file while it was copied.")
        links.check(shown, info)
        create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
        writer = os.open(target_name, create, 0o600, dir_fd=target_fd)
        try:
            copy_descriptor(reader, writer)
            if hasattr(os, "fchmod"):
                os.fchmod(writer, stat.S_IMODE(info.st_mode) & ~_PRIVILEGE_BITS)
        finally:
            os.close(writer)
    finally:
        os.close(reader)


def copy_descriptor(reader: int, writer: int) -> int:
    """Copy ``reader`` from its offset to its end into ``writer``; returns the bytes copied.

    In the kernel where it can (``copy_file_range``, else ``sendfile``), else through one
    bounded buffer: memory stays at ``_COPY_CHUNK`` whatever the file's size.
    """
    copied = 0
    for kernel_copy in (_copy_file_range, _sendfile):
        try:
            while (count := kernel_copy(reader, writer)) > 0:
                copied += count
        except OSError as error:
            # Not between these two files (another filesystem, a kernel without the call):
            # the offsets moved only by what was copied, so the next way carries on from there.
            if error.errno not in _NO_KERNEL_COPY:
                raise
            continue
        if copied:
            return copied
        # Nothing at all: an empty file, or one the kernel copies as empty (procfs-like
        # files report no size); reading it says which.
        break
    while chunk := os.read(reader, _COPY_CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(writer, view) :]
        copied += len(chunk)
    return copied


def _copy_file_range(reader: int, writer: int) -> int:
    if not hasattr(os, "copy_file_range"):
        raise OSError(errno.ENOSYS, "copy_file_range is not available")
    return os.copy_file_range(reader, writer, _COPY_CHUNK)


def _sendfile(reader: int, writer: int) -> int:
    if not hasattr(os, "sendfile") or not sys.platform.startswith("linux"):
        # Elsewhere sendfile's target must be a socket.
        raise OSError(errno.ENOSYS, "sendfile to a file is not available")
    return os.sendfile(writer, reader, None, _COPY_CHUNK)


def _entry_info(entry: os.DirEntry[str]) -> EntryInfo:
    info = entry.stat(follow_symlinks=False)
    target_kind = None
    if stat.S_ISLNK(info.st_mode):
        kind = "symlink"
        try:
            target = entry.stat(follow_symlinks=True)
            target_kind = "directory" if stat.S_ISDIR(target.st_mode) else "file"
        except OSError:
            target_kind = "missing"
    elif stat.S_ISDIR(info.st_mode):
        kind = "directory"
    elif stat.S_ISREG(info.st_mode):
        kind = "file"
    else:
        kind = "other"
    return EntryInfo(
        entry.name, kind, info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode), target_kind
    )


def _read_umask() -> int:
    # os.umask can only be read by setting it; do it once, before any worker thread exists.
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_UMASK = _read_umask()


def _default_file_mode() -> int:
    return 0o666 & ~_UMASK


def _human(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"
