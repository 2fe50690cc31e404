"""The README documents every rule ID."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobguard.validators import RULES

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


@pytest.mark.parametrize("rule_id", [r.id for r in RULES])
def test_readme_lists_rule(rule_id: str) -> None:
    assert f"| {rule_id} |" in README
