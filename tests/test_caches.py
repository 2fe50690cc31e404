"""Caches of client-chosen strings are bounded by bytes, not by entries, and belong to the
settings they were filled under (a configuration reload drops them)."""

from __future__ import annotations

import contextlib
import gc
import sys
import tracemalloc
import weakref
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from jobguard.app.admission.review import handle_validate
from jobguard.validators import (
    Operation,
    Request,
    Requester,
    Settings,
    cron,
    evaluate,
    names,
    quantity,
)
from jobguard.validators.cron import schedule_problem
from jobguard.validators.intervals import IndexParseError, _parsed_cache, count_indexes
from jobguard.validators.memo import ByteBoundedMemo, Caches, ShortKeyCache, caching
from jobguard.validators.names import (
    content_label_value_problems,
    dns1123_label_problems,
    dns1123_subdomain_problems,
    label_key_problems,
    label_value_problems,
    port_name_problems,
    qualified_name_problems,
    relaxed_env_var_name_problems,
)
from jobguard.validators.pipeline import _JOB_SPEC_ERRORS, _job_context, job_errors
from jobguard.validators.quantity import Format, Quantity, QuantityError, canonical, parse_quantity
from jobguard.validators.rules.metadata_update import validate_labels_and_annotations
from tests.builders import causes, create, cronjob, job, manifest, update
from tests.reviews import review

MiB = 1024 * 1024


def test_memo_evicts_the_least_recently_used_to_stay_within_its_bytes() -> None:
    calls: list[str] = []

    def length(key: str) -> int:
        calls.append(key)
        return len(key)

    entry = sys.getsizeof("a" * 1000) + 100
    memo = ByteBoundedMemo(length, max_bytes=3 * entry)
    for key in ("a" * 1000, "b" * 1000, "c" * 1000):
        assert memo(key) == 1000
    assert memo("a" * 1000) == 1000  # a hit: "a" becomes the most recent
    assert calls == ["a" * 1000, "b" * 1000, "c" * 1000]
    memo("d" * 1000)  # evicts "b", the least recently used
    assert len(memo) == 3 and memo.bytes <= memo.max_bytes
    memo("b" * 1000)  # recomputed; evicts "c"
    memo("a" * 1000)  # still kept
    assert calls == ["a" * 1000, "b" * 1000, "c" * 1000, "d" * 1000, "b" * 1000]
    assert memo.bytes <= memo.max_bytes


def test_memo_never_keeps_a_key_larger_than_its_budget() -> None:
    memo: ByteBoundedMemo[str, int] = ByteBoundedMemo(len, max_bytes=10_000)
    assert memo("x" * 20_000) == 20_000
    assert len(memo) == 0 and memo.bytes == 0


def test_distinct_megabyte_label_keys_are_judged_but_not_kept() -> None:
    caches = Caches()
    with caching(caches):
        _judge_megabyte_label_keys()
        assert qualified_name_problems.cache_info() is None  # nothing kept, nothing made
        assert label_value_problems.cache_info() is None
        # Short strings, the ones that repeat on every request, are still cached.
        assert qualified_name_problems("batch.kubernetes.io/job-name") == ()
        assert qualified_name_problems("batch.kubernetes.io/job-name") == ()
        assert qualified_name_problems.cache_info().hits == 1
    assert qualified_name_problems.cache_info(caches).currsize == 1


def _judge_megabyte_label_keys() -> None:
    for i in range(20):
        key = f"{i:04d}" + "k" * MiB
        assert qualified_name_problems(key) == ("name part must be no more than 63 characters",)
        assert label_value_problems("v" * MiB) == ("must be no more than 63 characters",)
        errors = validate_labels_and_annotations(
            {"annotations": {key: "x"}}, None, "metadata", "1.34"
        )
        assert [(e.rule, e.path, e.type.reason) for e in errors] == [
            ("IM-008", "metadata.annotations", "FieldValueInvalid"),  # the key
            ("IM-008", "metadata.annotations", "FieldValueTooLong"),  # over 256 KiB in all
        ]


def test_index_string_cache_stays_within_its_bytes() -> None:
    completions = 10**6
    caches = Caches()
    with caching(caches):
        for i in range(200):  # 200 distinct lists of about 60 KiB: 12 MiB if all were kept
            text = ",".join(str(n) for n in range(i, 60_000, 5))[: 60 * 1024].rsplit(",", 1)[0]
            assert count_indexes(text, completions) == text.count(",") + 1
    memo = _parsed_cache.memo(caches)
    assert memo is not None and 0 < memo.bytes <= memo.max_bytes == 4 * MiB
    try:
        count_indexes("1,0", 5)
    except IndexParseError as exc:
        assert str(exc) == "non-increasing order, previous: 1, current: 0"
    else:
        raise AssertionError("a decreasing list must be refused")


def test_job_spec_results_are_kept_per_spec_and_operation() -> None:
    """ValidateJobSpec's errors are kept, keyed by the spec as sent and by CREATE or UPDATE
    (unparsable quantities are reported on CREATE only): the same spec judged again, in
    either order, gives the same errors as judged afresh, and nothing a caller does to a
    verdict changes what is kept."""
    broken = job()
    broken["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    on_create = [
        ("POD-009", "spec.template.spec.containers[0].resources.requests[cpu]", "FieldValueInvalid")
    ]
    for _ in range(2):
        assert causes(update(broken, broken)) == []
        verdict = create(broken)
        assert causes(verdict) == on_create
        verdict.violations.clear()
    assert causes(create(broken)) == on_create


def test_manifest_job_specs_are_judged_alike_and_not_kept() -> None:
    """`jobguard check` judges each manifest once: its Job-spec errors are computed without
    the memo, and are the ones the memo would have given (fresh and kept), for CREATE and
    UPDATE alike."""
    broken = manifest(
        "m", completions=2, parallelism=-1, selector={"matchLabels": {"app": "other"}}
    )
    broken["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    stored = job("m", completions=2)
    requests = [
        Request("Job", Operation.CREATE, broken, requester=Requester("alice")),
        Request("Job", Operation.UPDATE, broken, stored, requester=Requester("alice")),
        Request("Job", Operation.CREATE, manifest("ok"), requester=Requester("alice")),
    ]
    expected = [
        [
            ("TM-005", "spec.selector", "FieldValueInvalid"),
            ("JS-001", "spec.parallelism", "FieldValueInvalid"),
            (
                "POD-009",
                "spec.template.spec.containers[0].resources.requests[cpu]",
                "FieldValueInvalid",
            ),
            ("TM-006", "spec.template.metadata.labels", "FieldValueInvalid"),
        ],
        None,
        [],
    ]
    for request, wanted in zip(requests, expected, strict=True):
        s = Settings()
        with caching(s.caches):
            ctx = _job_context(request, s)
            kept = job_errors(ctx, s)
            again = job_errors(ctx, s)  # from the memo
            memo = _JOB_SPEC_ERRORS.memo()
            assert memo is not None
            held = len(memo)
            unkept = job_errors(ctx, s, manifest=True)
        assert len(memo) == held == 1
        assert unkept == kept == again
        if wanted is not None:
            assert [(e.rule, e.path, e.type.reason) for e in unkept] == wanted
    s = Settings()
    for request in requests:
        request.manifest = True
        evaluate(request, s)
    memo = _JOB_SPEC_ERRORS.memo(s.caches)
    assert memo is not None and len(memo) == 0


def test_distinct_megabyte_strings_through_every_check_are_not_kept() -> None:
    """Container names, env names, ports, label values, quantities and schedules of 256 KiB,
    each distinct, judged whole: what the process holds afterwards does not grow with them (it
    grew by each: `lru_cache`s of 4,096 entries of any length)."""
    size = MiB // 4
    settings = Settings()

    def megabyte_job(i: int) -> bytes:
        big = f"{i:04d}" + "n" * size
        obj = job()
        container = obj["spec"]["template"]["spec"]["containers"][0]
        container.update(
            name=big,
            env=[{"name": big, "value": "v"}],
            ports=[{"name": big, "containerPort": 80}],
            resources={"limits": {"cpu": f"{i}" + "0" * size}},
        )
        obj["spec"]["template"]["metadata"] = {"labels": {"app": big}}
        return orjson.dumps(review(obj))

    def cron_review(i: int) -> bytes:
        obj = cronjob()
        obj["spec"]["schedule"] = f"{i} " + "*" * size
        return orjson.dumps(review(obj, resource="cronjobs"))

    handle_validate(megabyte_job(0), settings)  # warm: imports, first entries
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(1, 9):
            assert handle_validate(megabyte_job(i), settings).status == 200
            assert handle_validate(cron_review(i), settings).status == 200
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < size  # 11 MiB of distinct strings judged
    checks = [check for check in CACHED_CHECKS if check is not canonical]  # strings as keys

    def currsize(check: Any) -> int:
        info = check.cache_info(settings.caches)
        return 0 if info is None else int(info.currsize)

    for check in checks:
        kept = currsize(check)
        with caching(settings.caches):
            with contextlib.suppress(QuantityError):
                check("x" * MiB + "1")  # judged, not kept
            assert currsize(check) == kept
            check("1" if check is parse_quantity else "x1")  # short: kept
        assert currsize(check) in (kept, kept + 1)
        assert currsize(check) > 0


def _largest_keys(check: ShortKeyCache[Any, Any], count: int) -> Iterator[Any]:
    """`count` distinct keys of the largest size `check` keeps, in their costliest form."""
    for i in range(count):
        if check is parse_quantity:  # the longest number, with the largest Decimal it makes
            yield str(10**63 + i)
        elif check is canonical:
            yield Quantity(Decimal(f"{10**90 + i}.1428571"), Format.DECIMAL_SI)  # 152 bytes
        else:  # characters beyond the BMP: 4 bytes each (a message may quote the value)
            yield f"{i:06d}" + "\U0001f600" * (check._max_size - 6)


CACHED_CHECKS: list[Any] = [
    dns1123_label_problems,
    dns1123_subdomain_problems,
    port_name_problems,
    relaxed_env_var_name_problems,
    qualified_name_problems,
    label_key_problems,
    label_value_problems,
    content_label_value_problems,
    parse_quantity,
    canonical,
    schedule_problem,
]


def test_each_short_key_cache_stays_within_its_bytes_with_the_largest_keys() -> None:
    """Twice as many distinct keys as a cache holds, each the largest it keeps: what the
    process holds afterwards is within the cache's byte budget (tracemalloc)."""
    for check in CACHED_CHECKS:
        caches = Caches()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            with caching(caches):
                for key in _largest_keys(check, 2 * check.maxsize):  # kept by the cache alone
                    with contextlib.suppress(QuantityError):
                        check(key)
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        info = check.cache_info(caches)
        assert info.currsize == info.maxsize == check.maxsize, check.__name__
        assert grown <= check.max_bytes, (check.__name__, grown, check.max_bytes)
        assert grown > check.max_bytes // 8, (check.__name__, grown)  # it did keep them
        assert caches.max_bytes == check.max_bytes


def test_caches_belong_to_their_settings_and_go_with_them() -> None:
    """What one configuration's judging keeps is in its settings' caches: another settings
    (a reload's) start empty and fill their own; the old ones, dropped, free it all."""
    size = 200
    old = Settings()

    def judged(i: int, settings: Settings) -> None:
        obj = job()
        container = obj["spec"]["template"]["spec"]["containers"][0]
        container["env"] = [
            {"name": f"E{i:03d}{n:03d}" + "V" * size, "value": "v"} for n in range(8)
        ]
        assert handle_validate(orjson.dumps(review(obj)), settings).status == 200

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(100):  # 800 distinct env names of about 200 characters
            judged(i, old)
        gc.collect()
        filled = tracemalloc.get_traced_memory()[0] - before
        caches = weakref.ref(old.caches)
        kept = relaxed_env_var_name_problems.cache_info(old.caches).currsize
        assert len(old.caches) > 0 and kept > 0

        new = Settings()  # what a reload makes
        assert relaxed_env_var_name_problems.cache_info(new.caches) is None
        judged(0, new)
        assert relaxed_env_var_name_problems.cache_info(new.caches).currsize > 0
        assert relaxed_env_var_name_problems.cache_info(old.caches).currsize == kept
        del old
        gc.collect()
        freed = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert caches() is None
    newest = weakref.ref(new.caches)
    del new  # the last settings used: nothing module-level keeps them either
    gc.collect()
    assert newest() is None
    assert filled > 400 * size  # the old settings' caches held the names
    assert freed < filled / 4, (filled, freed)


def test_settings_sent_to_workers_arrive_with_empty_caches() -> None:
    import pickle

    settings = Settings()
    with caching(settings.caches):
        assert qualified_name_problems("app") == ()
    copy = pickle.loads(pickle.dumps(settings))
    assert copy == settings and len(settings.caches) == 1 and len(copy.caches) == 0


def test_the_readme_states_the_short_string_caches_bound() -> None:
    total = sum(check.max_bytes for check in CACHED_CHECKS) / MiB
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert len(CACHED_CHECKS) == sum(
        isinstance(value, ShortKeyCache)
        for module in (names, quantity, cron)
        for value in vars(module).values()
    )
    assert f"at most {total:g} MiB together" in readme
