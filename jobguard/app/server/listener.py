"""The listening socket: a bound on open connections, and a stop that resets no one.

`Listener` counts the connections it accepted until they close, and closes at once those
beyond its limit, before any TLS handshake or read, so a flood cannot exhaust descriptors.
`Acceptor` calls its `accept()` on every event loop and hands each connection to the loop:
asyncio's own servers would call it too, but uvloop's accept in C, past the count.

Closing a listening socket resets every connection still in its accept queue: the kernel
finished their handshakes, so their clients may already have written a request. On stop,
`refuse_new_connections` makes the kernel drop new SYNs (a socket filter; clients retry their
SYN and find the next endpoint) while the queue is accepted; `accept_queue_length` tells when
it is empty. No socket option or asyncio call holds new connections back without closing the
listener (a smaller backlog only bounds the queue the stop must drain), so the filter stays:
tests/test_listener_contract.py attaches it on loopback and checks that a new connection is
dropped and established and queued ones are untouched, failing if the kernel or Python stops
honouring it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import logging
import os
import resource
import socket
import ssl
import struct
import sys
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger("jobguard.server")

_SO_ATTACH_FILTER = 26  # Linux
# Classic BPF on the TCP header: drop a segment whose flags are SYN without ACK (a new
# connection), accept everything else (handshakes in progress, established connections).
_DROP_NEW_SYN = (
    (0x30, 0, 0, 13),  # ldb [13]           TCP flags
    (0x54, 0, 0, 0x12),  # and #SYN|ACK
    (0x15, 0, 1, 0x02),  # jeq #SYN          -> drop, else -> accept
    (0x06, 0, 0, 0),  # ret #0             drop
    (0x06, 0, 0, 0xFFFFFFFF),  # ret #-1     accept
)
_TCPI_UNACKED = 24  # struct tcp_info: on a listening socket, the accept queue's length


class _Accepted(socket.socket):
    """An accepted connection that tells its listener when it is closed."""

    listener: Listener | None = None

    def _release(self) -> None:
        listener, self.listener = self.listener, None
        if listener is not None:
            listener.open_connections -= 1

    def close(self) -> None:
        self._release()
        super().close()

    def detach(self) -> int:
        # uvloop's transports detach the socket object and close the descriptor themselves.
        self._release()
        return super().detach()


class Listener(socket.socket):
    """A TCP listening socket that counts and bounds the connections it accepts."""

    def __init__(self, family: int, limit: int) -> None:
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP (without
        # it, Nagle and delayed ACKs add 40 ms to every response written in two parts).
        super().__init__(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.limit = limit
        self.open_connections = 0
        self.refused = 0
        """Connections closed at accept: `limit` were open, or descriptors ran out."""
        self._spare: int | None = os.open(os.devnull, os.O_RDONLY)

    def accept(self) -> tuple[socket.socket, Any]:
        while True:
            try:
                fd, address = self._accept()  # type: ignore[attr-defined]  # BlockingIOError: empty
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE):
                    raise
                # Out of descriptors (held elsewhere in the process): asyncio would log and
                # retry up to `backlog` times per wake-up (~15,000 lines a second). Free the
                # spare descriptor, accept and close one connection, take the spare back.
                self._shed()
                continue
            if self.open_connections < self.limit:
                break
            os.close(fd)
            self._refused("connection refused: %d connections open (the limit)")
        connection = _Accepted(self.family, self.type, self.proto, fileno=fd)
        connection.listener = self
        self.open_connections += 1
        return connection, address

    def _refused(self, message: str) -> None:
        self.refused += 1
        log.warning(message, self.open_connections, extra={"fields": {"refused": self.refused}})

    def _shed(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        try:
            fd, _ = self._accept()  # type: ignore[attr-defined]
            os.close(fd)
            self._refused("connection refused: out of file descriptors (%d connections open)")
        finally:
            with contextlib.suppress(OSError):
                self._spare = os.open(os.devnull, os.O_RDONLY)

    def close(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        super().close()


_PAUSE_ERRORS = frozenset({errno.ENOBUFS, errno.ENOMEM})
"""Accept errors after which accepting pauses a second (asyncio does the same)."""
ACCEPT_PAUSE = 1.0


class Acceptor:
    """Serves one `Listener` on the running loop: accepts in Python (counted, bounded, shedding
    when descriptors run out), then `loop.connect_accepted_socket` with the server's protocol
    and TLS. The same on asyncio's loop and on uvloop."""

    def __init__(
        self,
        listener: Listener,
        protocol_factory: Callable[[], asyncio.Protocol],
        tls: ssl.SSLContext | None,
        handshake_timeout: float,
        shutdown_timeout: float,
        backlog: int,
    ) -> None:
        self.listener = listener
        self.protocol_factory = protocol_factory
        self.tls = tls
        self.handshake_timeout = handshake_timeout
        self.shutdown_timeout = shutdown_timeout
        self.backlog = backlog
        self.loop = asyncio.get_running_loop()
        self.tasks: set[asyncio.Task[None]] = set()
        """Connections being handed to the loop (the TLS handshake, with TLS)."""
        self.serving = False

    def start(self) -> None:
        self.serving = True
        self.loop.add_reader(self.listener.fileno(), self._accept)

    def _accept(self) -> None:
        # As asyncio does: up to `backlog` connections per wake-up, then let others run.
        for _ in range(self.backlog):
            try:
                connection, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                log.warning("accept failed: %s", exc)
                if exc.errno in _PAUSE_ERRORS:
                    self.loop.remove_reader(self.listener.fileno())
                    self.loop.call_later(ACCEPT_PAUSE, self._resume)
                return
            connection.setblocking(False)
            task = self.loop.create_task(self._connect(connection))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    def _resume(self) -> None:
        if self.serving:
            self.loop.add_reader(self.listener.fileno(), self._accept)

    async def _connect(self, connection: socket.socket) -> None:
        tls = self.tls
        try:
            await self.loop.connect_accepted_socket(
                self.protocol_factory,
                connection,
                ssl=tls,
                ssl_handshake_timeout=self.handshake_timeout if tls else None,
                ssl_shutdown_timeout=self.shutdown_timeout if tls else None,
            )
        except (OSError, ssl.SSLError, TimeoutError, asyncio.CancelledError) as exc:
            # A failed or timed-out TLS handshake, a client gone before it began: its
            # transport is closed; the socket object too, so the count is right either way.
            log.debug("connection not established: %r", exc)
            connection.close()

    def close(self) -> None:
        """Stop accepting and close the listening socket (its queue is reset)."""
        if self.serving:
            self.serving = False
            with contextlib.suppress(OSError, ValueError):
                self.loop.remove_reader(self.listener.fileno())
        self.listener.close()


def address_text(host: str, port: int) -> str:
    """`host:port` as a URL writes it (`[::1]:8443` for IPv6)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


_S = TypeVar("_S", bound=socket.socket)


def bind(host: str, port: int, limit: int, backlog: int) -> list[Listener]:
    """Listening sockets for every address of `host`, as asyncio's create_server binds them."""
    return _bind(host, port, backlog, lambda family: Listener(family, limit))


def bind_plain(host: str, port: int, backlog: int = 128) -> list[socket.socket]:
    """Plain listening sockets, bound as `bind` binds (the health port: probes and scrapers)."""
    return _bind(host, port, backlog, lambda family: socket.socket(family, socket.SOCK_STREAM))


def _bind(host: str, port: int, backlog: int, make: Callable[[int], _S]) -> list[_S]:
    listeners: list[_S] = []
    seen: set[tuple[int, Any]] = set()
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    try:
        for family, _type, _proto, _name, address in infos:
            if (family, address) in seen or family not in (socket.AF_INET, socket.AF_INET6):
                continue
            seen.add((family, address))
            listener = make(family)
            listeners.append(listener)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            listener.bind(address)
            listener.listen(backlog)
            listener.setblocking(False)
    except OSError:
        for listener in listeners:
            listener.close()
        raise
    return listeners


def refuse_new_connections(sock: socket.socket) -> bool:
    """Drop new SYNs to `sock` from now on (Linux); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    code = b"".join(struct.pack("HBBI", *insn) for insn in _DROP_NEW_SYN)
    program = ctypes.create_string_buffer(code)  # the kernel copies it during setsockopt
    fprog = struct.pack("HL", len(_DROP_NEW_SYN), ctypes.addressof(program))
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, fprog)
    except OSError as exc:
        log.warning("cannot hold new connections back while stopping: %s", exc)
        return False
    return True


def accept_queue_length(sock: socket.socket) -> int | None:
    """Connections the kernel has established that nobody accepted yet (Linux), or None."""
    tcp_info = getattr(socket, "TCP_INFO", None)
    if tcp_info is None:
        return None
    with contextlib.suppress(OSError):
        info = sock.getsockopt(socket.IPPROTO_TCP, tcp_info, 104)
        if len(info) >= _TCPI_UNACKED + 4:
            return int(struct.unpack_from("I", info, _TCPI_UNACKED)[0])
    return None


def raise_descriptor_limit() -> int:
    """Raise the soft limit on open files to the hard one (as Go does at start-up); return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    return soft
