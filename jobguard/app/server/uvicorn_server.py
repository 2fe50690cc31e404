"""uvicorn in the write path: rolling restarts that lose no request, and slow or hostile clients
that cost a bounded amount.

Every Job write passes through the webhook, and with `failurePolicy: Fail` a dropped request is
a user's failed `kubectl apply`. uvicorn's HTTP protocols (h11 or httptools) parse requests;
around each of them `_Connection` adds what the write path needs:

- a header timeout: a connection that sends nothing, or stops inside its headers, is closed
  `header_timeout` seconds after it was accepted or began its request (the TLS handshake counts);
- a lingering close: when the server closes a connection it half-closes it and reads (and
  discards) what the client still sends, for a bounded time and number of bytes, so a 413
  sent before the body was read reaches a client that writes its whole body before reading;
- a bound: beyond `max_connections` open connections the connection idle the longest (no
  request in it; a client that connects and sends nothing is idle) is closed to make room, so
  a client holding a thousand idle connections cannot keep requests out; only when every
  connection is in a request is a new one's request answered 503 and its connection closed;
  beyond twice that, the listener (jobguard.app.server.listener) closes new connections at
  accept;
- the stop, in Kubernetes' order (see `GracefulServer`).

What the guarantees know of each request they learn from its ASGI messages (`_Guard`, the
outermost middleware): when it began, whether its body was read to the end, when its response
began and ended. `Connection: close` on a response (the app's after a 408 or 413, `_Guard`'s
during the stop and on a 503) is how a connection is made to close after its answer: both of
uvicorn's HTTP protocols honour it, as HTTP says.

uvicorn beyond its documented configuration (each checked against the pinned uvicorn by
tests/test_uvicorn_contract.py, which an upgrade must pass first):

1. `GracefulServer` overrides `Server.startup`, `shutdown` and `capture_signals`,
   the steps `Server.serve` runs: the listening sockets (a bound at accept, the TLS handshake
   inside the header timeout) and Kubernetes' stop order are not expressible in `Config`
   (`limit_concurrency` answers 503 instead of closing idle connections; `timeout_graceful_
   shutdown` closes the listener at the signal, resetting the accept queue).
2. Having replaced `startup`, it runs the app's lifespan itself (`Server.lifespan`: `startup()`,
   `shutdown()`, `should_exit`, `state`) and builds each connection's HTTP protocol as
   `Server.startup` does: `config.http_protocol_class(config=, server_state=, app_state=)`, the
   constructor uvicorn requires of a custom `http` protocol class. The connection rides in the
   ASGI scope's `state` (`CONNECTION`), which the protocol copies from `app_state` per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.util
import logging
import signal
import ssl
import sys
import time
from collections import ChainMap
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any, cast

import uvicorn

from jobguard.app.exits import ExitCode
from jobguard.app.server import listener as listening

log = logging.getLogger("jobguard.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

NEW_CONNECTION_GRACE = 1.0
"""Seconds a connection with no request yet gets once the listener is closed (Go's
http.Server.Shutdown waits for new connections likewise), for the request its client is
sending."""
LINGER_SECONDS = 2.0
"""At most this long, after a close, the server reads what the client still sends."""
LINGER_BYTES = 8 * 1024 * 1024
"""... and at most this much (above the default 7 MiB body cap: the rest of a refused body)."""


@dataclass(frozen=True, slots=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8443
    header_timeout: float = 10.0
    """Seconds from accept (or from the first byte of a later request) to complete headers."""
    idle_timeout: int = 5
    """Seconds an idle keep-alive connection is kept."""
    max_connections: int = 1000
    """Open connections served normally; beyond it requests get 503 (see module docstring)."""
    shutdown_delay: float = 5.0
    """Seconds between SIGTERM (readiness false) and closing the listener."""
    grace_period: float = 20.0
    """Seconds connections get to finish once the listener is closed."""
    http: str = "auto"
    """uvicorn's HTTP protocol: h11, httptools, or auto (httptools when installed)."""
    loop: str = "auto"
    """The event loop: asyncio, uvloop, or auto (uvloop when installed)."""


def fast_stack(loop: str = "auto", http: str = "auto") -> tuple[str, str]:
    """The event loop and HTTP protocol to run: "auto" picks uvloop and httptools (uvicorn's
    fast stack, parsing and I/O in C) when they are installed, asyncio and h11 otherwise."""
    if loop == "auto":
        loop = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
    if http == "auto":
        http = "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
    return loop, http


class RateLimitedLog(logging.Filter):
    """Lets each distinct message through at most once per `interval` seconds; the next one
    says how many were suppressed. For messages a client can trigger at will."""

    def __init__(self, interval: float = 10.0) -> None:
        super().__init__()
        self.interval = interval
        self._last: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg).split("\n", 1)[0])  # asyncio adds details below
        now = time.monotonic()
        last, suppressed = self._last.get(key, (-self.interval, 0))
        if now - last < self.interval:
            self._last[key] = (last, suppressed + 1)
            return False
        if len(self._last) > 1000:  # messages are templates: a handful; never grow
            self._last.clear()
        self._last[key] = (now, 0)
        if suppressed:
            record.msg = f"{record.getMessage()} ({suppressed} more in the last {self.interval:g}s)"
            record.args = ()
        return True


def rate_limit_logs(interval: float = 10.0) -> None:
    """Bound the logs clients can cause: accept errors, refused connections, bad requests."""
    rate_limited = RateLimitedLog(interval)
    for name in ("asyncio", "uvicorn.error", "jobguard.server"):
        logging.getLogger(name).addFilter(rate_limited)


CONNECTION = "jobguard.connection"
"""The key of a request's `_Connection` in its ASGI scope's `state`."""

_CLOSE = (b"connection", b"close")
_UNAVAILABLE_BODY = b"Service Unavailable"
_UNAVAILABLE_HEADERS = [
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"content-length", b"%d" % len(_UNAVAILABLE_BODY)),
    _CLOSE,
]


def _has_body(scope: Scope) -> bool:
    """The request's headers announce a body (HTTP/1.1: a length above 0, or chunks)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return value.strip() not in (b"0", b"")
        if name == b"transfer-encoding":
            return True
    return False


class _Guard:
    """ASGI middleware, the outermost: tells each request's `_Connection` when the request began,
    when its body was read to the end and when its response was complete (the connection's
    idle, busy and lingering states come from these); answers 503 on a connection over the
    bound; and once stopping began adds `Connection: close` to every response, so clients
    retire pooled connections cleanly instead of racing a close."""

    def __init__(self, app: Any, server: GracefulServer) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = scope.get("state")
        connection = state.get(CONNECTION) if scope["type"] == "http" and state else None
        if connection is None:  # lifespan, or an app served without GracefulServer
            await self.app(scope, receive, send)
            return
        connection.request_began(_has_body(scope))
        server = self.server
        task = cast("asyncio.Task[None]", asyncio.current_task())
        server.requests.add(task)

        async def receive_tracked() -> Message:
            message = await receive()
            if not message.get("more_body", False):  # the body's end, or http.disconnect
                connection.uploading = False
            return message

        async def send_tracked(message: Message) -> None:
            kind = message["type"]
            if kind == "http.response.start" and server.draining:
                headers = list(message.get("headers", ()))
                if not any(name.lower() == b"connection" for name, _ in headers):
                    message = {**message, "headers": [*headers, _CLOSE]}
            await send(message)
            if kind == "http.response.body" and not message.get("more_body", False):
                connection.request_done()

        try:
            if connection.refused:  # its body, unread, is lingered over as a 413's
                await send_tracked(
                    {"type": "http.response.start", "status": 503, "headers": _UNAVAILABLE_HEADERS}
                )
                await send_tracked({"type": "http.response.body", "body": _UNAVAILABLE_BODY})
            else:
                await self.app(scope, receive_tracked, send_tracked)
        finally:
            server.requests.discard(task)
            connection.request_done()  # no-op when the response was complete


class _Transport(asyncio.Transport):
    """What uvicorn's protocol sees of the connection: closing goes through `_Connection`, and
    writes made in one turn of the loop leave in one: uvicorn writes a response's headers and
    its body separately, which would cost two TLS records and two system calls."""

    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        super().__init__()
        self._transport = transport
        self._connection = connection
        self._pending: list[bytes | bytearray | memoryview] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._connection.lingering or not data:
            return
        if not self._pending:
            self._connection.loop.call_soon(self.flush)
        self._pending.append(data)

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def flush(self) -> None:
        """Hand what was written to the connection's transport, as one write."""
        pending = self._pending
        if not pending:
            return
        data = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        if not self._connection.lingering:
            self._transport.write(data)

    def close(self) -> None:
        self._connection.close()

    def abort(self) -> None:
        self._connection.close()

    def is_closing(self) -> bool:
        return self._connection.lingering or self._transport.is_closing()

    def pause_reading(self) -> None:
        if not self._connection.lingering:
            self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()


class _Connection(asyncio.Protocol):
    """One accepted connection: uvicorn's protocol inside, the write path's guarantees around.
    `_Guard` reports its requests (`request_began`, `uploading`, `request_done`)."""

    def __init__(self, server: GracefulServer) -> None:
        self.server = server
        self.inner: asyncio.Protocol = cast(asyncio.Protocol, None)
        """uvicorn's HTTP protocol (set by the server's connection factory)."""
        self.loop = asyncio.get_running_loop()
        self.accepted = self.loop.time()  # protocols are made at accept, before TLS
        self.active = self.accepted
        """When its client last sent something (idle connections are closed oldest first)."""
        self.transport: asyncio.Transport | None = None
        self.app_transport: _Transport | None = None
        """What uvicorn's protocol writes to (see _Transport)."""
        self.closed = False
        self.lingering = False
        self.lingered = 0
        self.refused = False
        """Over the bound with every other connection in a request: answered 503 (`_Guard`)."""
        self.busy = False
        """A request began (its headers were read) and its response is not complete."""
        self.uploading = False
        """... and its body was not read to the end."""
        self.headers_pending = False
        """Bytes of a request arrived, its headers are not complete yet."""
        self.header_timer: asyncio.TimerHandle | None = None
        self.grace_timer: asyncio.TimerHandle | None = None
        self.linger_timer: asyncio.TimerHandle | None = None

    # asyncio.Protocol -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's do not inherit from asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)
        self.server.live.add(self)
        if len(self.server.live) > self.server.max_connections and not self.server.evict_idle(self):
            # Over the bound with every other connection in a request: its request is answered
            # 503 with Connection: close, and the requests are not disturbed.
            self.refused = True
            log.warning("over %d open connections: answering 503", self.server.max_connections)
        self.app_transport = _Transport(self.transport, self)
        self.inner.connection_made(self.app_transport)
        remaining = self.accepted + self.server.options.header_timeout - self.loop.time()
        self.header_timer = self.loop.call_later(max(remaining, 0), self._header_timeout)
        if self.server.stopping:  # accepted just before the listener closed
            self.drain()

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            self.lingered += len(data)
            if self.lingered > LINGER_BYTES:
                self._close_now(abort=True)
            return
        self.active = self.loop.time()
        self.inner.data_received(data)
        if not self.busy and not self.closed and not self.lingering:
            # Part of a request (or all its headers: `request_began` follows when the request's task
            # starts, a later turn of the loop).
            self.headers_pending = True
            if self.header_timer is None:  # a later request on a kept-alive connection
                self.header_timer = self.loop.call_later(
                    self.server.options.header_timeout, self._header_timeout
                )

    def eof_received(self) -> bool | None:
        if self.lingering:
            self._close_now(abort=False)
            return True
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._cancel_timers()
        if self.linger_timer is not None:
            self.linger_timer.cancel()
        self.server.live.discard(self)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    # what _Guard reports ----------------------------------------------------------------------

    def request_began(self, has_body: bool) -> None:
        self.busy = True
        self.uploading = has_body
        self.headers_pending = False
        self._cancel_timers()

    def request_done(self) -> None:
        if not self.busy:
            return
        self.busy = False
        self.active = self.loop.time()
        if self.server.stopping:  # the listener is closed: this was its last request
            self.close()

    # the guarantees -------------------------------------------------------------------------

    def close(self) -> None:
        """The connection is closed (by uvicorn's protocol, or after its last request):
        half-close, then read what the client still sends (bounded) so that unread request
        bytes do not turn the close into a reset that destroys the response in flight."""
        if self.closed or self.lingering or self.transport is None:
            return
        if self.app_transport is not None:
            self.app_transport.flush()  # the response goes out before the close
        transport = self.transport
        self.lingering = True
        self._cancel_timers()
        if transport.can_write_eof():
            transport.write_eof()  # plain TCP: FIN once the response is flushed
        elif not (self.busy and self.uploading):
            # TLS has no half-close: close_notify tells the client; nothing of it is unread.
            self._close_now(abort=False)
            return
        transport.resume_reading()
        self.linger_timer = self.loop.call_later(LINGER_SECONDS, self._close_now, True)

    def _close_now(self, abort: bool) -> None:
        if self.closed or self.transport is None:
            return
        self.lingering = True
        self._cancel_timers()
        if abort:
            self.transport.abort()
        else:
            self.transport.close()

    def idle(self) -> bool:
        """No request in it: nothing of one arrived since the last answer was complete."""
        return not (self.closed or self.lingering or self.headers_pending or self.busy)

    def evict(self) -> None:
        """Closed to make room for a new connection (see GracefulServer.evict_idle)."""
        self._close_now(abort=True)

    def _header_timeout(self) -> None:
        self.header_timer = None
        if self.closed or self.lingering or self.busy:
            return
        log.info(
            "closing a connection whose request headers did not arrive within %gs",
            self.server.options.header_timeout,
        )
        self._close_now(abort=True)

    def drain(self) -> None:
        """The listener is closed: finish the request in flight (`request_done` closes after
        it), give an idle connection a short grace for the request its client may be sending,
        then close."""
        if self.closed or self.lingering or self.busy:
            return
        if not self.headers_pending and self.grace_timer is None:
            self.grace_timer = self.loop.call_later(NEW_CONNECTION_GRACE, self._grace_over)

    def _grace_over(self) -> None:
        self.grace_timer = None
        if not (self.closed or self.lingering or self.headers_pending or self.busy):
            self.close()

    def _cancel_timers(self) -> None:
        for timer in (self.header_timer, self.grace_timer):
            if timer is not None:
                timer.cancel()
        self.header_timer = self.grace_timer = None


class GracefulServer(uvicorn.Server):
    """uvicorn.Server with the guarantees above, and Kubernetes' stop.

    On SIGTERM the pod is removed from the Service endpoints only after readiness fails and
    the endpoints controller catches up, and API servers keep reusing pooled keep-alive
    connections meanwhile. So: `/readyz` turns false and every response carries
    `Connection: close` for `shutdown_delay` seconds while the server keeps accepting; then new
    SYNs are dropped, the accept queue is drained and the listener closed; requests in flight
    finish, idle connections get NEW_CONNECTION_GRACE seconds for a request already on its
    way; everything is closed after `grace_period`. A second signal skips the delay.
    """

    def __init__(self, config: uvicorn.Config, app: Any, options: ServeOptions) -> None:
        super().__init__(config)
        self.jobguard_app = app
        self.options = options
        self.live: set[_Connection] = set()
        self.evicted = 0
        """Idle connections closed to make room (`evict_idle`)."""
        self.listeners: list[listening.Listener] = []
        self.acceptors: list[listening.Acceptor] = []
        self.draining = False
        """Stopping began: responses carry Connection: close."""
        self.stopping = False
        """The listener is closed: connections are drained."""
        self.stop_at: float | None = None
        """When the delayed stop is due (a signal came)."""
        self.requests: set[asyncio.Task[None]] = set()
        """The requests being served (`_Guard`), cancelled once the grace period is over."""
        fd_limit = listening.raise_descriptor_limit()
        self.max_connections = options.max_connections
        if 2 * self.max_connections + 64 > fd_limit:
            self.max_connections = max((fd_limit - 64) // 2, 1)
            log.warning(
                "open-file limit %d: serving at most %d connections (not %d)",
                fd_limit,
                self.max_connections,
                options.max_connections,
            )

    def evict_idle(self, new: _Connection) -> bool:
        """Over `max_connections`: close the connection idle the longest (not `new`), so that
        idle connections, however many a client holds open, never keep requests out; False
        when every other one is in a request."""
        idle = [c for c in self.live if c is not new and c.idle()]
        if not idle:
            return False
        min(idle, key=lambda c: c.active).evict()
        self.evicted += 1
        if self.evicted == 1 or self.evicted % 1000 == 0:
            log.warning(
                "over %d open connections: closing the longest idle (%d so far)",
                self.max_connections,
                self.evicted,
            )
        return True

    async def startup(self, sockets: list[Any] | None = None) -> None:
        # uvicorn's own startup, with our listening sockets and protocol around its own, and the
        # TLS handshake bounded by the header timeout.
        await self.lifespan.startup()
        if self.lifespan.should_exit:  # the app's start-up failed (logged by uvicorn)
            sys.exit(ExitCode.UNAVAILABLE)
        config = self.config
        try:
            self.listeners = listening.bind(
                config.host, config.port, 2 * self.max_connections, config.backlog
            )
        except OSError as exc:
            log.error(
                "cannot listen on %s (the webhook port): %s",
                listening.address_text(config.host, config.port),
                exc.strerror or exc,
            )
            await self.lifespan.shutdown()
            sys.exit(ExitCode.UNAVAILABLE)

        def connection() -> asyncio.Protocol:
            outer = _Connection(self)
            # The protocol copies `app_state` into each request's scope["state"]: the lifespan's
            # state (read through, as uvicorn shares it), and the connection for `_Guard`.
            app_state = ChainMap({CONNECTION: outer}, self.lifespan.state)
            outer.inner = config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=self.server_state, app_state=app_state
            )
            return outer

        self.acceptors = [
            listening.Acceptor(
                sock,
                connection,
                config.ssl,
                handshake_timeout=self.options.header_timeout,
                shutdown_timeout=LINGER_SECONDS,
                backlog=config.backlog,
            )
            for sock in self.listeners
        ]
        for acceptor in self.acceptors:
            acceptor.start()
        scheme = "https" if config.ssl else "http"
        for sock in self.listeners:
            host, port = sock.getsockname()[:2]
            log.info("Uvicorn running on %s://%s", scheme, listening.address_text(host, port))
        self.started = True
        tls_manager = getattr(self.jobguard_app.state, "tls", None)
        if tls_manager is not None:
            tls_manager.serving = True  # /readyz may now say ready
        # The port is bound: only now is the server ready.
        settings = self.jobguard_app.state.settings
        log.info("jobguard ready (kubernetesVersion %s)", settings.semantics.version)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT stop the server (`on_signal`) while it serves; the handlers
        before are restored after. (uvicorn's own would raise the signal again once stopped:
        here the stop is the signal's whole effect, and the process exits 0.)"""
        loop = asyncio.get_running_loop()

        def handler(sig: int, _frame: object) -> None:
            loop.call_soon_threadsafe(self.on_signal, sig)

        previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for sig, handler_before in previous.items():
                signal.signal(sig, handler_before)

    def on_signal(self, sig: int) -> None:
        self.jobguard_app.state.ready = False
        self._start_draining()
        name = signal.Signals(sig).name
        if self.should_exit:  # a third signal: close everything now
            self.force_exit = True
            return
        # Ctrl-C is someone at a terminal, not the kubelet: no endpoints to wait for.
        if self.stop_at is not None or self.options.shutdown_delay <= 0 or sig == signal.SIGINT:
            log.info("%s: stopping now", name)
            self.should_exit = True
            return
        log.info(
            "%s: not ready; serving for %gs more while endpoints drop this pod, then stopping",
            name,
            self.options.shutdown_delay,
        )
        self.stop_at = time.monotonic() + self.options.shutdown_delay
        asyncio.get_running_loop().call_later(self.options.shutdown_delay, self._delay_over)

    def _delay_over(self) -> None:
        self.should_exit = True  # uvicorn's main loop sees it within 0.1 s

    def _start_draining(self) -> None:
        """Every response from now on carries `Connection: close` (see _Guard)."""
        self.draining = True

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.grace_period
        self.jobguard_app.state.ready = False
        self._start_draining()
        log.info("stopping: closing the listener, draining %d connections", len(self.live))
        await self._close_listeners()
        self.stopping = True
        for connection in list(self.live):
            connection.drain()
        while self._open_connections() and not self.force_exit and loop.time() < deadline:
            await asyncio.sleep(0.02)
        if self._open_connections():
            log.error(
                "grace period over: closing %d connections, cancelling %d requests",
                self._open_connections(),
                len(self.requests),
            )
            for connection in list(self.live):
                if connection.transport is not None:
                    connection.transport.abort()
            for task in list(self.requests):
                task.cancel()
            await asyncio.sleep(0)
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _close_listeners(self) -> None:
        """Hold new connections back, accept every one the kernel already established (their
        clients may have written a request), then close the listening sockets."""
        loop = asyncio.get_running_loop()
        held = all([listening.refuse_new_connections(sock) for sock in self.listeners])
        deadline = loop.time() + 1.0
        empty_twice = 0
        while loop.time() < deadline and empty_twice < 2:
            lengths = [listening.accept_queue_length(sock) for sock in self.listeners]
            if not held or None in lengths:
                await asyncio.sleep(0.05)  # cannot see the queue: give the loop time to accept
                break
            empty_twice = empty_twice + 1 if not any(lengths) else 0
            await asyncio.sleep(0.005)
        for acceptor in self.acceptors:
            acceptor.close()

    def _open_connections(self) -> int:
        accepted = sum(sock.open_connections for sock in self.listeners)
        return max(accepted, len(self.live))


def serve(app: Any, options: ServeOptions, ssl_context: ssl.SSLContext | None = None) -> None:
    """Run `app` until stopped (see GracefulServer)."""
    rate_limit_logs()
    loop, http = fast_stack(options.loop, options.http)
    log.info("event loop %s, HTTP protocol %s", loop, http)
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        loop=loop,
        http=http,
        # The API server calls the webhook directly: no proxy headers to read.
        proxy_headers=False,
        ssl_context_factory=(lambda _config, _default: ssl_context) if ssl_context else None,
        log_config=None,
        access_log=False,
        timeout_keep_alive=options.idle_timeout,
        lifespan="on",
    )
    server = GracefulServer(config, app, options)
    config.app = _Guard(app, server)
    # Everything loaded so far lives as long as the process: out of the cyclic collector's
    # full passes, which would otherwise walk it again and again (a pause in the tail latency).
    gc.collect()
    gc.freeze()
    server.run()
