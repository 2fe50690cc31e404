"""The differential test's list of known disagreements (tests/realapi/disagreements.yaml), checked
without the control plane: every entry is well-formed and names requests the test makes, and the
generated requests are the same on every run (the list names them by id)."""

from __future__ import annotations

import fnmatch
import re

import pytest
import yaml

from tests.realapi.differential import (
    DISAGREEMENTS,
    Listed,
    corpus,
    generated_items,
    listed,
    update_items,
    volume_items,
)


def _request_keys() -> list[str]:
    return [
        f"{item.source}/{item.id}"
        for item in (*corpus(), *volume_items(), *generated_items(), *update_items())
    ]


def _check_entry(entry: Listed, keys: list[str]) -> None:
    assert len(entry.reason) > 80, f"{entry.ids}: say which upstream code path and release"
    assert all(re.fullmatch(r"1\.[0-9]+", v) for v in entry.versions), entry.versions
    for pattern in entry.ids:
        assert any(fnmatch.fnmatchcase(key, pattern) for key in keys), pattern


def test_every_listed_pattern_names_requests_the_differential_test_makes() -> None:
    # The file is a list even when it lists nothing (a stray mapping would be read as no entry).
    assert isinstance(yaml.safe_load(DISAGREEMENTS.read_text()), list)
    entries = listed()
    if entries:
        keys = _request_keys()
        for entry in entries:
            _check_entry(entry, keys)


def test_the_entry_checks_refuse_what_they_should() -> None:
    # The list is empty today: the checks its entries would get are tried on made-up ones.
    keys = _request_keys()
    why = "x" * 81
    _check_entry(Listed(("pod-volumes/*",), ("1.37",), why), keys)
    for bad in (
        Listed(("pod-volumes/*",), (), "too short"),
        Listed(("pod-volumes/*",), ("v1.37",), why),
        Listed(("no-such-source/*",), (), why),
    ):
        with pytest.raises(AssertionError):
            _check_entry(bad, keys)


def test_the_generated_requests_are_the_same_on_every_run() -> None:
    first = [(item.id, item.body) for item in generated_items(30)]
    again = [(item.id, item.body) for item in generated_items(30)]
    assert first == again
    assert len({item_id for item_id, _ in first}) == len(first) > 20
    updates = [(item.id, item.change) for item in update_items(30)]
    assert updates == [(item.id, item.change) for item in update_items(30)]
