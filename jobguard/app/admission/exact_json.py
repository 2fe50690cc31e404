"""The second reading of a body that orjson refuses.

orjson (the fast path) refuses numbers beyond a double's range (an integer of 309 digits or
`1e400`), the non-standard `NaN` and `Infinity`, and strings with lone surrogate escapes. The
API server never sends such values, but whoever does must still get an AdmissionReview when the
request's uid is readable. The standard library's decoder reads such a body: numbers it cannot
hold become `Unreadable` markers (the caller names the first one's field and denies with code
400), and lone surrogates become U+FFFD, as Go's encoding/json reads them.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1
_MAX_INT_DIGITS = 20
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class Unreadable:
    """Stands for a value no 64-bit integer or double can hold."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"<unreadable: {self.reason}>"


@dataclass(frozen=True, slots=True)
class UnreadableValue:
    """Where the first unreadable value is (keys and indexes from the body's root) and why."""

    location: tuple[str | int, ...]
    reason: str


# One marker per reason, shared: a body of 3,500,000 `NaN` would otherwise build as many
# markers and messages (about 30 bytes of memory per body byte, past what the server's memory
# budget charges for the body).
_TOO_BIG_INT = Unreadable("integer does not fit in 64 bits")
_TOO_BIG_FLOAT = Unreadable("number is out of the range of a double")
_CONSTANTS = {
    name: Unreadable(f"{name} is not a JSON number") for name in ("NaN", "Infinity", "-Infinity")
}


def _parse_int(text: str) -> int | Unreadable:
    # Length first: int() of a 100,000-digit string is slow (and refused beyond 4,300 digits).
    if len(text.lstrip("-")) <= _MAX_INT_DIGITS:
        value = int(text)
        if _INT64_MIN <= value <= _UINT64_MAX:
            return value
    return _TOO_BIG_INT


def _parse_float(text: str) -> float | Unreadable:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return _TOO_BIG_FLOAT
    return value


def _parse_constant(text: str) -> Unreadable:
    return _CONSTANTS.get(text) or Unreadable(f"{text} is not a JSON number")


def loads(body: bytes) -> tuple[Any, UnreadableValue | None]:
    """The decoded body and its first unreadable value; ValueError (or RecursionError) when the
    body is not JSON at all."""
    return _loads(body, *_may_overflow(body))


def _loads(body: bytes, integers: bool, floats: bool) -> tuple[Any, UnreadableValue | None]:
    """`loads`, told whether integers and other numbers may be out of range (`_may_overflow`)."""
    markers = 0

    def count(marker: Any) -> Any:
        nonlocal markers
        markers += isinstance(marker, Unreadable)
        return marker

    data = json.loads(
        body.decode("utf-8"),  # as orjson: UTF-8 only (json.loads would guess UTF-16 or 32)
        parse_int=(lambda text: count(_parse_int(text))) if integers else int,
        parse_float=(lambda text: count(_parse_float(text))) if floats else float,
        parse_constant=lambda text: count(_parse_constant(text)),
    )
    if _SURROGATE_ESCAPE.search(body) is not None:
        data = _replace_surrogates(data)
    return data, first_unreadable(data) if markers else None


_DIGITS_AND_EXPONENTS = bytes.maketrans(b"123456789E", b"000000000e")
_TWENTY_DIGITS = b"0" * 20
_LARGE_EXPONENTS = (b"e000", b"e+000")


def _may_overflow(body: bytes) -> tuple[bool, bool]:
    """Whether an integer, and whether a number with a fraction or an exponent, in `body` may
    be out of range: only then are they decoded through Python callbacks (a call per number,
    0.3-0.5 us: seconds for a 7 MiB list of zeros); otherwise the decoder builds them in C.

    An integer beyond 64 bits has 20 digits in a row; a double beyond 1.8e308, 20 digits or an
    exponent of three digits. Found in C (digits mapped to `0`, then searched: 10-20 ms for 7
    MiB, where a regular expression takes 0.2-0.3 s); strings that contain them only make the
    decoding slower."""
    mapped = body.translate(_DIGITS_AND_EXPONENTS)
    integers = _TWENTY_DIGITS in mapped
    return integers, integers or any(exponent in mapped for exponent in _LARGE_EXPONENTS)


class _Refused(Exception):
    """A value orjson refuses: the body is read as `loads` reads it."""


def _int_as_orjson(text: str) -> int | float:
    # orjson reads an integer beyond 64 bits as a double, and refuses one beyond a double.
    if len(text.lstrip("-")) <= _MAX_INT_DIGITS:
        value = int(text)
        if _INT64_MIN <= value <= _UINT64_MAX:
            return value
    return _float_as_orjson(text)


def _float_as_orjson(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused
    return value


def _refuse(text: str) -> Any:
    raise _Refused


def loads_large(body: bytes) -> tuple[Any, UnreadableValue | None]:
    """What `orjson.loads` gives (and `loads` where orjson refuses), in less than half the memory.

    orjson first parses into an intermediate buffer and then builds the objects (a peak of
    88 MiB against this decoder's 35 for a 4.8 MiB review, `bench.bench_memory`); the standard library's decoder, as fast on
    string-heavy bodies, builds them directly. Numbers and strings come out as orjson's.
    Raises ValueError (or RecursionError) when the body is not JSON.
    """
    integers, floats = _may_overflow(body)
    if not integers:
        # Without an integer beyond 64 bits (which orjson reads as a double and `loads` marks),
        # both read every value alike, and `loads` marks what orjson refuses where orjson's
        # reading would stop there and start again: one pass instead of two.
        return _loads(body, integers, floats)
    try:
        data = json.loads(
            body.decode("utf-8"),
            parse_int=_int_as_orjson if integers else int,
            parse_float=_float_as_orjson if floats else float,
            parse_constant=_refuse,
        )
    except _Refused:
        return loads(body)
    # orjson refuses lone surrogates (pairs are joined alike); only escapes can make them.
    if _SURROGATE_ESCAPE.search(body) is not None and _has_lone_surrogate(data):
        return loads(body)
    return data, None


def _has_lone_surrogate(data: Any) -> bool:
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and _SURROGATE.search(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def first_unreadable(data: Any) -> UnreadableValue | None:
    """Depth-first, in document order: the first Unreadable marker and its location.

    The walk holds one iterator per level of nesting, never a copy of a container's items: a
    list of 3,500,000 numbers is walked in the memory of its depth (a stack of its items, each
    with its index, cost 60 times the body's size). A list's item types are looked at in C
    first: one of scalars only is passed over, or its marker found, without a step in Python
    per item."""
    if isinstance(data, Unreadable):
        return UnreadableValue((), data.reason)
    location: list[str | int] = []
    levels: list[Iterator[tuple[str | int, Any]]] = []
    if isinstance(data, dict | list):
        levels.append(_children(data))
    while levels:
        child = next(levels[-1], None)
        if child is None:
            levels.pop()
            if location:
                location.pop()
            continue
        key, value = child
        if isinstance(value, Unreadable):
            return UnreadableValue((*location, key), value.reason)
        if isinstance(value, list) and value:
            kinds = set(map(type, value))
            if not kinds & _NESTED:
                if Unreadable in kinds:
                    index = operator.indexOf(map(type, value), Unreadable)
                    return UnreadableValue((*location, key, index), value[index].reason)
                continue
        if isinstance(value, dict | list) and value:
            location.append(key)
            levels.append(_children(value))
    return None


_NESTED = frozenset({dict, list})


def _children(value: dict[str, Any] | list[Any]) -> Iterator[tuple[str | int, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def _fix(text: str) -> str:
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _replace_surrogates(data: Any) -> Any:
    """Lone surrogates (valid pairs were joined by the decoder) become U+FFFD, in place."""
    if isinstance(data, str):
        return _fix(data)
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            items = [(_fix(k), v) for k, v in value.items()]
            value.clear()
            for key, item in items:
                value[key] = _fix(item) if isinstance(item, str) else item
                if isinstance(item, dict | list):
                    stack.append(item)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    value[i] = _fix(item)
                elif isinstance(item, dict | list):
                    stack.append(item)
    return data


def field_path(location: tuple[str | int, ...]) -> str:
    """The field as the webhook names fields: relative to `request.object`, prefixed with
    `oldObject` inside the old object, from the review's root elsewhere."""
    prefix = ""
    if location[:2] == ("request", "object"):
        location = location[2:]
    elif location[:2] == ("request", "oldObject"):
        prefix, location = "oldObject", location[2:]
    path = prefix
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path
