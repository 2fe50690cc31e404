"""Manifest reading: the fast reader never changes what YAML 1.1 (kubectl) would read."""

from __future__ import annotations

import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from jobguard.app.cli.manifests import (
    _JSON_FLOAT,
    MAX_DEPTH,
    K8sLoader,
    _BlockLines,
    _documents,
    _has_json_float,
    _load,
    _load_slow,
    _needs_shape_scan,
    locate,
    parse,
    path_tokens,
)
from tests.corpus import DATA, realworld_files

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
    "1e3: x",
    "a: {+.5: x, 1.5e3: y}",
    "10: x\n0x1F: y",
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


# --- quoted numbers and strings stay on the fast reader ------------------------------------------

QUOTED = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations: {owner: "data-platform", retries: '3'}
spec:
  completions: 8
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: "registry.example.com/ml/trainer:1.4.2"
          args: ["--epochs", "10", "--lr", "0.001", "--resume", "true", "--x", "null"]
          env:
            - {name: WORLD_SIZE, value: "8"}
            - {name: USE_GPU, value: "yes"}
            - {name: MODE, value: "010"}
          resources:
            requests: {cpu: "2", memory: 4Gi}
            limits: {cpu: "2", nvidia.com/gpu: "1"}
"""


def test_quoted_scalars_are_read_by_the_fast_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quoted numbers, booleans and nulls (and quoted `yes`, `010`, which YAML 1.1 would
    resolve unquoted) do not send a document to PyYAML, and read as PyYAML reads them."""
    expected = _load_slow(QUOTED)
    assert expected[0]["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] == "yes"

    def refuse(chunk: str) -> list[object]:
        raise AssertionError("read by PyYAML")

    monkeypatch.setattr("jobguard.app.cli.manifests._load_slow", refuse)
    assert _load(QUOTED) == expected


@pytest.mark.parametrize(
    "text",
    [
        'a: "yes"\nb: yes',
        "a: '010'\nb: [010]",
        'a: "1_000"\nb: {c: 1_000}',
        'env: ["on"]\non: push',
        'a: "yes"\n# yes: a plain word in a comment is taken for a scalar (the safe side)\n',
    ],
)
def test_a_plain_yaml_1_1_scalar_beside_a_quoted_one_is_read_by_pyyaml(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _load_slow(text)
    calls: list[str] = []

    def counted(chunk: str) -> list[object]:
        calls.append(chunk)
        return [yaml.load(chunk, Loader=K8sLoader)]

    monkeypatch.setattr("jobguard.app.cli.manifests._load_slow", counted)
    assert _load(text) == expected
    assert calls == [text]


TOKENS = [
    *("yes", "no", "on", "off", "y", "n", "true", "False", "NULL", "~", "null"),
    *("010", "0o17", "0x1F", "0b11", "1_000", "1:20", "1e3", "12e03", "+3", "-0", "00", "08"),
    *(".5", "1.", "1.0e+3", ".inf", "-.Inf", "685_230.15", "2", "10", "0.001", "<<", "="),
    *("abc", "a b", "2026-01-01", "2026-01-01T00:00:00Z", "-", "x:y", "#c"),
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(TOKENS), st.sampled_from(["", "'", '"']), st.booleans()),
        min_size=1,
        max_size=6,
    )
)
def test_fast_reader_agrees_with_yaml_1_1_on_any_mix(
    entries: list[tuple[str, str, bool]],
) -> None:
    lines = []
    for i, (token, quote, in_list) in enumerate(entries):
        if not quote and token in ("-", "#c", "x:y", "a b", "<<"):
            quote = '"'  # not a scalar unquoted
        scalar = f"{quote}{token}{quote}"
        lines.append(f"k{i}: [{scalar}]" if in_list else f"k{i}: {scalar}")
    text = "\n".join(lines) + "\n"
    try:
        expected = _load_slow(text)
    except (yaml.YAMLError, ValueError) as refused:
        # Not YAML PyYAML reads (e.g. `=` unquoted): the fast reader refuses it alike.
        with pytest.raises(type(refused)):
            _load(text)
        return
    assert repr(_load(text)) == repr(expected)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list(b'0179.eE-+:,[]{}"a ')), max_size=16).map(bytes))
def test_the_float_search_finds_what_the_float_pattern_finds(dumped: bytes) -> None:
    assert _has_json_float(dumped) == (_JSON_FLOAT.search(dumped) is not None)


@pytest.mark.parametrize(
    ("dumped", "found"),
    [
        (b'{"a":1.5}', True),
        (b'{"a":[2,-10e3]}', True),
        (b'{"a":-0.25,"b":1}', True),
        (b'{"a":10,"b":"trainer:1.4.2","c":"1.5"}', False),
        (b'{"a":"x,1.5}"}', True),  # inside a string: the pattern's own false alarm, kept
        (b'{"a":1.5.2}', False),
    ],
)
def test_the_float_search_on_json(dumped: bytes, found: bool) -> None:
    assert _has_json_float(dumped) is found
    assert (_JSON_FLOAT.search(dumped) is not None) is found


# --- positions without composing -------------------------------------------------------------------

BLOCK_STYLES = """\
# leading comment
apiVersion: batch/v1
kind: Job
metadata:
  name: styles
  labels:
    app.kubernetes.io/name: x   # trailing comment
  annotations: {a: b}
spec:
  template:
    metadata:
      labels:
        a: b
    spec:
      containers:
      - name: indentless
        command:
          - sh
          - -c
          - |
            echo "key: value"
            - not an item
        args: ['a', 'b: c']
      -
        name: dash-alone
        image: "quoted"
      - name: anchored
        env: &env
          - {name: A, value: "1"}
      - name: aliased
        env: *env
      initContainers:
        - name: init
          image: >-
            folded
          ports:
            - containerPort: 80
              name: http
      volumes:
        - name: data
          emptyDir: {}
      nodeSelector:
        "quoted/key": v
      tolerations:
      - key: k
        operator: Exists
"""


def _all_paths(value: object, prefix: str = "") -> list[str]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            name = str(key)
            plain = name.replace("-", "").replace("_", "").isalnum()
            path = (
                f"{prefix}.{name}" if prefix and plain else f"{prefix}[{name}]" if prefix else name
            )
            paths += _all_paths(child, path)
        paths.append(f"{prefix}.missing" if prefix else "missing")
    elif isinstance(value, list):
        for i, child in enumerate(value):
            paths += _all_paths(child, f"{prefix}[{i}]")
        paths += [f"{prefix}[{len(value)}]", f"{prefix}.name"]
    return paths


def _agree(text: str) -> tuple[int, int]:
    """Every path of every object, located by the block reader and by composing: the same
    answer whenever the block reader answers. Returns (paths, answered by the block reader)."""
    total = answered = 0
    for manifest in parse(text, "f.yaml"):
        root = yaml.compose(manifest.source, Loader=K8sLoader)
        lines = _BlockLines(manifest.source)
        for path in _all_paths(manifest.data):
            total += 1
            found = lines.locate([*manifest.prefix, *path_tokens(path)])
            if found is None:
                continue
            answered += 1
            assert (found[0] + 1, found[1] + 1) == locate(root, path, manifest.prefix), path
    return total, answered


def test_block_reader_agrees_with_the_composer() -> None:
    total, answered = _agree(BLOCK_STYLES)
    # Most of it is read without composing; anchors, aliases and quoted keys are composed.
    assert answered > total * 3 // 4
    for path in [*realworld_files(), *sorted(DATA.glob("c*/**/*.yaml"))]:
        _agree(path.read_text())
    _agree(QUOTED)
    _agree((DATA / "check" / "anchored.yaml").read_text())


# Block-style YAML as people indent it: keys, scalars (some quoted), mappings and sequences
# nested, sequences indented or not, `-` alone on its line, comments and blank lines between.
_KEYS = st.sampled_from(["a", "b", "name", "spec", "x-y", "k8s.io/z"])
_SCALARS = st.sampled_from(["1", "v", "'q'", '"d"', "[1, 2]", "{}", "|\n  text\n  more"])
_NODES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, min_size=1, max_size=3)
        | st.dictionaries(_KEYS, children, min_size=1, max_size=3)
    ),
    max_leaves=12,
)


def _block(node: object, column: int, draw: st.DrawFn) -> list[str]:
    """Lines of `node` at `column` (its first line's text starts there; the caller prefixes it)."""
    pad = " " * column
    lines: list[str] = []
    if isinstance(node, dict):
        for key, child in node.items():
            if draw(st.booleans()) and draw(st.booleans()):
                lines.append(draw(st.sampled_from(["", f"{pad}# note"])))
            if isinstance(child, str):
                head, _, rest = child.partition("\n")
                lines.append(f"{pad}{key}: {head}")
                lines += [f"{pad}{line}" for line in rest.split("\n") if rest]
            else:
                lines.append(f"{pad}{key}:")
                indent = draw(st.sampled_from([0, 2, 4])) if isinstance(child, list) else 2
                lines += _block(
                    child, column + (indent or 2 if isinstance(child, dict) else indent), draw
                )
    elif isinstance(node, list):
        for child in node:
            if isinstance(child, str):
                head, _, rest = child.partition("\n")
                lines.append(f"{pad}- {head}")
                lines += [f"{pad}  {line}" for line in rest.split("\n") if rest]
            elif isinstance(child, dict) and draw(st.booleans()):
                lines.append(f"{pad}-")  # `-` alone: the mapping on the lines below
                lines += _block(child, column + 2, draw)
            else:
                inner = _block(child, column + 2, draw)
                lines.append(f"{pad}- {inner[0].lstrip(' ')}")
                lines += inner[1:]
    return lines


@st.composite
def _block_documents(draw: st.DrawFn) -> str:
    root = draw(st.dictionaries(_KEYS, _NODES, min_size=1, max_size=4))
    return "\n".join(_block(root, 0, draw)) + "\n"


@settings(max_examples=300, deadline=None)
@given(_block_documents())
def test_block_reader_agrees_with_the_composer_on_any_nesting(text: str) -> None:
    total, answered = _agree(text)
    assert total >= answered > 0


def test_block_reader_steps_aside_for_what_it_does_not_follow() -> None:
    text = 'a:\n  b: "multi\n  c: line"\n'
    assert _BlockLines(text).locate(["a", "b"]) is None
    (manifest,) = parse(text, "f.yaml")
    assert manifest.locate("a.b") == (2, 3)
    mixed = "a:\n  b: 'say \"hi'\n  c: 1\n"  # both kinds of quotes on a line: composed
    assert _BlockLines(mixed).locate(["a", "c"]) is None
    (manifest,) = parse(mixed, "f.yaml")
    assert manifest.locate("a.c") == (3, 3)
    anchored = "x: &a\n  y: 1\nz:\n  <<: *a\n"
    assert _BlockLines(anchored).locate(["z", "y"]) is None
    (manifest,) = parse(anchored, "f.yaml")
    assert manifest.locate("z.y") == (2, 3)  # through the merge key, in the anchored mapping


# The deep-indentation test of `_needs_shape_scan` as a regex: a line that starts with
# MAX_DEPTH // 2 - 8 indentation characters or more. The scan finds the same lines without it.
_DEEP_INDENT_REFERENCE = re.compile(rf"^[ \t?:-]{{{MAX_DEPTH // 2 - 8},}}", re.MULTILINE)
_RUN_CHARACTERS = st.sampled_from([" ", "\t", "?", ":", "-", "x", "é", "\r"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), _RUN_CHARACTERS, st.integers(0, MAX_DEPTH // 2 + 4)), max_size=6
    )
)
def test_deep_indentation_is_found_where_the_line_pattern_finds_it(
    runs: list[tuple[bool, str, int]],
) -> None:
    # Runs of one character, each maybe after a line break: long indentations, some broken by
    # a character that is not indentation, some not at a line's start.
    text = "".join(("\n" if line else "") + character * length for line, character, length in runs)
    expected = _DEEP_INDENT_REFERENCE.search(text) is not None
    assert _needs_shape_scan(text) is expected
