"""The TCP ports a terminal session's processes listen on, as the preview proxy can reach them."""

from __future__ import annotations

import contextlib
import ipaddress
import os

import psutil


def listening_ports(leader: int) -> dict[int, tuple[int, str]]:
    """``port -> (pid, process name)`` for the session led by ``leader`` (blocking: /proc reads).

    Only sockets bound to a loopback or wildcard address count: one bound to a LAN address
    alone is not reachable on 127.0.0.1 or ::1, which is all the proxy connects to.
    """
    found: dict[int, tuple[int, str]] = {}
    for process in session_processes(leader):
        try:
            connections = process.net_connections(kind="tcp")
            name = process.name()
        except (psutil.Error, OSError):
            continue
        for connection in connections:
            address = connection.laddr
            if connection.status != psutil.CONN_LISTEN or not address:
                continue
            if reachable_from_loopback(address.ip):
                found.setdefault(address.port, (process.pid, name))
    return found


def session_processes(leader: int) -> list[psutil.Process]:
    """The shell, its descendants, and (POSIX) every process of its session: a job that its
    parent left behind (``nohup``, a double fork) keeps the session id."""
    found: dict[int, psutil.Process] = {}
    try:
        shell = psutil.Process(leader)
        found[leader] = shell
        for child in shell.children(recursive=True):
            found[child.pid] = child
    except psutil.Error:
        return []
    getsid = getattr(os, "getsid", None)
    if getsid is not None:
        for process in psutil.process_iter():
            if process.pid in found:
                continue
            with contextlib.suppress(OSError, psutil.Error):
                if getsid(process.pid) == leader:
                    found[process.pid] = process
    return list(found.values())


def reachable_from_loopback(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified
