"""The Job and CronJob views are read by msgspec, and an object msgspec refuses is read again
by pydantic models made from the same Structs to name every wrong field. The two readers must
agree: on which objects they refuse, and on what they read from the ones they accept."""

from __future__ import annotations

import copy
import itertools
import typing
from pathlib import Path
from typing import Annotated, Any

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from jobguard.validators.model import (
    CronJob,
    Job,
    ObjectDecodeError,
    Time,
    _dec_hook,
    _error_model,
    _string_keys,
    _without_nulls,
    decode_cronjob,
    decode_job,
)

STORED_JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "train", "namespace": "ml", "uid": "u-1", "generation": 2},
    "spec": {
        "parallelism": 4,
        "completions": 8,
        "completionMode": "Indexed",
        "backoffLimitPerIndex": 1,
        "successPolicy": {"rules": [{"succeededIndexes": "0-3", "succeededCount": 2}]},
        "podFailurePolicy": {
            "rules": [
                {
                    "action": "FailJob",
                    "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]},
                    "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                }
            ]
        },
        "selector": {
            "matchLabels": {"job-name": "train"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}],
        },
        "suspend": False,
        "template": {
            "metadata": {"labels": {"job-name": "train"}, "annotations": {"a": "b"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "resources": {"limits": {"cpu": "2"}}}],
                "initContainers": [{"name": "init"}],
                "nodeSelector": {"pool": "gpu"},
                "tolerations": [{"key": "gpu", "operator": "Exists"}],
                "schedulingGates": [{"name": "kueue"}],
                "affinity": {},
            },
        },
    },
    "status": {
        "startTime": "2026-01-01T10:00:00Z",
        "active": 4,
        "ready": 4,
        "succeeded": 1,
        "completedIndexes": "0",
        "uncountedTerminatedPods": {"succeeded": ["p-1"], "failed": []},
        "conditions": [{"type": "Suspended", "status": "False", "reason": "JobResumed"}],
    },
}


def _paths(
    struct: type[msgspec.Struct], prefix: tuple[str | int, ...] = ()
) -> list[tuple[Any, ...]]:
    """Every path of a JSON member the Struct reads (list items at 0, map values at "k")."""
    found: list[tuple[Any, ...]] = []
    for info in msgspec.structs.fields(struct):
        path = (*prefix, info.encode_name)
        found.append(path)
        found += _inner_paths(info.type, path)
    return found


def _inner_paths(kind: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is Annotated:
        return _inner_paths(args[0], path)
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return _paths(kind, path)
    if args and origin not in (list, dict):  # X | None
        return [p for arg in args for p in _inner_paths(arg, path)]
    if origin is list:
        return [(*path, 0), *_inner_paths(args[0], (*path, 0))]
    if origin is dict:
        return [(*path, "k"), *_inner_paths(args[1], (*path, "k"))]
    return []


JOB_PATHS = _paths(Job)
CRONJOB_PATHS = _paths(CronJob)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**65), max_value=2**65)
    | st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, 0, -1])
    | st.floats(allow_nan=False)
    | st.sampled_from([1.0, 0.0])
    | st.text(max_size=8)
    | st.sampled_from(["2026-01-01T10:00:00Z", "2026-01-01T10:00:00", "10", "true", ""]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            # 1: a key YAML reads as an integer (JSON never holds one).
            st.sampled_from(["name", "key", "values", "k", "x", 1]),
            children,
            max_size=3,
        )
    ),
    max_leaves=6,
)


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    """Put `value` at `path`, making the members on the way (a list's item 0, an object)."""
    for step, following in itertools.pairwise(path):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(step, int):
            if not isinstance(obj, list) or not obj:
                return  # the path runs through something else: nothing to set
            obj = obj[0]
            continue
        if not isinstance(obj, dict):
            return
        if not isinstance(obj.get(step), type(empty)):
            obj[step] = empty
        if isinstance(following, int) and not obj[step]:
            obj[step].append({})
        obj = obj[step]
    last = path[-1]
    if isinstance(last, int):
        if isinstance(obj, list):
            obj[:1] = [value]
    elif isinstance(obj, dict):
        obj[last] = value


def _same(read: Any, model: Any) -> bool:
    """What msgspec read equals what pydantic read, member by member."""
    if isinstance(read, msgspec.Struct):
        assert isinstance(model, BaseModel), (read, model)
        return all(
            _same(getattr(read, info.name), getattr(model, info.name))
            for info in msgspec.structs.fields(read)
        )
    if isinstance(read, list):
        return isinstance(model, list) and len(read) == len(model) and all(map(_same, read, model))
    if isinstance(read, dict):
        return (
            isinstance(model, dict)
            and read.keys() == model.keys()
            and all(_same(read[key], model[key]) for key in read)
        )
    if isinstance(read, Time):
        return isinstance(model, Time) and read.text == model.text
    return type(read) is type(model) and bool(read == model)


def _agree(kind: type[msgspec.Struct], raw: dict[str, Any]) -> None:
    decode = decode_job if kind is Job else decode_cronjob
    as_decoded = _without_nulls(raw)  # null metadata, spec, status: Go's empty values
    try:
        read = decode(raw)
    except ObjectDecodeError as refused:
        with pytest.raises(ValidationError):
            _error_model(kind).model_validate(as_decoded)
        # Every problem in pydantic's words (the API server's), none in msgspec's own.
        assert refused.problems
        assert all(
            " in body must be " in p.detail
            or " in body should be " in p.detail
            or p.detail.startswith("must be")
            for p in refused.problems
        ), refused.problems
        return
    try:
        msgspec.convert(as_decoded, kind, strict=True, dec_hook=_dec_hook)
    except msgspec.ValidationError:
        # Read again with its keys as strings (YAML's `1: x` as the API server gets it).
        as_decoded = _string_keys(as_decoded)
    assert _same(read, _error_model(kind).model_validate(as_decoded))


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(JOB_PATHS), json_values), min_size=1, max_size=3))
def test_job_readers_agree(changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    raw = copy.deepcopy(STORED_JOB)
    for path, value in changes:
        _set(raw, path, value)
    _agree(Job, raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(CRONJOB_PATHS), json_values), min_size=1, max_size=3))
def test_cronjob_readers_agree(changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    raw: dict[str, Any] = {
        "metadata": {"name": "nightly"},
        "spec": {"jobTemplate": copy.deepcopy({k: STORED_JOB[k] for k in ("metadata", "spec")})},
    }
    for path, value in changes:
        _set(raw, path, value)
    _agree(CronJob, raw)


def test_the_stored_job_reads_alike() -> None:
    read = decode_job(STORED_JOB)
    assert read.spec.success_policy is not None
    assert read.status.start_time == Time.parse("2026-01-01T10:00:00Z")
    assert _same(read, _error_model(Job).model_validate(STORED_JOB))


@pytest.mark.parametrize(
    ("path", "value", "field", "detail"),
    [
        (
            ("spec", "completions"),
            "8",
            "spec.completions",
            'spec.completions in body must be of type integer: "string"',
        ),
        (
            ("spec", "completions"),
            2**31,
            "spec.completions",
            "spec.completions in body should be less than or equal to 2147483647",
        ),
        (
            ("spec", "suspend"),
            1,
            "spec.suspend",
            'spec.suspend in body must be of type boolean: "integer"',
        ),
        (
            ("status", "startTime"),
            "2026-01-01",
            "status.startTime",
            'status.startTime in body must be of type date-time: "2026-01-01"',
        ),
        (
            ("metadata", "labels", "k"),
            1,
            "metadata.labels[k]",
            'metadata.labels[k] in body must be of type string: "integer"',
        ),
        (
            ("spec", "template", "spec", "containers", 0, "name"),
            None,
            "spec.template.spec.containers[0].name",
            'spec.template.spec.containers[0].name in body must be of type string: "null"',
        ),
    ],
)
def test_a_refused_job_names_the_field_in_the_api_servers_words(
    path: tuple[Any, ...], value: Any, field: str, detail: str
) -> None:
    raw = copy.deepcopy(STORED_JOB)
    _set(raw, path, value)
    with pytest.raises(ObjectDecodeError) as refused:
        decode_job(raw, "")
    assert [(p.field, p.detail) for p in refused.value.problems] == [(field, detail)]


def test_every_wrong_field_at_once_in_the_order_written() -> None:
    raw = copy.deepcopy(STORED_JOB)
    raw["spec"]["parallelism"] = "4"
    raw["spec"]["suspend"] = "no"
    raw["status"]["ready"] = 1.5
    with pytest.raises(ObjectDecodeError) as refused:
        decode_job(raw, "oldObject")
    assert [p.field for p in refused.value.problems] == [
        "oldObject.spec.parallelism",
        "oldObject.spec.suspend",
        "oldObject.status.ready",
    ]


def test_an_object_only_msgspec_refuses_is_refused_still(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the readers ever to disagree, the object is refused in msgspec's words at its
    path, never judged on a half-read view."""
    from pydantic import create_model

    from jobguard.validators import model

    accepts_anything = create_model("AcceptsAnything")
    monkeypatch.setattr(model, "_error_model", lambda struct: accepts_anything)
    raw = copy.deepcopy(STORED_JOB)
    raw["spec"]["template"]["spec"]["containers"][0]["name"] = 7
    with pytest.raises(ObjectDecodeError) as refused:
        decode_job(raw, "oldObject")
    field = "oldObject.spec.template.spec.containers[0].name"
    assert refused.value.field == field
    assert [(p.field, p.detail) for p in refused.value.problems] == [
        (field, f"{field} in body: Expected `str`, got `int`")
    ]


def test_a_manifests_key_that_is_not_a_string_is_an_unknown_field() -> None:
    """YAML's `1: x` is not a field of a Job: the API server gets it as the string "1" (an
    unknown field, dropped), and the decoder reads the object without it."""
    raw = copy.deepcopy(STORED_JOB)
    raw["spec"][1] = "x"
    raw["spec"]["template"]["spec"]["containers"][0][True] = "y"
    assert _same(decode_job(raw), _error_model(Job).model_validate(raw))
    assert decode_job(raw) == decode_job(STORED_JOB)


def test_a_part_given_already_read_is_not_named_wrong() -> None:
    """A status update's old spec is the new Job's Struct (pipeline._decode_old): when the old
    object is refused for another field, only that field is named."""
    stored = decode_job(STORED_JOB)
    raw = {**copy.deepcopy(STORED_JOB), "spec": stored.spec, "status": stored.status}
    raw["metadata"]["generation"] = "2"
    with pytest.raises(ObjectDecodeError) as refused:
        decode_job(raw, "oldObject")
    assert [(p.field, p.detail) for p in refused.value.problems] == [
        (
            "oldObject.metadata.generation",
            'oldObject.metadata.generation in body must be of type integer: "string"',
        )
    ]


def test_a_key_json_cannot_write_is_an_unknown_field_too() -> None:
    """A key of a type JSON has no word for (a date made by a YAML loader) does not crash the
    decoder: it is an unknown field like any other."""
    import datetime

    raw = copy.deepcopy(STORED_JOB)
    raw["spec"][datetime.date(2026, 1, 1)] = "x"
    assert decode_job(raw) == decode_job(STORED_JOB)


def _objects(value: Any) -> list[dict[str, Any]]:
    """The Jobs and CronJobs in a document: itself, or an AdmissionReview's objects."""
    if not isinstance(value, dict):
        return []
    found = [value] if value.get("kind") in ("Job", "CronJob") else []
    for key in ("request", "object", "oldObject"):
        found += _objects(value.get(key))
    return found


def test_the_readers_agree_on_every_object_of_the_test_data_and_examples() -> None:
    root = Path(__file__).parent.parent
    files = sorted(
        path
        for folder in (root / "tests" / "data", root / "examples")
        for path in folder.rglob("*")
        if path.suffix in (".yaml", ".yml", ".json")
    )
    objects = []
    for path in files:
        try:
            documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:  # the unreadable inputs of the check tests
            continue
        objects += [found for document in documents for found in _objects(document)]
    assert len(objects) > 100  # 109 when this was written: an empty glob must not pass
    for raw in objects:
        _agree(Job if raw["kind"] == "Job" else CronJob, raw)
