"""One persistent HTTP/1.1 connection per simulated participant, as a browser keeps one.

A new TCP connection for every request costs the load generator CPU and the server an
accept and a connection set-up per request, which a browser does not make it pay.

A server closes a keep-alive connection that stays idle (gunicorn after its `keepalive`
seconds) and may do so just as the next request leaves. Like a browser, `KeepAlive` then
reconnects and, at most once, sends the request again (`KeepAlive.request`). A timeout is
never sent again: the server may be working on the request.
"""

from __future__ import annotations

import http.client
import select
import urllib.parse
from collections.abc import Mapping

SCHEMES = ("http", "https")


class Unanswered(http.client.RemoteDisconnected):
    """The connection was lost before a byte of the answer arrived (still an `OSError`, as
    a refused or reset connection is)."""


class _Response(http.client.HTTPResponse):
    """An answer that tells a connection lost before its first byte from a later failure."""

    def begin(self) -> None:
        try:
            first = self.fp.peek(1)  # waits for the first byte or the end of the stream
        except ConnectionError as exc:
            raise Unanswered(f"the connection was lost before an answer ({exc})") from exc
        if not first:
            raise Unanswered("the server closed the connection without an answer")
        super().begin()


def origin(url: str) -> tuple[str, str]:
    """(scheme, host[:port]) of an absolute http(s) URL; a clear error for anything else."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.netloc:
        raise ValueError(f"{url!r}: only http:// and https:// URLs with a host can be opened")
    return parts.scheme, parts.netloc


class KeepAlive:
    """One persistent connection to one origin, opened on the first request and again
    whenever the server closed it."""

    def __init__(self, scheme: str, netloc: str, timeout: float) -> None:
        cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        self.conn = cls(netloc, timeout=timeout)
        self.conn.response_class = _Response
        #: connections opened: the first and every reconnect
        self.opened = 0
        #: requests sent a second time after the connection was lost
        self.resent = 0

    def close(self) -> None:
        self.conn.close()

    def _reusable(self) -> bool:
        """Whether the connection is open; one the server closed while it was idle reads as
        ready (the end of the stream) and is dropped here, before anything is sent on it."""
        sock = self.conn.sock
        if sock is None:
            return False
        poller = select.poll()  # not select(): a run holds more than 1024 sockets
        poller.register(sock, select.POLLIN)
        if poller.poll(0):
            self.conn.close()
            return False
        return True

    def request(
        self, method: str, target: str, body: bytes | None, headers: Mapping[str, str]
    ) -> tuple[http.client.HTTPResponse, bytes]:
        """Send one request and read its whole answer.

        A request that fails on a reused connection because the connection was lost is sent
        once more on a new one: a GET whatever had arrived (reading a page changes nothing),
        a POST only when not a byte of the answer had arrived (`Unanswered`). That is the
        case of a server that closed the idle connection as the request left, so never read
        it. Its rarer other cause, a server process that died while handling the POST after
        storing it, is harmless here: every page's form names the page it answers and the
        server stores an answer only for the page the participant is on (a repeat is told
        "already submitted" and stores nothing), and a start button with a panel id resumes
        the same participant; a start without one would make a second participant, which
        `load_verify` reports as a participant beyond the bots.
        """
        for attempt in (0, 1):
            reused = self._reusable()
            self.opened += 0 if reused else 1
            try:
                return self._exchange(method, target, body, headers, reused)
            except ConnectionError as exc:
                self.conn.close()
                may_resend = method == "GET" or isinstance(exc, Unanswered)
                if attempt or not reused or not may_resend:
                    raise
                self.resent += 1
            except BaseException:
                self.conn.close()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _exchange(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: Mapping[str, str],
        reused: bool,
    ) -> tuple[http.client.HTTPResponse, bytes]:
        try:
            self.conn.request(method, target, body=body, headers=dict(headers))
        except ConnectionError as exc:
            if not reused:  # refused or reset while connecting: no keep-alive case
                raise
            raise Unanswered(f"the connection was lost while sending ({exc})") from exc
        response = self.conn.getresponse()  # closes the connection when the answer says so
        return response, response.read()
