"""Suite-wide pytest hooks: every test under tests/realapi carries the `controlplane` marker (it
needs the real control plane, which `make realapi` builds and starts), and a run that deselects
them says so instead of passing over them in silence; the rules' firings are recorded for the
catalogue's check of its `requests` (tests/firings.py); the stand-in API server's fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Before any test module imports the pipeline's evaluate: every verdict is recorded.
from tests import firings
from tests.apiserver import StandIn, connected, serving

REALAPI = Path(__file__).parent / "realapi"
REASON = "they run against the real control plane: `make realapi` (part of `make test`)"
_deselected: list[pytest.Item] = []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if REALAPI in Path(item.path).parents:
            item.add_marker(pytest.mark.controlplane)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _deselected.extend(i for i in items if i.get_closest_marker("controlplane") is not None)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    # With pytest-xdist the workers collect, so the controller knows only the mark expression.
    excluded = "not controlplane" in (config.option.markexpr or "")
    if _deselected or excluded:
        count = f"{len(_deselected)} " if _deselected else ""
        terminalreporter.write_line(
            f"controlplane: {count}test(s) deselected: {REASON}", yellow=True
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    firings.worker_done(session.config)
    firings.check(session)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    firings.node_down(node)


# The stand-in API server (tests/apiserver.py) for the tests of the cluster client, one per module,
# and a client connected to it; a module may define its own.
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    with serving(tmp_path_factory.mktemp("apiserver")) as running:
        yield running


@pytest.fixture
def cluster(server: StandIn, tmp_path: Path) -> Iterator[Any]:
    with connected(server, tmp_path) as connection:
        yield connection
