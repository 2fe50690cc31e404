"""Fuzzing (bounded for `make test`; `make fuzz` runs long campaigns): random and mutated
AdmissionReviews, random Job objects, random index strings. Invariants: never a 5xx nor an
internal error, always a well-formed AdmissionReview with the uid echoed, or a 400."""

from __future__ import annotations

import copy
import os
import time
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobguard.app.admission.review import handle_mutate, handle_validate
from jobguard.validators import Settings
from jobguard.validators.intervals import IndexParseError, count_indexes
from tests.builders import START, cond, cronjob, job, with_status
from tests.reviews import review

EXAMPLES = int(os.environ.get("JOBGUARD_FUZZ_EXAMPLES", "300"))
BUDGET_SECONDS = 10.0  # the API server's default webhook timeout
SETTINGS = Settings()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        ["", "0", "-1", "0-3", "Indexed", "True", "1e999", "2026-01-01T00:00:00Z", "\u0000", "💥"]
    ),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _seeds() -> list[dict[str, Any]]:
    running = with_status(job(), startTime=START, active=1)
    indexed = job(
        completionMode="Indexed",
        completions=4,
        parallelism=4,
        successPolicy={"rules": [{"succeededIndexes": "0-2", "succeededCount": 2}]},
        backoffLimitPerIndex=1,
        podFailurePolicy={
            "rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1, 2]}}]
        },
        podReplacementPolicy="Failed",
    )
    finished = with_status(
        indexed,
        startTime=START,
        completedIndexes="0-1",
        failedIndexes="3",
        conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
    )
    return [
        review(job()),
        review(running, job(), "UPDATE"),
        review(finished, indexed, "UPDATE", sub="status"),
        review(cronjob("c"), resource="cronjobs"),
    ]


SEEDS = _seeds()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _replace(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return root


def check_invariants(body: bytes) -> None:
    for handler in (handle_validate, handle_mutate):
        started = time.perf_counter()
        outcome = handler(body, SETTINGS)
        assert time.perf_counter() - started < BUDGET_SECONDS
        assert outcome.status in (200, 400)
        if outcome.status == 400:
            assert outcome.error is not None and outcome.review is None
            assert set(outcome.payload) == {"error"} and "\n" not in outcome.error
            continue
        assert outcome.review is not None
        payload = outcome.review
        assert payload["kind"] == "AdmissionReview"
        assert payload["apiVersion"] in ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
        response = payload["response"]
        assert isinstance(response["allowed"], bool)
        assert "could not judge" not in orjson.dumps(payload).decode()
        if handler is handle_validate:
            assert "patch" not in response and "patchType" not in response


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_mutated_reviews(seed: dict[str, Any], data: st.DataObject) -> None:
    mutated = copy.deepcopy(seed)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(mutated)
        path = data.draw(st.sampled_from(paths))
        mutated = _replace(mutated, path, data.draw(json_values))
    body = orjson.dumps(mutated, option=orjson.OPT_NON_STR_KEYS)
    check_invariants(body)
    if isinstance(mutated, dict) and isinstance(mutated.get("request"), dict):
        uid = mutated["request"].get("uid")
        outcome = handle_validate(body, SETTINGS)
        if outcome.status == 200:
            assert outcome.review is not None and outcome.review["response"]["uid"] == uid


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    obj=json_values,
    old=json_values,
    operation=st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]),
    resource=st.sampled_from(["jobs", "cronjobs", "pods"]),
    sub=st.sampled_from(["", "status"]),
)
def test_random_objects(obj: Any, old: Any, operation: str, resource: str, sub: str) -> None:
    check_invariants(
        orjson.dumps(review(obj, old, operation, resource, sub), option=orjson.OPT_NON_STR_KEYS)
    )


@settings(max_examples=EXAMPLES, deadline=None)
@given(body=st.binary(max_size=200))
def test_random_bytes(body: bytes) -> None:
    check_invariants(body)


index_strings = st.text(alphabet="0123456789,-+ ", max_size=60) | st.lists(
    st.integers(0, 10**6), max_size=20
).map(lambda xs: ",".join(map(str, sorted(set(xs)))))


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(text=index_strings, completions=st.integers(0, 2**31 - 1))
def test_random_index_strings(text: str, completions: int) -> None:
    try:
        size = count_indexes(text, completions)
    except IndexParseError as exc:
        assert str(exc)
    else:
        assert 0 <= size <= completions
    policy_job = job(
        completionMode="Indexed",
        completions=max(completions, 1),
        parallelism=1,
        successPolicy={"rules": [{"succeededIndexes": text}]},
    )
    check_invariants(orjson.dumps(review(policy_job)))
