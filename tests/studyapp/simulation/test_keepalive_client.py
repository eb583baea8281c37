"""The bots' HTTP client keeps one connection per participant, as a browser does, and gets
past a server that closed a kept connection without sending anything twice that it must
not. The server is a real one on 127.0.0.1 (`http.server`, HTTP/1.1) that counts the
connections it accepts and can close a connection in the ways a server does."""

from __future__ import annotations

import http.client
import http.server
import os
import random
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studyapp.models import Study
from studyapp.simulation.bots import HttpClient
from studyapp.simulation.load import Sample, ServerTrouble, TimedClient, run_load

TOKEN = "tok123"


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, idle_s: float | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        #: seconds an idle kept connection stays open (None: until the client closes it)
        self.idle_s = idle_s
        #: what to do with the next requests, in order ("ok" once the list is empty):
        #: "drop" reads the request and closes without a byte, "cut" answers half and closes,
        #: "reset" sends the head of the answer, then resets the connection
        self.plan: list[str] = []
        self.connections = 0
        #: (method, path, body, Cookie header) of every request read
        self.requests: list[tuple[str, str, bytes, str]] = []
        self.lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.lock:
            self.connections += 1
        super().process_request(request, client_address)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        self.timeout = self.server.idle_s
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _read(self) -> str:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.requests.append(
                (self.command, self.path, body, self.headers.get("Cookie", ""))
            )
            return self.server.plan.pop(0) if self.server.plan else "ok"

    def _answer(self, status: int, body: bytes, action: str, **headers: str) -> None:
        if action == "drop":
            self.close_connection = True
            return
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body) * (2 if action == "cut" else 1)))
        self.end_headers()
        if action == "reset":
            self.wfile.flush()
            time.sleep(0.2)  # the head has arrived before the connection is lost
            linger = struct.pack("ii", 1, 0)  # closing sends a reset, no end of stream
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            os.close(self.connection.detach())
            self.close_connection = True
            return
        self.wfile.write(body)
        if action == "cut":
            self.close_connection = True

    def do_GET(self) -> None:
        action = self._read()
        cookie = f"csrftoken={TOKEN}; Path=/"
        self._answer(200, f"page {self.path}".encode(), action, **{"Set-Cookie": cookie})

    def do_POST(self) -> None:
        self._answer(302, b"moved", self._read(), Location="/next/")


@pytest.fixture
def server() -> Iterator[_Server]:
    yield from _serving(_Server())


@pytest.fixture
def client(server: _Server) -> HttpClient:
    """A client whose keep-alive connection to `server` has served a GET of /a/."""
    client = HttpClient(server.url)
    client.get("/a/")
    return client


def _serving(srv: _Server) -> Iterator[_Server]:
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_bots_requests_share_one_connection(server: _Server) -> None:
    client = HttpClient(server.url)
    assert client.get("/s/study/?pid=1").status_code == 200
    r = client.post("/s/study/", {"page": "consent", "agree": "on"})
    # no redirect followed: the caller reads the 3xx
    assert r.status_code == 302 and r["Location"] == "/next/"
    for _ in range(3):
        assert client.get("/p/code/").content == b"page /p/code/"
    client.close()
    assert server.connections == 1
    assert [(m, p) for m, p, _, _ in server.requests] == [
        ("GET", "/s/study/?pid=1"),
        ("POST", "/s/study/"),
        *[("GET", "/p/code/")] * 3,
    ]
    # the cookie comes back and the form carries the CSRF token, as before
    _, _, body, cookie = server.requests[1]
    assert cookie == f"csrftoken={TOKEN}"
    assert b"csrfmiddlewaretoken=" + TOKEN.encode() in body and b"page=consent" in body


def test_a_connection_the_server_closed_while_idle_is_reopened() -> None:
    for srv in _serving(_Server(idle_s=0.2)):
        client = HttpClient(srv.url)
        client.get("/a/")
        time.sleep(0.6)  # the server closes the idle connection meanwhile
        assert client.post("/a/", {"page": "x"}).status_code == 302
        time.sleep(0.6)
        assert client.get("/b/").status_code == 200
        client.close()
        assert srv.connections == 3
        # each request reached the server once
        assert [m for m, *_ in srv.requests] == ["GET", "POST", "GET"]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_request_lost_as_the_server_closed_the_connection_is_sent_once_more(
    server: _Server, client: HttpClient, method: str
) -> None:
    server.plan = ["drop"]  # read, then closed without a byte: the stale keep-alive case
    r = client.get("/b/") if method == "GET" else client.post("/b/", {"page": "x"})
    assert r.status_code == (200 if method == "GET" else 302)
    assert [m for m, *_ in server.requests] == ["GET", method, method]
    assert server.connections == 2 and client.requests_resent == 1


def test_a_request_is_sent_again_only_once(server: _Server, client: HttpClient) -> None:
    server.plan = ["drop", "drop"]
    with pytest.raises(http.client.RemoteDisconnected):
        client.get("/b/")
    assert [p for _, p, *_ in server.requests] == ["/a/", "/b/", "/b/"]
    # the next request opens a connection again
    assert client.get("/c/").status_code == 200


def test_a_post_on_a_new_connection_is_not_sent_again(server: _Server) -> None:
    server.plan = ["drop"]
    with pytest.raises(http.client.RemoteDisconnected):
        HttpClient(server.url).post("/a/", {"page": "x"})
    assert [m for m, *_ in server.requests] == ["POST"]


def test_a_post_whose_answer_had_begun_is_not_sent_again(
    server: _Server, client: HttpClient
) -> None:
    server.plan = ["cut"]
    with pytest.raises(http.client.IncompleteRead):
        client.post("/a/", {"page": "x"})
    assert [m for m, *_ in server.requests] == ["GET", "POST"]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_connection_lost_after_the_answer_began_resends_a_get_only(
    server: _Server, client: HttpClient, method: str
) -> None:
    server.plan = ["reset"]
    if method == "GET":
        assert client.get("/b/").status_code == 200
    else:
        with pytest.raises(ConnectionResetError):
            client.post("/b/", {"page": "x"})
    assert [m for m, *_ in server.requests] == ["GET", method] + (
        ["GET"] if method == "GET" else []
    )


@pytest.mark.parametrize("action", ["drop", "cut"])
def test_a_lost_answer_is_server_trouble_for_a_retrying_bot(server: _Server, action: str) -> None:
    """The load generator's view: no usable answer is a sample with status 0, and a bot
    that retries gets `ServerTrouble` (it reloads the page)."""
    samples: list[Sample] = []
    client = TimedClient(
        server.url, samples=samples, think=(0.0, 0.0), rng=random.Random(0), raise_errors=True
    )
    server.plan = [action]  # on a new connection: not sent again
    with pytest.raises(ServerTrouble, match="no answer"):
        client.post("/p/code/", {"page": "consent"})
    assert [s.status for s in samples] == [0] and len(server.requests) == 1


def test_a_load_run_keeps_one_connection_per_participant(
    live_server: Any, study: Study, eager: None
) -> None:
    report = run_load(study, live_server.url, n=2, concurrency=1, think=(0.0, 0.0), seed=1)
    assert not report.errors and not report.failed
    assert len(report.samples) > 20
    assert report.connections == 2 and report.as_dict()["connections"] == 2


def test_an_address_that_is_not_http_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="only http:// and https:// URLs"):
        HttpClient("ftp://127.0.0.1/")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_keeps_its_connection_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this certificate
    srv = _Server()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    srv.socket = context.wrap_socket(srv.socket, server_side=True)
    for running in _serving(srv):
        client = HttpClient(running.url.replace("http:", "https:"))
        assert client.get("/a/").status_code == 200
        assert client.post("/a/", {"page": "x"}).status_code == 302
        client.close()
        assert running.connections == 1 and len(running.requests) == 2
