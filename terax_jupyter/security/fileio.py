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
import os
import secrets
import shutil
import stat
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import (
    AlreadyExists,
    InvalidRequest,
    NotEmpty,
    NotFound,
    PathChanged,
    TooLarge,
    Unsupported,
)
from terax_jupyter.security.workspace import is_within as _is_within

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from terax_jupyter.security.paths import CheckedPath

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_AT_CALLS = os.name == "posix" and os.open in os.supports_dir_fd and os.unlink in os.supports_dir_fd
# A rewrite never keeps set-user-ID or set-group-ID (the kernel drops them on a plain write too).
_PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID
# Room left in a 255-byte name for ".<name>.terax-xxxxxxxx.tmp".
_TEMP_STEM_BYTES = 200


@dataclass(frozen=True)
class EntryInfo:
    name: str
    kind: str  # "file" | "directory" | "symlink" | "other"
    size: int
    mtime_ns: int
    mode: int
    target_kind: str | None = None


def stat_path(checked: CheckedPath) -> os.stat_result:
    if checked.is_root:
        with open_directory(checked.path) as fd:
            return os.fstat(fd) if fd is not None else os.stat(checked.path)
    with _parent_fd(checked) as (parent_fd, name):
        try:
            return os.stat(
                name if _AT_CALLS else checked.path, dir_fd=parent_fd, follow_symlinks=False
            )
        except FileNotFoundError:
            raise NotFound(f"{checked.path} does not exist.") from None


def is_directory(checked: CheckedPath) -> bool:
    """Whether the checked path is a folder (NotFound if nothing is there)."""
    return stat.S_ISDIR(stat_path(checked).st_mode)


def read_bytes(checked: CheckedPath, limit: int) -> tuple[bytes, os.stat_result]:
    """The whole file (a regular file, at most ``limit`` bytes) and its stat at open time."""
    with _open_file(checked, os.O_RDONLY) as fd:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise Unsupported(f"{checked.path} is {kind}.", reason="not_a_file")
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
                entries.append(_entry_info(entry))
        return entries


def write_atomic(checked: CheckedPath, data: bytes, *, mode: int | None = None) -> os.stat_result:
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


def create_file(checked: CheckedPath, data: bytes, *, mode: int | None = None) -> os.stat_result:
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
        return 1 + _copy_tree(source.path, target.path, skip)
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
    data, info = read_bytes(source, limit=sys.maxsize)
    if overwrite:
        write_atomic(target, data, mode=stat.S_IMODE(info.st_mode))
    else:
        create_file(target, data, mode=stat.S_IMODE(info.st_mode))
    return 1


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
    try:
        fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        raise NotFound(f"{path} does not exist.") from None
    except OSError as error:
        if error.errno == errno.ENOTDIR and not os.path.islink(path):
            # A path through a file ("README.md/x"): nothing there, not an attack.
            raise NotFound(f"{path} is not a folder.") from None
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PathChanged(f"{path} is no longer the directory that was checked.") from None
        raise
    try:
        _verify_descriptor(fd, path)
        yield fd
    finally:
        os.close(fd)


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
        if os.path.normcase(actual) != os.path.normcase(expected):
            raise PathChanged(f"{expected} changed while it was being opened.")
        return
    opened, current = os.fstat(fd), os.stat(expected)
    if (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino):
        raise PathChanged(f"{expected} changed while it was being opened.")


def _descriptor_path(fd: int) -> str | None:
    if sys.platform.startswith("linux"):
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
    parent_fd: int | None, checked: CheckedPath, name: str, data: bytes, mode: int
) -> str:
    temp_name = f".{_temp_stem(name)}.terax-{secrets.token_hex(4)}.tmp"
    target = temp_name if _AT_CALLS else os.path.join(checked.parent, temp_name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
    fd = os.open(target, flags, 0o600, dir_fd=parent_fd)
    try:
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


def _copy_tree(source: str, target: str, skip: Callable[[str], bool]) -> int:
    with open_directory(source) as source_fd, open_directory(target) as target_fd:
        return _copy_entries(source_fd, target_fd, source, target, skip)


def _copy_entries(
    source_fd: int | None,
    target_fd: int | None,
    source: str,
    target: str,
    skip: Callable[[str], bool],
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
                copied += _copy_entries(child_source, child_target, source_path, target_path, skip)
        elif stat.S_ISREG(info.st_mode):
            _copy_file(source_fd, source_name, target_fd, target_name, source_path)
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
    source_fd: int | None, source_name: str, target_fd: int | None, target_name: str, shown: str
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
        create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
        writer = os.open(target_name, create, 0o600, dir_fd=target_fd)
        try:
            while chunk := os.read(reader, 1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(writer, view) :]
            if hasattr(os, "fchmod"):
                os.fchmod(writer, stat.S_IMODE(info.st_mode) & ~_PRIVILEGE_BITS)
        finally:
            os.close(writer)
    finally:
        os.close(reader)


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
