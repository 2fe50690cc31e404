"""CronJob schedules and time zones as the API server reads them.

`schedule_problem` is robfig/cron v3's `ParseStandard` (what `validateScheduleFormat` calls):
five fields, the descriptors @yearly @annually @monthly @weekly @daily @midnight @hourly and
`@every <duration>` (Go's `time.ParseDuration`), and a leading `TZ=`/`CRON_TZ=`; its error
messages are upstream's, including the recovered panic of a `TZ=` prefix without a space.
`load_location` is Go's `time.LoadLocation` over the IANA database of the pinned `tzdata`
package, so the answer does not depend on the machine.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from jobguard.validators.memo import MiB, short_key_cache

# Go's unicode.IsSpace (strings.Fields splits on it, strings.TrimSpace trims it).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_GO_SPACE_RUN = re.compile(f"[{_GO_SPACE}]+")
_DESCRIPTORS = frozenset(
    ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_DAYS = {
    name: number for number, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))
}
# minute, hour, day of month, month, day of week: (min, max, names)
_FIELDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None),
    (0, 23, None),
    (1, 31, None),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_INT64_MAX = 2**63 - 1
_DURATION_UNITS = {
    b"ns": 1,
    b"us": 1000,
    "µs".encode(): 1000,  # U+00B5
    "μs".encode(): 1000,  # U+03BC
    b"ms": 1000**2,
    b"s": 1000**3,
    b"m": 60 * 1000**3,
    b"h": 3600 * 1000**3,
}


class ScheduleError(ValueError):
    """A schedule the API server refuses; the message is upstream's."""


def go_fields(text: str) -> list[str]:
    """strings.Fields."""
    return [part for part in _GO_SPACE_RUN.split(text) if part]


def go_trim_space(text: str) -> str:
    return text.strip(_GO_SPACE)


def go_quote(text: str) -> str:
    """strconv.Quote: Go's double-quoted string literal."""
    out = ['"']
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    escapes |= {"\v": "\\v", "\\": "\\\\", '"': '\\"'}
    for ch in text:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _time_quote(text: str) -> str:
    """The time package's quote: non-ASCII and control bytes as \\x escapes."""
    out = ['"']
    for ch in text:
        if ord(ch) >= 0x80 or ch < " ":
            out.extend(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def _atoi(text: str) -> int:
    """strconv.Atoi, raising ValueError with Go's message."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not (body.isascii() and body.isdigit()):
        raise ValueError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not -(2**63) <= value <= _INT64_MAX:
        raise ValueError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    return value


def _must_parse_int(expr: str) -> int:
    try:
        number = _atoi(expr)
    except ValueError as exc:
        raise ScheduleError(f"failed to parse int from {expr}: {exc}") from None
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {expr}")
    return number


def _parse_int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def _check_range(expr: str, low: int, high: int, names: dict[str, int] | None) -> None:
    """robfig getRange: `number | number "-" number [ "/" number ]`, `*` or `?`."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _parse_int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:  # "N/step" means "N-max/step"
            end = high
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")


def _leading_int(data: bytes) -> tuple[int, bytes] | None:
    value, i = 0, 0
    while i < len(data) and 0x30 <= data[i] <= 0x39:
        if value > (1 << 63) // 10:
            return None
        value = value * 10 + data[i] - 0x30
        if value > 1 << 63:
            return None
        i += 1
    return value, data[i:]


def _leading_fraction(data: bytes) -> tuple[int, float, bytes]:
    value, scale, i, overflow = 0, 1.0, 0, False
    while i < len(data) and 0x30 <= data[i] <= 0x39:
        if not overflow:
            if value > _INT64_MAX // 10:
                overflow = True
            else:
                candidate = value * 10 + data[i] - 0x30
                if candidate > 1 << 63:
                    overflow = True
                else:
                    value = candidate
                    scale *= 10
        i += 1
    return value, scale, data[i:]


def duration_problem(text: str) -> str | None:
    """Go's time.ParseDuration: None when it parses, else its error message."""
    invalid = f"time: invalid duration {_time_quote(text)}"
    data = text.encode("utf-8", "surrogatepass")
    if data[:1] in (b"-", b"+"):
        data = data[1:]
    if data == b"0":
        return None
    if not data:
        return invalid
    total = 0
    while data:
        if not (data[:1] == b"." or b"0" <= data[:1] <= b"9"):
            return invalid
        before = len(data)
        leading = _leading_int(data)
        if leading is None:
            return invalid
        value, data = leading
        pre = before != len(data)
        fraction, scale, post = 0, 1.0, False
        if data[:1] == b".":
            data = data[1:]
            before = len(data)
            fraction, scale, data = _leading_fraction(data)
            post = before != len(data)
        if not pre and not post:
            return invalid
        i = 0
        while i < len(data) and not (data[i] == 0x2E or 0x30 <= data[i] <= 0x39):
            i += 1
        if i == 0:
            return f"time: missing unit in duration {_time_quote(text)}"
        unit_bytes, data = data[:i], data[i:]
        unit = _DURATION_UNITS.get(unit_bytes)
        if unit is None:
            shown = _time_quote(unit_bytes.decode("utf-8", "replace"))
            return f"time: unknown unit {shown} in duration {_time_quote(text)}"
        if value > (1 << 63) // unit:
            return invalid
        value *= unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > 1 << 63:
                return invalid
        total += value
        if total > 1 << 63:
            return invalid
    if text[:1] != "-" and total > _INT64_MAX:
        return invalid
    return None


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    listing = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in listing.splitlines() if line.strip())


def load_location(name: str) -> str | None:
    """Go's time.LoadLocation: None when the zone loads, else its error message."""
    if name in ("", "UTC", "Local"):
        return None
    if ".." in name or name[0] in "/\\":
        return "time: invalid location name"
    return None if name in _zones() else f"unknown time zone {name}"


def _parse_descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith("@every "):
        problem = duration_problem(spec[len("@every ") :])
        if problem is not None:
            raise ScheduleError(f"failed to parse duration {spec}: {problem}")
        return
    raise ScheduleError(f"unrecognized descriptor: {spec}")


@short_key_cache(MiB // 2, 256)
def schedule_problem(schedule: str) -> str | None:
    """cron.ParseStandard as the API server calls it (panics recovered): None, or the error."""
    try:
        _parse_standard(schedule)
    except ScheduleError as exc:
        return str(exc)
    return None


def _parse_standard(spec: str) -> None:
    if not spec:
        raise ScheduleError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space, equals = spec.find(" "), spec.find("=")
        if space < 0:
            # spec[eq+1:-1] panics in Go; the API server recovers and reports the panic.
            raise ScheduleError(
                "invalid schedule format: runtime error: slice bounds out of range [:-1]"
            )
        zone = spec[equals + 1 : space]
        problem = load_location(zone)
        if problem is not None:
            raise ScheduleError(f"provided bad location {zone}: {problem}")
        spec = go_trim_space(spec[space:])
    if spec.startswith("@"):
        _parse_descriptor(spec)
        return
    fields = go_fields(spec)
    if len(fields) != len(_FIELDS):
        raise ScheduleError(
            f"expected exactly {len(_FIELDS)} fields, found {len(fields)}: [{' '.join(fields)}]"
        )
    for text, (low, high, names) in zip(fields, _FIELDS, strict=True):
        for expr in (part for part in text.split(",") if part):
            _check_range(expr, low, high, names)
