"""The contract between `jobguard.app.server.uvicorn_server` (the one module that reaches into
uvicorn beyond its public configuration) and the pinned uvicorn: the names it uses must be
there. A uvicorn upgrade fails here first, naming what moved, instead of silently undoing a
bound (the header timeout, the connection bound, the lingering close, the graceful stop)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.h11_impl import RequestResponseCycle as H11Cycle
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle as HttpToolsCycle

from jobguard.app.server import uvicorn_server

ROOT = Path(__file__).resolve().parent.parent


def test_uvicorn_is_the_pinned_version() -> None:
    """The contract below was checked against this version: an upgrade changes the pin and
    re-reads uvicorn_server against the new uvicorn."""
    pinned = re.search(r"^uvicorn==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M)
    assert pinned is not None
    assert uvicorn.__version__ == pinned.group(1)


@pytest.mark.parametrize("cycle", [H11Cycle, HttpToolsCycle])
def test_request_cycles_carry_the_state_the_bounds_read(cycle: Any) -> None:
    source = inspect.getsource(cycle.__init__)
    for attribute in ("response_complete", "response_started", "keep_alive", "more_body"):
        assert f"self.{attribute}" in source, f"{cycle.__module__}: no {attribute}"


@pytest.mark.parametrize("protocol", [H11Protocol, HttpToolsProtocol])
def test_protocols_are_built_and_driven_as_uvicorn_server_does(protocol: Any) -> None:
    parameters = inspect.signature(protocol.__init__).parameters
    assert {"config", "server_state", "app_state", "_loop"} <= set(parameters)
    source = inspect.getsource(protocol)
    assert "self.cycle" in source and "self.app" in source
    for method in ("connection_made", "data_received", "eof_received", "shutdown"):
        assert callable(getattr(protocol, method, None)), f"{protocol.__name__}.{method}"
    assert callable(service_unavailable)


def test_the_server_internals_the_stop_uses() -> None:
    server = uvicorn.Server(uvicorn.Config(app=service_unavailable))
    assert isinstance(server._captured_signals, list)
    assert isinstance(server.server_state.tasks, set)
    assert callable(server._log_started_message)
    assert {"should_exit", "force_exit"} <= set(vars(server))
    assert callable(uvicorn_server.GracefulServer.handle_exit)
