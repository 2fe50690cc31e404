"""Suite-wide pytest hooks: the build under test is the one asked for (tests/build.py); the e2e
suite (tests/e2e, marker `e2e`) is deselected by default (`-m "not e2e"` in pyproject.toml) and
the run says so, with the reason, instead of passing over it in silence."""

from __future__ import annotations

import pytest

import jobguard
from tests.build import EXPECTED_BUILD

E2E_REASON = (
    "they need a real cluster; run them with JOBGUARD_E2E_KUBECONFIG=<kubeconfig> "
    "pytest -m e2e tests/e2e (tests/e2e/test_live_cluster.py says what they create)"
)
_deselected_e2e: list[pytest.Item] = []


def pytest_configure(config: pytest.Config) -> None:
    actual = jobguard.build()
    if actual != EXPECTED_BUILD:
        raise pytest.UsageError(
            f"the suite expects the {EXPECTED_BUILD} build but imports the {actual} one "
            f"({jobguard.__file__}): `make unit` tests the tree, `make unit-compiled` the "
            "compiled copy under build/compiled"
        )


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
