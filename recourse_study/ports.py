"""Choosing the port `recourse-study serve` listens on: the one asked for (PORT or --port),
refused in one line when another program holds it; otherwise 8000, or the next free one."""

from __future__ import annotations

import socket

DEFAULT = 8000
#: ports tried after the default when nobody asked for one
SPARE = range(DEFAULT + 1, DEFAULT + 100)


class PortError(ValueError):
    """A port that cannot be used, with how to choose another."""


def is_free(host: str, port: int) -> bool:
    """Whether a server could bind `host:port` now (as gunicorn does, with SO_REUSEADDR)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def parse_port(raw: str, source: str) -> int:
    try:
        port = int(raw)
    except ValueError:
        raise PortError(f"{source} must be a port number 1..65535, got {raw!r}") from None
    if not 1 <= port <= 65535:
        raise PortError(f"{source} must be a port number 1..65535, got {port}")
    return port


def choose_port(host: str, asked: int | None) -> tuple[int, str | None]:
    """The port to serve on and, when it is not the default, a note saying why."""
    if asked is not None:
        if not is_free(host, asked):
            raise PortError(
                f"port {asked} on {host} is taken by another program; choose a free one with "
                f"PORT=<port> (scripts/run) or --port <port>"
            )
        return asked, None
    if is_free(host, DEFAULT):
        return DEFAULT, None
    for port in SPARE:
        if is_free(host, port):
            return port, f"port {DEFAULT} is taken; serving on {port} (PORT=<port> chooses)"
    raise PortError(
        f"ports {DEFAULT}..{SPARE[-1]} on {host} are all taken; choose one with PORT=<port>"
    )
