"""Bounded answers and readable odd values, judged in-process (the wire is tested in
test_server_limits)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from jobguard.app.admission import exact_json as jsonfallback
from jobguard.app.admission.review import (
    LOW_MEMORY_PARSE_BYTES,
    MAX_CAUSE_CHARS,
    MAX_CAUSES,
    MAX_CONTAINERS,
    handle_mutate,
    handle_validate,
    structures,
)
from jobguard.app.config import FileConfig, parse_config
from jobguard.validators import Settings
from tests.builders import job
from tests.reviews import review

DEFAULTS = FileConfig().to_settings()
UIDS = [str(i) for i in range(250_000)]


def pathological_status_update(**status: Any) -> bytes:
    """A status update listing 250,000 pod UIDs in both uncountedTerminatedPods lists: 250,000
    ST-006 duplicates (about 4 MiB)."""
    old = job()
    old["status"] = {"active": 1, "startTime": "2026-01-01T10:00:00Z"}
    new = copy.deepcopy(old)
    new["status"].update(status, uncountedTerminatedPods={"succeeded": UIDS, "failed": UIDS})
    return orjson.dumps(review(new, old, operation="UPDATE", sub="status"))


def judge(body: bytes, settings: Settings = DEFAULTS) -> dict[str, Any]:
    outcome = handle_validate(body, settings)
    assert outcome.status == 200
    response: dict[str, Any] = orjson.loads(orjson.dumps(outcome.payload))["response"]
    return response


def test_a_denial_shows_the_first_causes_and_counts_the_rest() -> None:
    body = pathological_status_update(ready=2)  # ST-040 (ready <= active) comes after the UIDs
    encoded = orjson.dumps(handle_validate(body, DEFAULTS).payload)
    assert len(encoded) < 1024 * 1024
    response = orjson.loads(encoded)["response"]
    status = response["status"]
    causes = status["details"]["causes"]
    assert len(causes) == MAX_CAUSES
    assert causes[0] == {
        "reason": "FieldValueDuplicate",
        "message": 'Duplicate value: "0"',
        "field": "status.uncountedTerminatedPods.failed[0]",
    }
    assert causes[98]["field"] == "status.uncountedTerminatedPods.failed[98]"
    # 250,000 duplicates and the ST-040 error: 99 shown, 249,902 more.
    assert causes[-1] == {
        "reason": "FieldValueTooMany",
        "message": "249902 more errors",
        "field": "",
    }
    assert status["message"].startswith('Job.batch "pi" is invalid: [status.uncountedTerminated')
    assert status["message"].endswith("] (and 249902 more errors)")
    assert status["message"].count("Duplicate value") == 99
    assert (status["code"], response["allowed"]) == (422, False)
    # Every rule that fired is named, shown or not.
    assert response["auditAnnotations"] == {"violations": "ST-006=deny,ST-040=deny"}


def test_warnings_are_bounded_likewise() -> None:
    settings = FileConfig.model_validate({"rules": {"ST-*": {"enforcement": "warn"}}}).to_settings()
    response = judge(pathological_status_update(), settings)
    assert response["allowed"] is True
    warnings = response["warnings"]
    assert len(warnings) == MAX_CAUSES
    assert warnings[0] == 'ST-006 status.uncountedTerminatedPods.failed[0]: Duplicate value: "0"'
    assert warnings[-1] == "and 249901 more warnings"


def test_long_values_are_cut_in_causes_and_message() -> None:
    obj = job()
    key = "k" * (1024 * 1024)
    obj["metadata"]["labels"] = {key: "v", "ok": "x" * 100_000}
    response = judge(orjson.dumps(review(obj)))
    status = response["status"]
    assert [c["field"] for c in status["details"]["causes"]] == ["metadata.labels"] * 2
    for cause in status["details"]["causes"]:
        assert len(cause["message"]) <= MAX_CAUSE_CHARS
        assert cause["message"].startswith('Invalid value: "kkkk') or cause["message"].startswith(
            'Invalid value: "xxxx'
        )
    assert len(status["message"]) < 4 * MAX_CAUSE_CHARS
    assert "name part must be no more than 63 bytes" in status["message"]


def test_small_denials_are_untouched() -> None:
    obj = job(completionMode="Indexed", completions=2, parallelism=2)
    obj["spec"]["successPolicy"] = {"rules": [{"succeededCount": 3}]}
    response = judge(orjson.dumps(review(obj)))
    causes = response["status"]["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.successPolicy.rules[0].succeededCount"]
    assert "more errors" not in response["status"]["message"]


# --- values orjson refuses: an AdmissionReview with code 400 naming the field ------------------


Pad = Callable[[bytes], bytes]


@pytest.fixture(params=["small", "large"])
def pad(request: pytest.FixtureRequest) -> Pad:
    """The body as sent, or padded with trailing whitespace past LOW_MEMORY_PARSE_BYTES so that
    the large-body reader reads it: both must give the same answers."""
    if request.param == "small":
        return lambda body: body
    return lambda body: body + b" " * (LOW_MEMORY_PARSE_BYTES + 1)


def with_raw(value: bytes, where: str) -> bytes:
    """A CREATE review whose `where` field holds the literal JSON `value`."""
    obj = job(completions=424242)
    body = review(obj)
    body["request"]["userInfo"]["extra"] = {"team": ["a"]}
    body["request"]["oldObject"] = None
    text = orjson.dumps(body)
    marker = {
        "completions": b'"completions":424242',
        "extra": b'"extra":{"team":["a"]}',
    }[where]
    replacement = {
        "completions": b'"completions":' + value,
        "extra": b'"extra":{"team":' + value + b"}",
    }[where]
    assert marker in text
    return text.replace(marker, replacement)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"1" + b"0" * 400, "integer does not fit in 64 bits"),
        (b"-" + b"9" * 5000, "integer does not fit in 64 bits"),
        (b"1e400", "number is out of the range of a double"),
        (b"NaN", "NaN is not a JSON number"),
        (b"-Infinity", "-Infinity is not a JSON number"),
    ],
)
def test_unreadable_numbers_are_denied_naming_the_field(
    value: bytes, reason: str, pad: Pad
) -> None:
    outcome = handle_validate(pad(with_raw(value, "completions")), DEFAULTS)
    assert outcome.status == 200
    assert outcome.review is not None
    response = outcome.review["response"]
    assert response["uid"] == "uid-1"
    assert response["allowed"] is False
    status = response["status"]
    assert (status["code"], status["reason"]) == (400, "BadRequest")
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": reason, "field": "spec.completions"}
    ]
    assert status["message"] == f'Job.batch "pi" could not be read: spec.completions: {reason}'


def test_unreadable_values_outside_the_object_are_named_from_the_root(pad: Pad) -> None:
    answer = handle_validate(pad(with_raw(b"1e999", "extra")), DEFAULTS).review
    assert answer is not None
    response = answer["response"]
    assert response["allowed"] is False
    assert response["status"]["details"]["causes"][0]["field"] == "request.userInfo.extra.team"


def test_unreadable_values_in_the_old_object_are_prefixed(pad: Pad) -> None:
    old = job(completions=424242)
    body = orjson.dumps(review(job(), old, operation="UPDATE")).replace(b"424242", b"9" * 30)
    # orjson reads a 30-digit integer as a float; only bodies it refuses take the exact path.
    body = body.replace(b'"backoffLimit":6', b'"backoffLimit":Infinity', 1)
    answer = handle_validate(pad(body), DEFAULTS).review
    assert answer is not None
    response = answer["response"]
    assert response["status"]["details"]["causes"][0]["field"] == "spec.backoffLimit"


def test_lone_surrogates_are_read_as_go_reads_them(pad: Pad) -> None:
    obj = job()
    obj["metadata"]["annotations"] = {"note": "SURROGATE"}
    body = orjson.dumps(review(obj)).replace(b"SURROGATE", b"a\\ud800b")
    outcome = handle_validate(pad(body), DEFAULTS)
    assert outcome.status == 200 and outcome.review is not None
    assert outcome.review["response"]["allowed"] is True
    assert outcome.parsed is not None
    annotations = outcome.parsed.request.object["metadata"]["annotations"]
    assert annotations == {"note": "a\ufffdb"}
    orjson.dumps(outcome.payload)  # the answer is valid UTF-8


def test_mutate_answers_an_unreadable_object_without_a_patch() -> None:
    outcome = handle_mutate(with_raw(b"NaN", "completions"), DEFAULTS)
    assert outcome.status == 200
    assert outcome.review is not None
    assert outcome.review["response"] == {"uid": "uid-1", "allowed": True}


@pytest.mark.parametrize(
    "body",
    [
        b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":1e999}}',
        b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":NaN}',
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a"},"x":NaN}'.encode(
            "utf-16"
        ),
    ],
)
def test_without_a_readable_uid_it_stays_a_bare_400(body: bytes, pad: Pad) -> None:
    outcome = handle_validate(pad(body), DEFAULTS)
    assert outcome.status == 400 and set(outcome.payload) == {"error"}


# --- large bodies: read without orjson's buffer, the same values ---------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=6),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=12,
)


def as_orjson_reads(body: bytes) -> tuple[str, jsonfallback.UnreadableValue | None]:
    """What parse_review gets from a small body (orjson, and the exact decoder where orjson
    refuses), printed so that 1 and 1.0 differ."""
    try:
        data, unreadable = orjson.loads(body), None
    except orjson.JSONDecodeError:
        data, unreadable = jsonfallback.loads(body)
    return json.dumps(data, default=repr), unreadable


def as_large_reads(body: bytes) -> tuple[str, jsonfallback.UnreadableValue | None]:
    data, unreadable = jsonfallback.loads_large(body)
    return json.dumps(data, default=repr), unreadable


@hypothesis_settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_large_bodies_read_as_orjson_reads_them(value: Any) -> None:
    body = json.dumps(value).encode()  # lone surrogates become \ud800-style escapes
    assert as_large_reads(body) == as_orjson_reads(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":18446744073709551615,"b":18446744073709551616,"c":-9223372036854775809}',
        b'{"a":' + b"9" * 30 + b"}",
        b'{"a":[1e400]}',
        b'{"a":' + b"1" * 400 + b"}",
        b'{"a":{"b":NaN}}',
        b'{"a":-Infinity}',
        b'{"a":"x\\ud800"}',
        b'{"a":"\\ud83d\\ude00","b":' + b"9" * 30 + b"}",
        b'{"\\udc00":1}',
        b'{"a":1,"a":2}',
        b'{"a":-0,"b":-0.0,"c":1E2}',
    ],
)
def test_large_bodies_read_odd_values_as_orjson_reads_them(body: bytes) -> None:
    assert as_large_reads(body) == as_orjson_reads(body)


@pytest.mark.parametrize("body", [b"", b"{", b'{"a":1}x', b'"\x01"', b"\xff", b"[" * 100_000])
def test_large_bodies_that_are_not_json_raise_value_error(body: bytes) -> None:
    with pytest.raises((ValueError, RecursionError)):
        jsonfallback.loads_large(body)


def test_a_large_body_of_empty_containers_is_refused_before_reading() -> None:
    obj = job()
    plain = orjson.dumps(review(obj))
    # The review's own brackets, then the filler list's and its MAX_CONTAINERS + 1 objects'.
    brackets = plain.count(b"{") + plain.count(b"[") + 1 + MAX_CONTAINERS + 1
    obj["spec"]["x-filler"] = [{}] * (MAX_CONTAINERS + 1)
    body = orjson.dumps(review(obj))
    assert len(body) > LOW_MEMORY_PARSE_BYTES
    outcome = handle_validate(body, DEFAULTS)
    assert outcome.status == 400
    assert outcome.payload == {
        "error": f"body has more than {MAX_CONTAINERS} JSON objects and arrays "
        f"({brackets}): not an object the API server sends"
    }


QUEUED = parse_config(
    """
suspendPolicies:
  - name: queued
    match:
      namespaces: [default]
      labelSelector: {matchLabels: {kueue.x-k8s.io/queue-name: q}}
    forceSuspendOnCreate: true
    controllers: {serviceAccounts: ["kueue-system:kueue"]}
"""
).to_settings()
SUSPENDED = {
    "uid": "uid-1",
    "allowed": True,
    "patchType": "JSONPatch",
    "patch": "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvc3VzcGVuZCIsInZhbHVlIjp0cnVlfV0=",
    "auditAnnotations": {"mutation": "suspended by policy queued"},
    "warnings": [
        "spec.suspend set to true by policy 'queued': the queue controller resumes the Job"
    ],
}


def queued_job() -> dict[str, Any]:
    obj = job(name="q")
    obj["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "q"}
    obj["metadata"]["namespace"] = "default"
    return obj


def bracket_laden(obj: dict[str, Any]) -> bytes:
    """A review of 1.05 MiB whose container args hold MAX_CONTAINERS + 1 `[`."""
    args = ["[" * (MAX_CONTAINERS + 1), "-" * 600_000]
    obj["spec"]["template"]["spec"]["containers"][0]["args"] = args
    body = orjson.dumps(review(obj))
    assert len(body) > LOW_MEMORY_PARSE_BYTES
    assert body.count(b"[") > MAX_CONTAINERS
    return body


def test_structures_do_not_count_brackets_inside_strings() -> None:
    assert structures(b'{"a":["[{",{"b":"\\"}],"c":"\\"[{"}', 0) == 3
    assert structures(b'{"a":"[\\"[","b":[]}', 0) == 2  # an escaped quote ends no string
    assert structures(b"[[[[", 2) == 4
    assert structures(b'["[[[[[', 2) == 1 + 5  # an unterminated string: an upper bound
    assert structures(b'{"a":"[[[["}', 10) == 5  # within the limit: counted in C only


def test_brackets_inside_strings_do_not_refuse_a_large_body() -> None:
    body = bracket_laden(queued_job())
    validated = handle_validate(body, QUEUED)
    assert validated.status == 200 and validated.review is not None
    response = validated.review["response"]
    # Judged like any Job: matched by the policy and not suspended, so SUS-001 denies it.
    assert (response["allowed"], response["status"]["code"]) == (False, 403)
    assert [c["field"] for c in response["status"]["details"]["causes"]] == ["spec.suspend"]
    mutated = handle_mutate(body, QUEUED)
    assert mutated.status == 200 and mutated.review is not None
    assert mutated.review == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": SUSPENDED,
    }
    suspended = queued_job()
    suspended["spec"]["suspend"] = True
    body = bracket_laden(suspended)
    assert handle_validate(body, QUEUED).payload["response"] == {  # type: ignore[typeddict-item]
        "uid": "uid-1",
        "allowed": True,
    }
    assert handle_mutate(body, QUEUED).payload["response"] == {  # type: ignore[typeddict-item]
        "uid": "uid-1",
        "allowed": True,
    }


@pytest.mark.parametrize("size", [100, LOW_MEMORY_PARSE_BYTES + 1000])
def test_mutate_reads_only_what_it_needs_and_answers_alike(size: int) -> None:
    """The answers of /mutate for small bodies (the whole review decoded) and large ones (only
    the fields the mutation reads)."""
    cases: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    matched = queued_job()
    cases.append((matched, SUSPENDED))
    no_spec = queued_job()
    del no_spec["spec"]
    no_spec_patch = base64.b64encode(
        orjson.dumps([{"op": "add", "path": "/spec", "value": {"suspend": True}}])
    ).decode()
    cases.append((no_spec, {**SUSPENDED, "patch": no_spec_patch}))
    template_labels = queued_job()
    template_labels["spec"]["template"]["metadata"] = {
        "labels": template_labels["metadata"].pop("labels")
    }
    cases.append((template_labels, SUSPENDED))
    other_namespace = queued_job()
    other_namespace["metadata"]["namespace"] = "team-b"
    cases.append((other_namespace, None))
    suspended = queued_job()
    suspended["spec"]["suspend"] = True
    cases.append((suspended, None))
    bad_suspend = queued_job()
    bad_suspend["spec"]["suspend"] = "yes"
    cases.append((bad_suspend, None))
    bad_labels = queued_job()
    bad_labels["metadata"]["labels"] = ["kueue.x-k8s.io/queue-name"]
    cases.append((bad_labels, None))
    for obj, expected in cases:
        obj.setdefault("metadata", {})["annotations"] = {"filler": "x" * size}
        sent = review(obj)
        sent["request"]["namespace"] = obj["metadata"].get("namespace", "")
        outcome = handle_mutate(orjson.dumps(sent), QUEUED)
        assert outcome.review is not None
        assert outcome.review["response"] == (expected or {"uid": "uid-1", "allowed": True})


def test_mutate_answers_a_large_body_whatever_its_structure() -> None:
    """/validate refuses a body with more than MAX_CONTAINERS objects and arrays (400); /mutate
    never builds them, so it answers it, with the patch its policy asks for."""
    obj = queued_job()
    obj["spec"]["template"]["spec"]["containers"] *= MAX_CONTAINERS // 10
    for container in obj["spec"]["template"]["spec"]["containers"]:
        container["env"] = [{}] * 10
    body = orjson.dumps(review(obj))
    assert structures(body, MAX_CONTAINERS) > MAX_CONTAINERS
    assert handle_validate(body, QUEUED).status == 400
    mutated = handle_mutate(body, QUEUED)
    assert mutated.review is not None and mutated.review["response"] == SUSPENDED


def test_mutate_reads_a_large_body_it_cannot_read_in_part_as_validate_does() -> None:
    obj = queued_job()
    obj["spec"]["template"] = "a template"  # not an object: the whole review is read
    obj["metadata"]["annotations"] = {"filler": "x" * LOW_MEMORY_PARSE_BYTES}
    assert handle_mutate(orjson.dumps(review(obj)), QUEUED).review["response"] == {  # type: ignore[index]
        "uid": "uid-1",
        "allowed": True,
    }
    broken = orjson.dumps(review(queued_job()))[:-1] + b" " * LOW_MEMORY_PARSE_BYTES
    refused = handle_mutate(broken, QUEUED)
    assert refused.status == 400 and refused.error == handle_validate(broken, QUEUED).error
