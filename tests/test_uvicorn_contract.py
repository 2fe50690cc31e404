"""The contract between `jobguard.app.server.uvicorn_server` and the pinned uvicorn, as behaviour:
what the module uses beyond uvicorn's documented configuration (listed in its docstring) is
driven here as the module drives it. A uvicorn upgrade fails here first, naming what moved,
instead of silently undoing a bound (the header timeout, the connection bound, the lingering
close, the graceful stop)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from collections import ChainMap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from jobguard.app.server.uvicorn_server import CONNECTION

ROOT = Path(__file__).resolve().parent.parent


def test_uvicorn_is_the_pinned_version() -> None:
    """The contract below was checked against this version: an upgrade changes the pin and
    re-reads uvicorn_server against the new uvicorn."""
    pinned = re.search(r"^uvicorn==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M)
    assert pinned is not None
    assert uvicorn.__version__ == pinned.group(1)


def test_serve_runs_the_steps_graceful_server_replaces_in_order() -> None:
    """`Server.serve` enters `capture_signals`, makes `lifespan` (startup, shutdown,
    should_exit, state) before `startup`, stops when `should_exit` is set, runs `shutdown`
    when `started`, and leaves the signals to `capture_signals` alone."""
    steps: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            steps.append(f"app {message['type']}")
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return

    class Recording(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            steps.append("signals")
            yield
            steps.append("signals restored")

        async def startup(self, sockets: list[Any] | None = None) -> None:
            await self.lifespan.startup()
            assert not self.lifespan.should_exit
            assert isinstance(self.lifespan.state, dict)
            steps.append("startup")
            self.started = True
            self.should_exit = True

        async def shutdown(self, sockets: list[Any] | None = None) -> None:
            steps.append("shutdown")
            await self.lifespan.shutdown()

    server = Recording(uvicorn.Config(app, lifespan="on", log_config=None))
    asyncio.run(server.serve())
    assert steps == [
        "signals",
        "app lifespan.startup",
        "startup",
        "shutdown",
        "app lifespan.shutdown",
        "signals restored",
    ]


def test_the_main_loop_stops_when_should_exit_is_set_while_serving() -> None:
    """The delayed stop (`GracefulServer.on_signal`) sets `should_exit` from a timer."""
    steps: list[str] = []

    class Later(uvicorn.Server):
        async def startup(self, sockets: list[Any] | None = None) -> None:
            self.started = True
            asyncio.get_running_loop().call_later(0.2, setattr, self, "should_exit", True)

        async def shutdown(self, sockets: list[Any] | None = None) -> None:
            steps.append("shutdown")

    server = Later(uvicorn.Config(_no_requests, lifespan="off", log_config=None))
    asyncio.run(asyncio.wait_for(server.serve(), 5))
    assert steps == ["shutdown"]


async def _no_requests(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("no request is served here")


def test_a_failed_lifespan_startup_is_seen_as_should_exit() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no"})

    seen: list[bool] = []

    class Recording(uvicorn.Server):
        async def startup(self, sockets: list[Any] | None = None) -> None:
            await self.lifespan.startup()
            seen.append(self.lifespan.should_exit)
            self.should_exit = True  # GracefulServer exits here

    asyncio.run(Recording(uvicorn.Config(app, lifespan="on", log_config=None)).serve())
    assert seen == [True]


def test_the_ssl_context_factory_gives_config_ssl() -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    config = uvicorn.Config(
        "x:y", ssl_context_factory=lambda _config, _default: context, log_config=None
    )
    config.app = lambda: None  # loaded below: no import
    with contextlib.suppress(Exception):
        config.load()
    assert config.ssl is context


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def write(self, data: Any) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8443)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


@pytest.mark.parametrize("http", ["h11", "httptools"])
@pytest.mark.parametrize("close", [False, True])
def test_protocols_built_as_startup_builds_them_serve_the_connection_and_honour_close(
    http: str, close: bool
) -> None:
    """`config.http_protocol_class(config=, server_state=, app_state=)` serves a request; each
    request's scope["state"] reads through `app_state` (a ChainMap: the connection, then the
    lifespan's state); `Connection: close` on the response closes the transport after it, and
    only then (the stop and the 503 rely on it)."""
    scopes: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        await receive()
        headers = [(b"content-length", b"2")] + ([(b"connection", b"close")] if close else [])
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    async def scenario() -> tuple[_Transport, bool]:
        config = uvicorn.Config(app, http=http, lifespan="off", log_config=None)
        config.load()
        server = uvicorn.Server(config)
        lifespan_state = {"from": "lifespan"}
        protocol = config.http_protocol_class(  # type: ignore[call-arg]
            config=config,
            server_state=server.server_state,
            app_state=ChainMap({CONNECTION: "the connection"}, lifespan_state),
        )
        transport = _Transport()
        protocol.connection_made(transport)
        lifespan_state["later"] = "seen"
        request = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
        protocol.data_received(request)
        for _ in range(50):
            await asyncio.sleep(0)
        closed = transport.closed
        protocol.connection_lost(None)
        return transport, closed

    transport, closed = asyncio.run(scenario())
    state = scopes[0]["state"]
    assert (state[CONNECTION], state["from"], state["later"]) == (
        "the connection",
        "lifespan",
        "seen",
    )
    assert transport.written.startswith(b"HTTP/1.1 200 ")
    assert transport.written.endswith(b"\r\n\r\n{}")
    assert closed is close
