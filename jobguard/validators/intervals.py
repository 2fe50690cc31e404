"""Index interval lists (`succeededIndexes`, `completedIndexes`, `failedIndexes`).

The grammar is upstream's `validateIndexesFormat` and `parseIndexInterval` (docs/RULES.md,
"Success policy (SP)"): comma-separated fragments, each a number or a `first-last` range,
numbers parsed like Go's `strconv.Atoi`, strictly increasing, every index below the number of
completions. Parsing is one linear pass and ranges are never expanded, so `0-2147483646` is a
single interval.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter, lt

from jobguard.validators.memo import ByteBoundedMemo

_ATOI = re.compile(r"\+?[0-9]+")
_INT64_MAX = 2**63 - 1
_INT64_DIGITS = len(str(_INT64_MAX))


class IndexParseError(ValueError):
    """The first grammar violation found, worded like upstream."""


@dataclass(frozen=True, slots=True)
class Interval:
    first: int
    last: int

    def __len__(self) -> int:
        return self.last - self.first + 1


def _atoi(part: str) -> int:
    # Go's Atoi: optional '+', ASCII digits only, must fit int64. Python's int() is too lenient.
    if _ATOI.fullmatch(part) is None:
        raise IndexParseError(f'cannot convert string to integer for index: "{part}"')
    # Strip zeros first: int() refuses very long digit strings, Go accepts any run of zeros.
    digits = part.lstrip("+").lstrip("0") or "0"
    if len(digits) > _INT64_DIGITS or int(digits) > _INT64_MAX:
        raise IndexParseError(f'cannot convert string to integer for index: "{part}"')
    return int(digits)


def _parse_fragment(fragment: str, completions: int) -> Interval:
    parts = fragment.split("-")
    if len(parts) > 2:
        raise IndexParseError(
            f'the fragment "{fragment}" violates the requirement that an index interval can '
            "have at most two parts separated by '-'"
        )
    first = _atoi(parts[0])
    if first >= completions:
        raise IndexParseError(f'too large index: "{parts[0]}"')
    last = first
    if len(parts) == 2:
        last = _atoi(parts[1])
        if last >= completions:
            raise IndexParseError(f'too large index: "{parts[1]}"')
        if first >= last:
            raise IndexParseError(f"non-increasing order, previous: {first}, current: {last}")
    return Interval(first, last)


def iter_intervals(indexes: str, completions: int) -> Iterator[Interval]:
    """Yield intervals in order; raise IndexParseError at the first violation."""
    if indexes == "":
        return
    previous_last = -1
    for fragment in indexes.split(","):
        interval = _parse_fragment(fragment, completions)
        if previous_last >= 0 and interval.first <= previous_last:
            raise IndexParseError(
                f"non-increasing order, previous: {previous_last}, current: {interval.first}"
            )
        previous_last = interval.last
        yield interval


def parse_intervals(indexes: str, completions: int) -> list[Interval]:
    """The whole interval list, or IndexParseError."""
    return list(iter_intervals(indexes, completions))


def count_indexes(indexes: str, completions: int) -> int:
    """Number of indexes in the set, or IndexParseError.

    The same strings come back on every status update of a Job, so results are cached.
    """
    size, error = _count_cached((indexes, completions))
    if error is not None:
        raise IndexParseError(error)
    return size


# Numbers of at most 18 digits (int() is fast and safe on them; longer ones take the exact path).
_WELL_FORMED = re.compile(r"[0-9]{1,18}(?:-[0-9]{1,18})?(?:,[0-9]{1,18}(?:-[0-9]{1,18})?)*")
_FRAGMENT = re.compile(r"([0-9]+)(?:-([0-9]+))?")


def _count_valid_fast(indexes: str, completions: int) -> int | None:
    """The size of a valid list, checked with C-level loops; None when anything is off (the
    exact parser then finds and words the first error)."""
    if "-" not in indexes:  # single indexes only: split and compare, all in C loops
        tokens = indexes.split(",")
        if not (indexes.isascii() and all(map(str.isdigit, tokens))) or max(map(len, tokens)) > 18:
            return None
        numbers = list(map(int, tokens))
        if numbers[-1] >= completions or not all(map(lt, numbers, numbers[1:])):
            return None
        return len(numbers)
    if _WELL_FORMED.fullmatch(indexes) is None:
        return None
    pairs = _FRAGMENT.findall(indexes)
    firsts = list(map(int, map(itemgetter(0), pairs)))
    lasts = [int(b) if b else a for (_, b), a in zip(pairs, firsts, strict=True)]
    if lasts[-1] >= completions:
        return None
    ranges_increase = all(
        a < b for (_, text), a, b in zip(pairs, firsts, lasts, strict=True) if text
    )
    if not ranges_increase or not all(map(lt, lasts, firsts[1:])):
        return None
    return sum(lasts) - sum(firsts) + len(firsts)


def _count(key: tuple[str, int]) -> tuple[int, str | None]:
    indexes, completions = key
    if indexes and (fast := _count_valid_fast(indexes, completions)) is not None:
        return fast, None
    try:
        return sum(len(interval) for interval in iter_intervals(indexes, completions)), None
    except IndexParseError as exc:
        return 0, str(exc)


# Bounded by the bytes of the strings (clients choose them): 4 MiB holds about 60 lists of
# 64 KiB (the successPolicy limit) or thousands of short ones; a longer string is not kept.
_count_cached = ByteBoundedMemo(_count, max_bytes=4 * 1024 * 1024)


def _lenient_intervals(indexes: str, completions: int) -> Iterator[Interval]:
    """Intervals of every fragment that parses on its own, skipping the rest (for ST-027)."""
    if indexes == "":
        return
    for fragment in indexes.split(","):
        try:
            yield _parse_fragment(fragment, completions)
        except IndexParseError:
            continue


def first_overlap(completed: str, failed: str, completions: int) -> int | None:
    """First index present in both lists, walking both with two cursors like upstream."""
    completed_iter = _lenient_intervals(completed, completions)
    failed_iter = _lenient_intervals(failed, completions)
    c = next(completed_iter, None)
    f = next(failed_iter, None)
    while c is not None and f is not None:
        if c.first <= f.last and f.first <= c.last:
            return max(c.first, f.first)
        if c.first <= f.first:
            c = next(completed_iter, None)
        else:
            f = next(failed_iter, None)
    return None
