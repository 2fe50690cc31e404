"""Field errors shaped like Kubernetes' apimachinery `field.Error`.

Each error carries the stable ID of the rule that produced it, the field path written the way
the API server writes it, the error type and the detail. Rendering follows
`field.Error.ErrorBody()` so messages read exactly like the API server's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from jobguard.validators.cron import go_quote


class ErrorType(Enum):
    """Error types: (wire reason, human prefix)."""

    INVALID = ("FieldValueInvalid", "Invalid value")
    TYPE_INVALID = ("FieldValueTypeInvalid", "Invalid value")
    REQUIRED = ("FieldValueRequired", "Required value")
    FORBIDDEN = ("FieldValueForbidden", "Forbidden")
    TOO_MANY = ("FieldValueTooMany", "Too many")
    TOO_LONG = ("FieldValueTooLong", "Too long")
    DUPLICATE = ("FieldValueDuplicate", "Duplicate value")
    NOT_SUPPORTED = ("FieldValueNotSupported", "Unsupported value")
    NOT_FOUND = ("FieldValueNotFound", "Not found")
    UNREADABLE = ("FieldValueInvalid", "")
    """A value the object cannot be decoded with (DEC-001): the decoder's words, no prefix."""

    # _value_, not value: Enum.value is a descriptor written in Python (every error reads these).
    @property
    def reason(self) -> str:
        return str(self._value_[0])

    @property
    def prefix(self) -> str:
        return str(self._value_[1])


class _Omitted:
    """Marker for an error whose value is not printed (upstream `field.OmitValueType`)."""

    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Any = _Omitted()


class _Absent:
    """Marker for a side of a `FieldChange` where the field is not set."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field that differs between the stored object and the new one (`ABSENT` where a
    side does not set it): what an immutability error is about, for reports that say it."""

    path: str
    old: Any = ABSENT
    new: Any = ABSENT


def render_value(value: Any) -> str:
    """Print a value the way the API server does: strings quoted, numbers and bools bare.

    Structs are printed as JSON (upstream prints Go syntax; only the gist has to match).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        if value.isprintable():
            # JSON and Go's %q agree on printable text (only " and \ escaped).
            return json.dumps(value, ensure_ascii=False)
        return go_quote(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation failure at one field path."""

    rule: str
    path: str
    type: ErrorType
    detail: str = ""
    value: Any = field(default=OMITTED)
    changes: tuple[FieldChange, ...] = field(default=(), compare=False)
    """For immutability errors, the fields that differ. Never rendered in `body()`: the
    webhook answers exactly as the API server does; `jobguard check` shows them."""
    policy: str = field(default="", compare=False)
    """The suspend policy a SUS rule's error is about (metrics, logs and reports name it)."""

    def body(self) -> str:
        """The message without the field path (`details.causes[].message`)."""
        prefix = self.type.prefix
        t = self.type
        if t is ErrorType.UNREADABLE:
            return self.detail
        if t in (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG):
            return f"{prefix}: {self.detail}" if self.detail else prefix
        parts = [prefix]
        if self.value is not OMITTED:
            parts.append(render_value(self.value))
        if t is ErrorType.NOT_SUPPORTED and not self.detail:
            return ": ".join(parts)
        if self.detail:
            parts.append(self.detail)
        return ": ".join(parts)

    def message(self) -> str:
        """`<path>: <body>`, as in the aggregate message of an Invalid status."""
        return f"{self.path}: {self.body()}"

    @property
    def stands_for(self) -> int:
        """How many errors this one counts as (see `MoreErrors`)."""
        return 1


MAX_LISTED = 1000
"""At most this many errors of one rule are listed for the elements of one list field; the
rest are counted in one `MoreErrors`. A body under the size cap can list 700,000 pod UIDs, and
an error object for each would take more memory than the whole request is allowed."""


@dataclass(frozen=True, slots=True)
class MoreErrors(FieldError):
    """Stands for `count` further errors of its rule under `path` that were not listed (after
    MAX_LISTED that were). Answers count them among the errors left out; reports show it as
    one finding."""

    count: int = 0

    def body(self) -> str:
        return f"{self.count} more errors not listed"

    @property
    def stands_for(self) -> int:
        return self.count


def invalid(rule: str, path: str, value: Any, detail: str) -> FieldError:
    return FieldError(rule, path, ErrorType.INVALID, detail, value)


def invalid_omitted(rule: str, path: str, detail: str) -> FieldError:
    return FieldError(rule, path, ErrorType.INVALID, detail)


def unreadable(rule: str, path: str, reason: str) -> FieldError:
    return FieldError(rule, path, ErrorType.UNREADABLE, reason)


def required(rule: str, path: str, detail: str = "") -> FieldError:
    return FieldError(rule, path, ErrorType.REQUIRED, detail)


def forbidden(rule: str, path: str, detail: str, policy: str = "") -> FieldError:
    return FieldError(rule, path, ErrorType.FORBIDDEN, detail, policy=policy)


def immutable(
    rule: str, path: str, value: Any, changes: tuple[FieldChange, ...] = ()
) -> FieldError:
    """`changes`: the fields that differ, for reports (never rendered)."""
    return FieldError(rule, path, ErrorType.INVALID, "field is immutable", value, changes)


def non_negative(rule: str, path: str, value: int) -> FieldError:
    return FieldError(rule, path, ErrorType.INVALID, "must be greater than or equal to 0", value)


def too_long(rule: str, path: str, limit: int) -> FieldError:
    """upstream field.TooLong(path, "", limit): a value over `limit` bytes (the value not shown)."""
    return FieldError(rule, path, ErrorType.TOO_LONG, f"may not be more than {limit} bytes")


def too_many(rule: str, path: str, count: int, limit: int) -> FieldError:
    """upstream field.TooMany: a list of `count` items where at most `limit` are allowed."""
    return FieldError(rule, path, ErrorType.TOO_MANY, f"must have at most {limit} items", count)


def not_supported(rule: str, path: str, value: Any, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported)
    return FieldError(rule, path, ErrorType.NOT_SUPPORTED, detail, value)
