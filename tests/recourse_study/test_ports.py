"""The port `recourse-study serve` chooses: the one asked for or a refusal naming it; with
none asked, 8000 or the next free one, said in a note."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from recourse_study import ports


@contextmanager
def _held(port: int = 0) -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        yield s.getsockname()[1]


def test_a_free_port_asked_for_is_used() -> None:
    with _held() as port:
        pass
    assert ports.choose_port("127.0.0.1", port) == (port, None)


def test_a_taken_port_asked_for_is_refused_with_how_to_choose() -> None:
    with (
        _held() as port,
        pytest.raises(ports.PortError, match=f"port {port} on 127.0.0.1 is taken"),
    ):
        ports.choose_port("127.0.0.1", port)


def test_with_none_asked_a_taken_default_gives_the_next_free_port(monkeypatch) -> None:  # noqa: ANN001
    with _held() as taken, _held() as also_taken:
        monkeypatch.setattr(ports, "DEFAULT", taken)
        monkeypatch.setattr(ports, "SPARE", [also_taken, also_taken + 1, also_taken + 2])
        port, note = ports.choose_port("127.0.0.1", None)
    assert port in (also_taken + 1, also_taken + 2)
    assert note == f"port {taken} is taken; serving on {port} (PORT=<port> chooses)"


def test_bad_port_values_are_refused() -> None:
    for raw in ("abc", "0", "70000"):
        with pytest.raises(ports.PortError, match="PORT must be a port number 1..65535"):
            ports.parse_port(raw, "PORT")
    assert ports.parse_port("8080", "PORT") == 8080
