"""Manifest reading: the fast reader never changes what YAML 1.1 (kubectl) would read."""

from __future__ import annotations

import pytest
import yaml

from jobguard.app.manifests import K8sLoader, _documents, _load, _load_slow, parse
from tests.corpus import realworld_files

TRICKY = [
    "a: yes",
    "a: 'yes'",
    "on: push",
    "a: 010",
    "a: '010'",
    "a: 1_000",
    "a: 1:20",
    "a: 1e3",
    "a: 0o17",
    "a: !!str 5",
    "b: &x {c: 1}\nd: {<<: *x}",
    "a: 0b11",
    "a: .inf",
    "a: -.5",
    "a: 0x1F",
    "a: ~",
    "a: 2026-01-01T00:00:00Z",
    'a: "2026-01-01"',
    "cmd: ['#!/bin/sh', x]",
    "a: +3",
    "a: -0",
    "a: 00",
    "a: 1.",
    "a: [yes, no, Off]",
    "{a: 1, b: [1, 2]}",
    "a: N",
    "a: |\n  multi\n  line\n",
    "a: 'it''s'",
    'a: "tab\\there"',
    "? complex\n: key",
]


@pytest.mark.parametrize("text", TRICKY)
def test_fast_reader_agrees_with_yaml_1_1(text: str) -> None:
    assert _load(text) == _load_slow(text)


def test_realworld_corpus_reads_identically() -> None:
    for path in realworld_files():
        for _, chunk in _documents(path.read_text()):
            assert _load(chunk) == _load_slow(chunk), path.name


def test_unquoted_timestamps_stay_strings() -> None:
    data = yaml.load("startTime: 2026-01-01T10:00:00Z\n", Loader=K8sLoader)
    assert data == {"startTime": "2026-01-01T10:00:00Z"}
    (manifest,) = parse("status:\n  startTime: 2026-01-01T10:00:00Z\n", "f.yaml")
    assert manifest.data["status"]["startTime"] == "2026-01-01T10:00:00Z"


def test_documents_keep_their_lines() -> None:
    text = "a: 1\n---\nb: 2\n...\n---\nc:\n  d: [1,\n    2]\n"
    manifests = parse(text, "f.yaml")
    assert [m.data for m in manifests] == [{"a": 1}, {"b": 2}, {"c": {"d": [1, 2]}}]
    assert manifests[2].locate("c.d[1]") == (8, 5)
    assert manifests[1].locate("b") == (3, 1)
