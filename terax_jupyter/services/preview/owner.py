"""Whose process answers a loopback connection: the preview opens only the server's own uid's.

Another account on the machine can listen on a loopback port too; proxying to it would let
that account serve pages into this user's preview (and read what they type there). The check
is made on the connection itself, after it is made: the kernel gives the socket that accepted
it the listener's owner, so there is no window between a check and the use (a listener that
changes hands in between is seen as it is).

Linux asks the kernel for that one socket (``NETLINK_SOCK_DIAG``, an exact 4-tuple lookup, a
few microseconds). Only a full, established socket's answer counts: a listener with
``TCP_DEFER_ACCEPT`` keeps a connection as a request until data arrives, and the kernel
reports such a request as root's. Then (and where netlink is unavailable) ``/proc/net/tcp{,6}``
names the owner of the request and of every listener that could have taken it; it must be
one owner. Other systems ask psutil; a socket whose process it cannot see (another user's,
where listing other users' sockets needs root) counts as not ours.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import struct
import sys
from typing import Any

import psutil

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x1
NLMSG_ERROR = 2
NLMSG_DONE = 3
_NO_COOKIE = 0xFFFFFFFF
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
_REQUEST = struct.Struct("=BBBBI")  # inet_diag_req_v2: family, protocol, ext, pad, states
_MESSAGE = struct.Struct("=BBBB48sIIIII")  # inet_diag_msg: ..., id, expires, rq, wq, uid, inode
TCP_ESTABLISHED = 1
_LISTEN = "0A"  # TCP_LISTEN as /proc/net/tcp prints it


def own_uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None


def peer_uid(connected: socket.socket) -> int | None:
    """The uid owning the socket at the other end of ``connected`` (a loopback TCP connection),
    or None when nobody can tell (the process is not visible)."""
    local = connected.getsockname()
    remote = connected.getpeername()
    # The accepted socket, seen from its side: source = our peer, destination = us.
    source, destination = (remote[0], remote[1]), (local[0], local[1])
    if sys.platform.startswith("linux"):
        for family, src, dst in _spellings(connected.family, source[0], destination[0]):
            with contextlib.suppress(OSError):
                uid = _diag_uid(family, (src, source[1]), (dst, destination[1]))
                if uid is not None:
                    return uid
        owners = {_proc_uid(source, destination), *_listener_uids(source)} - {None}
        return owners.pop() if len(owners) == 1 else None
    return _psutil_uid(source, destination)


def _spellings(family: int, source: str, destination: str) -> list[tuple[int, str, str]]:
    """The accepted socket may be IPv6 holding IPv4-mapped addresses (a dual-stack listener)."""
    spellings = [(family, source, destination)]
    if family == socket.AF_INET:
        spellings.append((socket.AF_INET6, f"::ffff:{source}", f"::ffff:{destination}"))
    return spellings


def _diag_uid(family: int, source: tuple[str, int], destination: tuple[str, int]) -> int | None:
    """One exact lookup through the kernel's socket diagnostics (no dump)."""
    sockid = (
        struct.pack(">HH", source[1], destination[1])
        + socket.inet_pton(family, source[0]).ljust(16, b"\0")[:16]
        + socket.inet_pton(family, destination[0]).ljust(16, b"\0")[:16]
        + struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
    )
    body = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + sockid
    header = _HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as diag:
        diag.settimeout(2.0)
        diag.send(header + body)
        reply = diag.recv(8192)
    if len(reply) < _HEADER.size:
        return None
    _length, kind, _flags, _seq, _pid = _HEADER.unpack_from(reply)
    if kind in (NLMSG_ERROR, NLMSG_DONE) or kind != SOCK_DIAG_BY_FAMILY:
        return None
    if len(reply) < _HEADER.size + _MESSAGE.size:
        return None
    fields = _MESSAGE.unpack_from(reply, _HEADER.size)
    state, uid, inode = fields[1], fields[8], fields[9]
    if state != TCP_ESTABLISHED or inode == 0:
        return None  # a request a deferring listener has not accepted: not its owner's uid
    return int(uid)


def _proc_uid(source: tuple[str, int], destination: tuple[str, int]) -> int | None:
    """``/proc/net/tcp{,6}``: the line whose local and remote ends are the accepted socket's."""
    wanted = {
        (_proc_address(family, src), _proc_address(family, dst))
        for family, src, dst in _spellings(
            socket.AF_INET6 if ":" in source[0] else socket.AF_INET, source[0], destination[0]
        )
    }
    ports = (f"{source[1]:04X}", f"{destination[1]:04X}")
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                lines = handle.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8:
                continue
            local_address, local_port = fields[1].rsplit(":", 1)
            remote_address, remote_port = fields[2].rsplit(":", 1)
            if (local_port, remote_port) == ports and (local_address, remote_address) in wanted:
                return int(fields[7])
    return None


def _listener_uids(address: tuple[str, int]) -> set[int]:
    """The owners of every listener on ``address``'s port that could take a connection to it:
    bound to that address (or its IPv4-mapped spelling) or to a wildcard."""
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    accepted = {_proc_address(f, a) for f, a, _ in _spellings(family, address[0], address[0])}
    accepted |= {"00000000", "0" * 32, _proc_address(socket.AF_INET6, "::ffff:0.0.0.0")}
    port = f"{address[1]:04X}"
    owners: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                lines = handle.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8 or fields[3] != _LISTEN:
                continue
            local_address, local_port = fields[1].rsplit(":", 1)
            if local_port == port and local_address in accepted:
                owners.add(int(fields[7]))
    return owners


def _proc_address(family: int, text: str) -> str:
    """An address as /proc/net prints it: 32-bit words in host byte order, in hex."""
    packed = socket.inet_pton(family, text)
    words = struct.unpack(f"={len(packed) // 4}I", packed)
    return "".join(f"{word:08X}" for word in words)


def _psutil_uid(source: tuple[str, int], destination: tuple[str, int]) -> int | None:
    # (connection, the pid of its process): a process's own list has no pid in its entries.
    connections: list[tuple[Any, int | None]]
    try:
        connections = [(each, each.pid) for each in psutil.net_connections(kind="tcp")]
    except (psutil.Error, OSError):  # refused to a user (macOS): each own process's list
        connections = [
            (each, process.pid) for process in _own_processes() for each in _connections_of(process)
        ]
    for connection, pid in connections:
        if not connection.laddr or not connection.raddr:
            continue
        if _same_end(connection.laddr, source) and _same_end(connection.raddr, destination):
            if pid is None:
                return None
            with contextlib.suppress(psutil.Error):
                return int(psutil.Process(pid).uids().real)
            return None
    return None


def _own_processes() -> list[psutil.Process]:
    uid = own_uid()
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if uid is None or process.uids().real == uid:
                found.append(process)
    return found


def _connections_of(process: psutil.Process) -> list[object]:
    try:
        return list(process.net_connections(kind="tcp"))
    except (psutil.Error, OSError):
        return []


def _same_end(address: object, end: tuple[str, int]) -> bool:
    ip, port = getattr(address, "ip", ""), getattr(address, "port", -1)
    if port != end[1]:
        return False
    try:
        left, right = ipaddress.ip_address(ip.split("%", 1)[0]), ipaddress.ip_address(end[0])
    except ValueError:
        return False
    return _unmapped(left) == _unmapped(right)


def _unmapped(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> object:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
