"""Suite-wide pytest hooks: the e2e suite (tests/e2e, marker `e2e`) is deselected by default
(`-m "not e2e"` in pyproject.toml) and the run says so, with the reason, instead of passing over
it in silence."""

from __future__ import annotations

from typing import Any

import pytest

# Before any test module imports the pipeline's evaluate: every verdict is recorded.
from tests import firings

E2E_REASON = (
    "they need a real cluster; run them with JOBGUARD_E2E_KUBECONFIG=<kubeconfig> "
    "pytest -m e2e tests/e2e (tests/e2e/test_live_cluster.py says what they create)"
)
_deselected_e2e: list[pytest.Item] = []


def pytest_deselected(items: list[pytest.Item]) -> None:
    _deselected_e2e.extend(item for item in items if item.get_closest_marker("e2e") is not None)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    # With pytest-xdist the workers collect, so the controller knows only the mark expression.
    excluded = "not e2e" in (config.option.markexpr or "")
    if _deselected_e2e or excluded:
        count = f"{len(_deselected_e2e)} " if _deselected_e2e else ""
        terminalreporter.write_line(f"e2e: {count}test(s) deselected: {E2E_REASON}", yellow=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    firings.worker_done(session.config)
    firings.check(session)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    firings.node_down(node)
