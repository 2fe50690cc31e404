"""Label keys and values in the words of the release judged: IsQualifiedName and
IsValidLabelValue up to 1.34 (apimachinery v0.34 pkg/util/validation), content.IsLabelKey and
content.IsLabelValue from 1.35 (apimachinery v0.35 pkg/api/validate/content): lengths in
"characters" then "bytes", a key with more than one '/' "a qualified name" then "a valid label
key". The same manifest through a label, a selector's matchLabels, an annotation key and a
toleration key."""

from __future__ import annotations

from typing import Any

import pytest

from jobguard.validators.names import label_wording
from jobguard.validators.versions import RELEASES
from tests.builders import create, detailed_causes, settings
from tests.pod_cases import S, job

LONG_KEY = "example.com/" + "a" * 64
MULTI_SLASH_KEY = "a/b/c"
LONG_VALUE = "v" * 64
KEY_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
    "prefix and '/' (e.g. 'example.com/MyName')"
)
VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SELECTOR = f"{S}.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"


def _manifest() -> dict[str, Any]:
    selector = {"matchLabels": {LONG_KEY: LONG_VALUE, MULTI_SLASH_KEY: "x"}}
    term = {"topologyKey": "zone", "labelSelector": selector}
    manifest = job(
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        tolerations=[
            {"key": LONG_KEY, "operator": "Exists"},
            {"key": MULTI_SLASH_KEY, "operator": "Exists"},
        ],
    )
    manifest["metadata"]["labels"] = {LONG_KEY: LONG_VALUE, MULTI_SLASH_KEY: "x"}
    manifest["metadata"]["annotations"] = {LONG_KEY: "x", MULTI_SLASH_KEY: "y"}
    return manifest


def _expected(unit: str, lead: str) -> list[tuple[str, str, str, str]]:
    long_key = f'Invalid value: "{LONG_KEY}": name part must be no more than 63 {unit}'
    long_value = f'Invalid value: "{LONG_VALUE}": must be no more than 63 {unit}'
    multi = f'Invalid value: "{MULTI_SLASH_KEY}": {lead} {KEY_REGEX}'
    inv = "FieldValueInvalid"
    match_labels = f"{SELECTOR}.labelSelector.matchLabels"
    return [
        ("IM-008", "metadata.labels", inv, long_key),
        ("IM-008", "metadata.labels", inv, long_value),
        ("IM-008", "metadata.labels", inv, multi),
        ("IM-008", "metadata.annotations", inv, long_key),
        ("IM-008", "metadata.annotations", inv, multi),
        ("POD-020", match_labels, inv, long_key),
        ("POD-020", match_labels, inv, long_value),
        ("POD-020", match_labels, inv, multi),
        ("POD-021", f"{S}.tolerations[0].key", inv, long_key),
        ("POD-021", f"{S}.tolerations[1].key", inv, multi),
    ]


@pytest.mark.parametrize("version", RELEASES)
def test_each_release_words_keys_and_values_as_its_api_server(version: str) -> None:
    if version in ("1.33", "1.34"):
        expected = _expected("characters", "a qualified name")
    else:
        expected = _expected("bytes", "a valid label key")
    assert detailed_causes(create(_manifest(), settings(version))) == expected


def test_lengths_are_utf8_bytes_as_in_go() -> None:
    # 32 characters, 64 bytes: too long for Go's len() in every release.
    value = "é" * 32
    assert label_wording("1.34").value(value) == ("must be no more than 63 characters", VALUE_REGEX)
    assert label_wording("1.35").value(value) == ("must be no more than 63 bytes", VALUE_REGEX)
    prefix = "é" * 127  # 254 bytes
    assert (
        label_wording("1.37").key(prefix + "/k")[0] == "prefix part must be no more than 253 bytes"
    )
    assert label_wording("1.34").key("a" * 254 + "/k") == (
        "prefix part must be no more than 253 characters",
    )
