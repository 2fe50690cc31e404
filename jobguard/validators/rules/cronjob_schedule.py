"""CS-001..CS-004: a CronJob's own fields (upstream validateCronJobSpec; docs/RULES.md,
"CronJob spec (CS)").

Wrongly typed values are left to decoding and the schema rules (SC); these rules judge values
of the right JSON type only. An absent or empty concurrencyPolicy is defaulted to Allow before
validation, so it is never Required.
"""

from __future__ import annotations

from typing import Any

from jobguard.validators.cron import load_location, schedule_problem
from jobguard.validators.errors import FieldError, invalid, non_negative, not_supported, required

CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
_ZONE_PART_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_0123456789+")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


HEAD_COUNTS = ("startingDeadlineSeconds",)
"""validate_nonnegative_fields's fields before the job template."""
TAIL_COUNTS = ("successfulJobsHistoryLimit", "failedJobsHistoryLimit")
"""validate_nonnegative_fields's fields after the job template."""


def validate_schedule_format(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: str, opts: None
) -> list[FieldError]:
    """validateScheduleFormat: cron syntax, and TZ=/CRON_TZ= refused unless the stored
    schedule already had it (then only without spec.timeZone). `path` is the spec's."""
    path = f"{path}.schedule"
    schedule = spec.get("schedule")
    if schedule is None or schedule == "":
        return [required("CS-001", path)]
    if not isinstance(schedule, str):
        return []
    errors: list[FieldError] = []
    problem = schedule_problem(schedule)
    if problem is not None:
        errors.append(invalid("CS-001", path, schedule, problem))
    old_schedule = old_spec.get("schedule") if old_spec is not None else None
    allow_tz = isinstance(old_schedule, str) and "TZ" in old_schedule
    if allow_tz and "TZ" in schedule and spec.get("timeZone") is not None:
        detail = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
        errors.append(invalid("CS-001", path, schedule, detail))
    elif not allow_tz and "TZ" in schedule:
        detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
        errors.append(invalid("CS-001", path, schedule, detail))
    return errors


def validate_time_zone(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: str, opts: None
) -> list[FieldError]:
    """validateTimeZone, on CREATE and whenever an UPDATE changes the zone."""
    path = f"{path}.timeZone"
    zone = spec.get("timeZone")
    if not isinstance(zone, str) or (old_spec is not None and old_spec.get("timeZone") == zone):
        return []
    if zone == "":
        return [invalid("CS-002", path, zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if (
            part in (".", "..")
            or part.startswith("-")
            or not 1 <= len(part) <= 14
            or not set(part) <= _ZONE_PART_CHARS
        ):
            return [invalid("CS-002", path, zone, f"unknown time zone {zone}")]
    errors: list[FieldError] = []
    if zone.lower() == "local":
        detail = (
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
        )
        errors.append(invalid("CS-002", path, zone, detail))
    problem = load_location(zone)
    if problem is not None:
        errors.append(invalid("CS-002", path, zone, problem))
    return errors


def validate_concurrency_policy(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: str, opts: None
) -> list[FieldError]:
    policy = spec.get("concurrencyPolicy")
    if not isinstance(policy, str) or policy == "" or policy in CONCURRENCY_POLICIES:
        return []
    return [not_supported("CS-003", f"{path}.concurrencyPolicy", policy, CONCURRENCY_POLICIES)]


def validate_nonnegative_fields(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: str, names: tuple[str, ...]
) -> list[FieldError]:
    """The fields `names` (HEAD_COUNTS, TAIL_COUNTS) >= 0."""
    errors: list[FieldError] = []
    for name in names:
        value = _int(spec.get(name))
        if value is not None and value < 0:
            errors.append(non_negative("CS-004", f"{path}.{name}", value))
    return errors


def validate_cronjob_spec_head(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: str, opts: None
) -> list[FieldError]:
    """The checks upstream makes before the job template, in its order (`old_spec` is None on
    CREATE)."""
    return (
        validate_schedule_format(spec, old_spec, path, None)
        + validate_nonnegative_fields(spec, old_spec, path, HEAD_COUNTS)
        + validate_time_zone(spec, old_spec, path, None)
        + validate_concurrency_policy(spec, old_spec, path, None)
    )


def validate_cronjob_spec_tail(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, path: str, opts: None
) -> list[FieldError]:
    """The checks upstream makes after the job template."""
    return validate_nonnegative_fields(spec, old_spec, path, TAIL_COUNTS)
