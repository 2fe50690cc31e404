"""A CronJob's own fields (CS-001..CS-004): schedule, timeZone, concurrencyPolicy, limits."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobguard.validators import Verdict
from tests.builders import create, detailed_causes, update

TZ_REFUSED = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"


def cronjob(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schedule": "*/5 * * * *",
        "jobTemplate": {
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [{"name": "main", "image": "busybox"}],
                    }
                }
            }
        },
    }
    base.update(spec)
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {k: v for k, v in base.items() if v is not None},
    }


def cj(obj: dict[str, Any]) -> Verdict:
    return create(obj, kind="CronJob")


@pytest.mark.parametrize(
    "schedule",
    [
        "*/5 * * * *",
        "0 0 1 1 *",
        "0 9-17/2 * JAN-mar MON-fri",
        "? ? ? ? ?",
        "0,15,,30 * * * *",
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
        "@every 1h30m",
        "@every 1.5h",
        "@every 500ms",
    ],
)
def test_schedules_the_api_server_accepts(schedule: str) -> None:
    assert cj(cronjob(schedule=schedule)).violations == []


@pytest.mark.parametrize(
    ("schedule", "detail"),
    [
        ("every day", "expected exactly 5 fields, found 2: [every day]"),
        ("0 0 * * * *", "expected exactly 5 fields, found 6: [0 0 * * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* 24 * * *", "end of range (24) above maximum (23): 24"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("* * * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("*/2/3 * * * *", "too many slashes: */2/3"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("*/-1 * * * *", "negative number (-1) not allowed: -1"),
        (
            "99999999999999999999 * * * *",
            "failed to parse int from 99999999999999999999: strconv.Atoi: parsing "
            '"99999999999999999999": value out of range',
        ),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ("@hourly ", "unrecognized descriptor: @hourly "),
        (
            "@every 1x",
            'failed to parse duration @every 1x: time: unknown unit "x" in duration "1x"',
        ),
        ("@every 10", 'failed to parse duration @every 10: time: missing unit in duration "10"'),
        ("@every ", 'failed to parse duration @every : time: invalid duration ""'),
    ],
)
def test_schedules_the_api_server_refuses_in_its_words(schedule: str, detail: str) -> None:
    quoted = schedule.replace('"', '\\"')
    assert detailed_causes(cj(cronjob(schedule=schedule))) == [
        ("CS-001", "spec.schedule", "FieldValueInvalid", f'Invalid value: "{quoted}": {detail}')
    ]


def test_a_missing_schedule_is_required() -> None:
    assert detailed_causes(cj(cronjob(schedule=None))) == [
        ("CS-001", "spec.schedule", "FieldValueRequired", "Required value")
    ]
    assert detailed_causes(cj(cronjob(schedule=""))) == [
        ("CS-001", "spec.schedule", "FieldValueRequired", "Required value")
    ]


def test_time_zones_in_the_schedule_are_refused() -> None:
    schedule = "TZ=Europe/Berlin 0 3 * * *"
    assert detailed_causes(cj(cronjob(schedule=schedule))) == [
        (
            "CS-001",
            "spec.schedule",
            "FieldValueInvalid",
            f'Invalid value: "{schedule}": {TZ_REFUSED}',
        )
    ]
    schedule = "CRON_TZ=Mars/Olympus 0 3 * * *"
    bad = "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"
    assert [body for *_, body in detailed_causes(cj(cronjob(schedule=schedule)))] == [
        f'Invalid value: "{schedule}": {bad}',
        f'Invalid value: "{schedule}": {TZ_REFUSED}',
    ]


def test_a_tz_prefix_without_a_space_is_the_recovered_panic() -> None:
    detail = "invalid schedule format: runtime error: slice bounds out of range [:-1]"
    assert [body for *_, body in detailed_causes(cj(cronjob(schedule="TZ=UTC")))] == [
        f'Invalid value: "TZ=UTC": {detail}',
        f'Invalid value: "TZ=UTC": {TZ_REFUSED}',
    ]


def test_a_stored_tz_schedule_may_stay_but_not_beside_time_zone() -> None:
    old = cronjob(schedule="TZ=UTC 0 3 * * *")
    assert update(copy.deepcopy(old), old, kind="CronJob").violations == []
    new = cronjob(schedule="TZ=UTC 0 4 * * *", timeZone="UTC")
    assert detailed_causes(update(new, old, kind="CronJob")) == [
        (
            "CS-001",
            "spec.schedule",
            "FieldValueInvalid",
            'Invalid value: "TZ=UTC 0 4 * * *": cannot use both timeZone field and TZ or '
            "CRON_TZ in schedule",
        )
    ]


@pytest.mark.parametrize(
    "zone", ["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5"]
)
def test_known_time_zones(zone: str) -> None:
    assert cj(cronjob(timeZone=zone)).violations == []


@pytest.mark.parametrize(
    ("zone", "details"),
    [
        ("Mars/Olympus", ["unknown time zone Mars/Olympus"]),
        ("", ["timeZone must be nil or non-empty string"]),
        ("../etc/passwd", ["unknown time zone ../etc/passwd"]),
        ("Europe/-Berlin", ["unknown time zone Europe/-Berlin"]),
        ("Averyveryverylongname/X", ["unknown time zone Averyveryverylongname/X"]),
        (
            "local",
            [
                "timeZone must be an explicit time zone as defined in "
                "https://www.iana.org/time-zones",
                "unknown time zone local",
            ],
        ),
        (
            "Local",
            [
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
            ],
        ),
    ],
)
def test_unknown_time_zones_in_upstreams_words(zone: str, details: list[str]) -> None:
    assert detailed_causes(cj(cronjob(timeZone=zone))) == [
        ("CS-002", "spec.timeZone", "FieldValueInvalid", f'Invalid value: "{zone}": {d}')
        for d in details
    ]


def test_an_unchanged_time_zone_is_not_judged_again_on_update() -> None:
    old = cronjob(timeZone="Mars/Olympus")
    assert update(copy.deepcopy(old), old, kind="CronJob").violations == []
    assert [
        rule
        for rule, *_ in detailed_causes(
            update(cronjob(timeZone="Mars/Phobos"), old, kind="CronJob")
        )
    ] == ["CS-002"]


def test_concurrency_policy_values() -> None:
    for policy in ("Allow", "Forbid", "Replace", "", None):
        assert cj(cronjob(concurrencyPolicy=policy)).violations == []
    assert detailed_causes(cj(cronjob(concurrencyPolicy="Sometimes"))) == [
        (
            "CS-003",
            "spec.concurrencyPolicy",
            "FieldValueNotSupported",
            'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
        )
    ]


def test_deadline_and_history_limits_are_non_negative_in_upstream_order() -> None:
    obj = cronjob(
        startingDeadlineSeconds=-1,
        successfulJobsHistoryLimit=-2,
        failedJobsHistoryLimit=-3,
        concurrencyPolicy="Sometimes",
        timeZone="Mars/Olympus",
        schedule="every day",
    )
    assert [(rule, path) for rule, path, *_ in detailed_causes(cj(obj))] == [
        ("CS-001", "spec.schedule"),
        ("CS-004", "spec.startingDeadlineSeconds"),
        ("CS-002", "spec.timeZone"),
        ("CS-003", "spec.concurrencyPolicy"),
        ("CS-004", "spec.successfulJobsHistoryLimit"),
        ("CS-004", "spec.failedJobsHistoryLimit"),
    ]
    assert detailed_causes(cj(cronjob(startingDeadlineSeconds=-1)))[0][3] == (
        "Invalid value: -1: must be greater than or equal to 0"
    )
    assert cj(cronjob(startingDeadlineSeconds=0, successfulJobsHistoryLimit=0)).violations == []


def test_a_cronjob_prepared_by_the_api_server_passes() -> None:
    obj = cronjob(
        concurrencyPolicy="Allow",
        suspend=False,
        successfulJobsHistoryLimit=3,
        failedJobsHistoryLimit=1,
        timeZone="Etc/UTC",
    )
    obj["metadata"] |= {"uid": "c0ffee00-0000-4000-8000-000000000001", "generation": 1}
    obj["status"] = {}
    assert cj(obj).violations == []
    assert update(copy.deepcopy(obj), obj, kind="CronJob").violations == []
