"""Index interval lists (`succeededIndexes`, `completedIndexes`, `failedIndexes`).

The grammar is upstream's `validateIndexesFormat` and `parseIndexInterval` (docs/RULES.md,
"Success policy (SP)"): comma-separated fragments, each a number or a `first-last` range,
numbers parsed like Go's `strconv.Atoi`, strictly increasing, every index below the number of
completions. Parsing is one linear pass and ranges are never expanded, so `0-2147483646` is a
single interval.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter, lt

from jobguard.validators.memo import OwnedMemo

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


def parse_intervals(indexes: str, completions: int) -> list[Interval]:
    """The whole interval list, or IndexParseError."""
    if indexes == "":
        return []
    firsts, lasts = _exact_intervals(indexes, completions, _typecode(completions))
    return list(map(Interval, firsts, lasts))


def count_indexes(indexes: str, completions: int, stored: str | None = None) -> int:
    """Number of indexes in the set, or IndexParseError.

    The same strings come back on every status update of a Job, so results are cached.
    `stored` is the list this one replaces (the stored Job's): where both share their first
    fragments, as when the job controller adds an index, only the rest is parsed.
    """
    parsed = _parsed(indexes, completions, stored)
    if parsed.error is not None:
        raise IndexParseError(parsed.error)
    return parsed.count


@dataclass(frozen=True, slots=True)
class _Parsed:
    """An index list as parsed: its size and intervals in order, or its first error."""

    count: int
    error: str | None
    firsts: array[int]
    lasts: array[int]
    """The same array as `firsts` when every fragment is a single index."""

    def bytes(self) -> int:
        """What the intervals hold (charged to the cache with the string)."""
        extra = 0 if self.lasts is self.firsts else self.lasts.itemsize * len(self.lasts)
        return self.firsts.itemsize * len(self.firsts) + extra


def _typecode(completions: int) -> str:
    # Indexes are below completions (an int32 in a Job): 4 bytes each, 8 beyond.
    return "i" if completions <= 2**31 else "q"


# Numbers of at most 18 digits (int() is fast and safe on them; longer ones take the exact path).
_WELL_FORMED = re.compile(r"[0-9]{1,18}(?:-[0-9]{1,18})?(?:,[0-9]{1,18}(?:-[0-9]{1,18})?)*")
_FRAGMENT = re.compile(r"([0-9]+)(?:-([0-9]+))?")


_PIECE_CHARS = 64 * 1024


def _pieces(indexes: str) -> Iterator[list[str]]:
    """The fragments of a list, about 64 KiB of them at a time: split whole, a 7 MiB list
    would be a million strings (56 MiB) at once."""
    start = 0
    while True:
        end = indexes.find(",", start + _PIECE_CHARS)
        if end < 0:
            yield indexes[start:].split(",")
            return
        yield indexes[start:end].split(",")
        start = end + 1


def _fast_intervals(
    indexes: str, completions: int, code: str
) -> tuple[array[int], array[int]] | None:
    """(firsts, lasts) of a valid non-empty list, checked with C-level loops (the same array
    twice when there is no range); None when anything is off (the exact parser then finds and
    words the first error)."""
    if not indexes.isascii():
        return None
    if "-" not in indexes:  # single indexes only: split and compare, all in C loops
        numbers = array(code)
        for tokens in _pieces(indexes):
            if not all(map(str.isdigit, tokens)) or max(map(len, tokens)) > 18:
                return None
            piece = list(map(int, tokens))
            if (numbers and piece[0] <= numbers[-1]) or not all(map(lt, piece, piece[1:])):
                return None
            if piece[-1] >= completions:
                return None
            numbers.extend(piece)
        return numbers, numbers
    if _WELL_FORMED.fullmatch(indexes) is None:
        return None
    firsts, lasts = array(code), array(code)
    for tokens in _pieces(indexes):
        pairs = _FRAGMENT.findall(",".join(tokens))
        piece_firsts = list(map(int, map(itemgetter(0), pairs)))
        piece_lasts = [int(b) if b else a for (_, b), a in zip(pairs, piece_firsts, strict=True)]
        ranges_increase = all(
            a < b for (_, text), a, b in zip(pairs, piece_firsts, piece_lasts, strict=True) if text
        )
        if (
            not ranges_increase
            or (lasts and piece_firsts[0] <= lasts[-1])
            or not all(map(lt, piece_lasts, piece_firsts[1:]))
            or piece_lasts[-1] >= completions
        ):
            return None
        firsts.extend(piece_firsts)
        lasts.extend(piece_lasts)
    return firsts, lasts


def _exact_intervals(indexes: str, completions: int, code: str) -> tuple[array[int], array[int]]:
    """The list's intervals as two arrays, or IndexParseError at the first violation: plain
    numbers (most fragments of a long list) are taken without building a fragment each, so
    finding the first error of a 400,000-fragment list takes a tenth of a second, not one and
    a half."""
    firsts, lasts = array(code), array(code)
    previous_last = -1
    for tokens in _pieces(indexes):
        for fragment in tokens:
            if fragment.isdigit() and fragment.isascii() and len(fragment) <= 18:
                first = last = int(fragment)  # Atoi's result: ASCII digits, leading zeros
                if first >= completions:
                    raise IndexParseError(f'too large index: "{fragment}"')
            else:
                interval = _parse_fragment(fragment, completions)
                first, last = interval.first, interval.last
            if first <= previous_last:
                raise IndexParseError(
                    f"non-increasing order, previous: {previous_last}, current: {first}"
                )
            firsts.append(first)
            lasts.append(last)
            previous_last = last
    return firsts, lasts


def _parse(key: tuple[str, int]) -> _Parsed:
    indexes, completions = key
    code = _typecode(completions)
    if not indexes:
        return _Parsed(0, None, array(code), array(code))
    fast = _fast_intervals(indexes, completions, code)
    if fast is None:
        try:
            fast = _exact_intervals(indexes, completions, code)
        except IndexParseError as exc:
            return _Parsed(0, str(exc), array(code), array(code))
    firsts, lasts = fast
    if lasts is firsts or lasts == firsts:
        return _Parsed(len(firsts), None, firsts, firsts)
    count = sum(lasts) - sum(firsts) + len(firsts)
    return _Parsed(count, None, firsts, lasts)


# Bounded by the bytes of the strings (clients choose them) and of their intervals: 4 MiB holds
# about 35 lists of 64 KiB (the successPolicy limit) or thousands of short ones.
_parsed_cache: OwnedMemo[tuple[str, int], _Parsed] = OwnedMemo(
    _parse, max_bytes=4 * 1024 * 1024, value_bytes=_Parsed.bytes
)

_INCREMENTAL_CHARS = 1024
"""Lists shorter than this are parsed whole (it costs less than finding what changed)."""


def _parsed(indexes: str, completions: int, stored: str | None) -> _Parsed:
    key = (indexes, completions)
    if stored is None or len(stored) < _INCREMENTAL_CHARS or stored == indexes:
        return _parsed_cache(key)
    return _parsed_cache.get_or_compute(key, lambda key: _parse_changed(key, stored))


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (a binary search on C comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # a[:low] == b[:low]
        middle = (low + high + 1) // 2
        if a.startswith(b[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def _shared_end(stored: str, indexes: str) -> int:
    """Where the fragments both lists begin with end: the position of the comma after them in
    both (or the end of the shorter one); -1 when even their first fragments differ."""
    shorter, longer = (stored, indexes) if len(stored) <= len(indexes) else (indexes, stored)
    if longer.startswith(shorter) and longer[len(shorter) : len(shorter) + 1] == ",":
        return len(shorter)  # fragments added (or removed) at the end only
    return stored.rfind(",", 0, _common_prefix(stored, indexes))


def _parse_changed(key: tuple[str, int], stored: str) -> _Parsed:
    """`_parse(key)`, parsing only the fragments after those `stored` begins with too."""
    indexes, completions = key
    base = _parsed_cache((stored, completions))
    cut = _shared_end(stored, indexes)
    new_text = indexes[cut + 1 :] if cut < len(indexes) else None
    if base.error is not None or cut <= 0 or new_text == "":
        return _parse(key)
    kept = stored.count(",", 0, cut) + 1  # fragments before the cut, common to both
    new = _parse((new_text or "", completions))
    if new.error is not None or (new.count and new.firsts[0] <= base.lasts[kept - 1]):
        return _parse(key)  # the whole list, to find and word the first error
    if base.lasts is base.firsts:
        removed = len(base.firsts) - kept
    else:
        removed = sum(base.lasts[kept:]) - sum(base.firsts[kept:]) + len(base.firsts) - kept
    firsts = base.firsts[:kept] + new.firsts
    single = base.lasts is base.firsts and new.lasts is new.firsts
    lasts = firsts if single else base.lasts[:kept] + new.lasts
    return _Parsed(base.count - removed + new.count, None, firsts, lasts)


def _lenient_intervals(indexes: str, completions: int) -> Iterator[Interval]:
    """Intervals of every fragment that parses on its own, skipping the rest (for ST-027)."""
    if indexes == "":
        return
    for fragment in indexes.split(","):
        try:
            yield _parse_fragment(fragment, completions)
        except IndexParseError:
            continue


def first_overlap(
    completed: str, failed: str, completions: int, stored_completed: str | None = None
) -> int | None:
    """First index present in both lists, as upstream's walk with two cursors finds it.

    Results are cached; `stored_completed` (the stored Job's completedIndexes) lets a list that
    only grew at its end be checked by its new intervals alone.
    """
    return _overlaps.get_or_compute(
        (completed, failed, completions), lambda key: _first_overlap(key, stored_completed)
    )


def _first_overlap(key: tuple[str, str, int], stored_completed: str | None) -> int | None:
    completed, failed, completions = key
    done = _parsed(completed, completions, stored_completed)
    fail = _parsed(failed, completions, None)
    if done.error is None and fail.error is None and done.count and fail.count:
        if stored_completed is not None and _shared_end(stored_completed, completed) == len(
            stored_completed
        ):
            before = _overlaps.peek((stored_completed, failed, completions))
            if before == (None,):  # the stored intervals meet none: only the new ones can
                return _first_common(done, fail, stored_completed.count(",") + 1)
        if _disjoint(done, fail):
            return None
    return _walk(completed, failed, completions)


def _first_common(done: _Parsed, fail: _Parsed, start: int) -> int | None:
    """The first index of `done`'s intervals from `start` on that `fail` holds too."""
    for first, last in zip(done.firsts[start:], done.lasts[start:], strict=True):
        j = bisect_left(fail.lasts, first)  # the first failed interval that reaches `first`
        if j < len(fail.lasts) and fail.firsts[j] <= last:
            return max(first, fail.firsts[j])
    return None


def _disjoint(a: _Parsed, b: _Parsed) -> bool:
    """Whether two valid lists share no index: sorted together, every interval must end before
    the next begins (intervals within one list are ascending and apart already)."""
    firsts = sorted(a.firsts + b.firsts)
    lasts = firsts if a.lasts is a.firsts and b.lasts is b.firsts else sorted(a.lasts + b.lasts)
    return all(map(lt, lasts, islice(firsts, 1, None)))


def _walk(completed: str, failed: str, completions: int) -> int | None:
    """Upstream's walk, over every fragment that parses on its own."""
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


# Results for pairs of lists: bounded by the bytes of both strings.
_overlaps: OwnedMemo[tuple[str, str, int], int | None] = OwnedMemo(
    lambda key: _first_overlap(key, None), max_bytes=2 * 1024 * 1024
)
