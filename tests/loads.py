"""Clients on raw sockets for the server's stop and limits: what an API server does, counted.

A request is *lost* when its connection was established and the request (or part of it) was
written, but no complete response came back: the API server's Go client does not retry such a
POST, so the user's write fails. A connection attempt that is refused (or times out) sends
nothing and is *refused*, not lost: the Service routes the next attempt to another pod.
"""

from __future__ import annotations

import signal
import socket
import ssl
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field


class Lost(Exception):
    """The connection broke after the request was (partly) written."""


def http_request(path: str, body: bytes, *, close: bool = False) -> bytes:
    connection = b"Connection: close\r\n" if close else b""
    return (
        f"POST {path} HTTP/1.1\r\nHost: jobguard\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n".encode()
        + connection
        + b"\r\n"
        + body
    )


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of one response; Lost if cut short."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise Lost("closed before the response headers")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise Lost("closed inside the response body")
        rest += chunk
    return status, headers, rest[:length]


@dataclass
class StopReport:
    answered: int = 0
    answered_after_signal: int = 0
    lost: int = 0
    refused: int = 0
    closed_by_header: int = 0
    """Responses with Connection: close (the client retired the connection)."""
    statuses: Counter[int] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    signalled_at: float | None = None

    def count(self, status: int, headers: dict[str, str]) -> None:
        with self.lock:
            self.answered += 1
            self.statuses[status] += 1
            if self.signalled_at is not None:
                self.answered_after_signal += 1
            if headers.get("connection", "").lower() == "close":
                self.closed_by_header += 1

    def lose(self, exc: BaseException) -> None:
        with self.lock:
            self.lost += 1
            if len(self.errors) < 20:
                self.errors.append(repr(exc))

    def refuse(self) -> None:
        with self.lock:
            self.refused += 1


def _connect(address: tuple[str, int], tls: ssl.SSLContext | None) -> socket.socket | None:
    """A connection, or None when the listener refuses (nothing was sent)."""
    try:
        sock = socket.create_connection(address, timeout=5)
    except OSError:
        return None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls is None:
        return sock
    try:
        return tls.wrap_socket(sock, server_hostname="localhost")
    except OSError:  # a handshake cut short: no request was written either
        sock.close()
        return None


def keep_alive_client(
    address: tuple[str, int],
    request: bytes,
    report: StopReport,
    stop: threading.Event,
    tls: ssl.SSLContext | None = None,
) -> None:
    """An API server's pooled connection: reuse it until told `Connection: close`."""
    sock: socket.socket | None = None
    while not stop.is_set():
        if sock is None:
            sock = _connect(address, tls)
            if sock is None:
                report.refuse()
                return  # the listener is closed: this pod is gone for the Service
        try:
            sock.sendall(request)
            status, headers, _ = read_response(sock)
        except (OSError, Lost) as exc:
            report.lose(exc)
            sock.close()
            sock = None
            continue
        report.count(status, headers)
        if headers.get("connection", "").lower() == "close":
            sock.close()
            sock = None
    if sock is not None:
        sock.close()


def new_connection_client(
    address: tuple[str, int],
    request: bytes,
    report: StopReport,
    stop: threading.Event,
    tls: ssl.SSLContext | None = None,
) -> None:
    """A client that opens a connection per request (the Service's new connections)."""
    while not stop.is_set():
        sock = _connect(address, tls)
        if sock is None:
            report.refuse()
            return
        with sock:
            try:
                sock.sendall(request)
                status, headers, _ = read_response(sock)
            except (OSError, Lost) as exc:
                report.lose(exc)
                continue
        report.count(status, headers)


def rolling_stop(
    proc: subprocess.Popen[bytes],
    address: tuple[str, int],
    body: bytes,
    *,
    keep_alive: int = 4,
    new_connections: int = 2,
    before: float = 0.5,
    deadline: float = 20.0,
    tls: ssl.SSLContext | None = None,
) -> StopReport:
    """Clients of both kinds run from `before` seconds ahead of SIGTERM until the listener
    refuses them (or `deadline` passes); the report counts what they got."""
    report = StopReport()
    stop = threading.Event()
    pooled, fresh = http_request("/validate", body), http_request("/validate", body, close=True)
    threads = [
        threading.Thread(target=keep_alive_client, args=(address, pooled, report, stop, tls))
        for _ in range(keep_alive)
    ] + [
        threading.Thread(target=new_connection_client, args=(address, fresh, report, stop, tls))
        for _ in range(new_connections)
    ]
    for thread in threads:
        thread.start()
    time.sleep(before)
    report.signalled_at = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    end = time.monotonic() + deadline
    for thread in threads:
        thread.join(timeout=max(end - time.monotonic(), 0))
    stop.set()
    for thread in threads:
        thread.join(timeout=10)
    return report
