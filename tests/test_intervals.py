"""The index-interval grammar (RULES.md "Index-interval grammar"), against a naive reference."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobguard.validators import intervals
from jobguard.validators.intervals import (
    IndexParseError,
    count_indexes,
    first_overlap,
    parse_intervals,
)
from tests.grammar import GRAMMAR_ERRORS, GRAMMAR_VALID

C = 10


@pytest.mark.parametrize(("text", "size"), GRAMMAR_VALID)
def test_valid(text: str, size: int) -> None:
    assert count_indexes(text, C) == size


@pytest.mark.parametrize(("text", "message"), GRAMMAR_ERRORS)
def test_invalid(text: str, message: str) -> None:
    with pytest.raises(IndexParseError) as info:
        parse_intervals(text, C)
    assert str(info.value) == message


def test_zero_completions_rejects_everything_but_empty() -> None:
    assert count_indexes("", 0) == 0
    with pytest.raises(IndexParseError, match='too large index: "0"'):
        count_indexes("0", 0)


def test_huge_range_is_one_interval() -> None:
    intervals = parse_intervals("0-2147483646", 2**31 - 1)
    assert len(intervals) == 1
    assert count_indexes("0-2147483646", 2**31 - 1) == 2147483647


def test_64k_string_parses() -> None:
    text = ",".join(str(i * 2) for i in range(12000))
    assert len(text) > 60_000
    assert count_indexes(text, 10**6) == 12000


# --- property tests against a naive reference that expands every interval -------------------

_ATOI = re.compile(r"\+?[0-9]+")


def naive(text: str, completions: int) -> set[int] | str:
    """Reference: expand to a set; return the error class name on failure."""
    if text == "":
        return set()
    seen: list[int] = []
    prev = -1
    for fragment in text.split(","):
        parts = fragment.split("-")
        if len(parts) > 2:
            return "fragment"
        nums = []
        for part in parts:
            if not _ATOI.fullmatch(part) or int(part) > 2**63 - 1:
                return "convert"
            nums.append(int(part))
            if nums[-1] >= completions:
                return "large"
        first, last = nums[0], nums[-1]
        if len(nums) == 2 and first >= last:
            return "order"
        if prev >= 0 and first <= prev:
            return "order"
        seen.extend(range(first, last + 1))
        prev = last
    return set(seen)


def classify(exc: IndexParseError) -> str:
    text = str(exc)
    if text.startswith("the fragment"):
        return "fragment"
    if text.startswith("cannot convert"):
        return "convert"
    if text.startswith("too large"):
        return "large"
    return "order"


index_text = st.lists(
    st.one_of(
        st.integers(0, 40).map(str),
        st.tuples(st.integers(0, 40), st.integers(0, 40)).map(lambda t: f"{t[0]}-{t[1]}"),
        st.sampled_from(["", "+3", "007", "a", " 1", "1-2-3", "-1"]),
    ),
    max_size=8,
).map(",".join)


@settings(max_examples=400, deadline=None)
@given(text=index_text, completions=st.integers(0, 45))
def test_matches_naive_reference(text: str, completions: int) -> None:
    expected = naive(text, completions)
    try:
        intervals = parse_intervals(text, completions)
    except IndexParseError as exc:
        assert classify(exc) == expected
        return
    assert isinstance(expected, set)
    got = {i for interval in intervals for i in range(interval.first, interval.last + 1)}
    assert got == expected
    assert count_indexes(text, completions) == len(expected)


@settings(max_examples=300, deadline=None)
@given(a=index_text, b=index_text)
def test_overlap_matches_reference_on_valid_lists(a: str, b: str) -> None:
    ra, rb = naive(a, 50), naive(b, 50)
    if not isinstance(ra, set) or not isinstance(rb, set):
        return
    common = ra & rb
    assert first_overlap(a, b, 50) == (min(common) if common else None)


# --- what changed only: lists parsed from where they differ from the stored ones ------------

# A stored list long enough to be parsed from where it changes: 300 to 400 fragments (every
# index, every other one, or short ranges), then random endings (index_text's, valid or not).
_fragment_step = st.sampled_from(["single", "every other", "ranges"])


def _long_list(count: int, step: str) -> str:
    if step == "ranges":
        return ",".join(f"{4 * i}-{4 * i + 2}" for i in range(count))
    gap = 1 if step == "single" else 2
    return ",".join(str(gap * i) for i in range(count))


def _exact(text: str, completions: int) -> int | str:
    """The exact parser, uncached: the number of indexes, or the error as worded."""
    try:
        return sum(len(interval) for interval in parse_intervals(text, completions))
    except IndexParseError as exc:
        return str(exc)


def _counted(text: str, completions: int, stored: str | None) -> int | str:
    try:
        return count_indexes(text, completions, stored)
    except IndexParseError as exc:
        return str(exc)


@settings(max_examples=400, deadline=None)
@given(
    count=st.integers(300, 400),
    step=_fragment_step,
    cut=st.integers(0, 40),
    stored_end=index_text,
    new_end=index_text,
    completions=st.sampled_from([2000, 3000, 10**6]),
)
def test_a_list_parsed_from_where_it_differs_from_the_stored_one_reads_as_a_whole(
    count: int, step: str, cut: int, stored_end: str, new_end: str, completions: int
) -> None:
    """Fragments appended, changed near the end, removed, or a broken tail: the count or the
    first error is exactly the whole list's, whether the stored list is valid or not."""
    common = _long_list(count, step).rsplit(",", cut)[0] if cut else _long_list(count, step)
    offset = 4 * count + 10  # endings above the common part, so that most stay ascending
    shifted = ",".join(
        "-".join(str(int(p) + offset) if p.isdigit() else p for p in fragment.split("-"))
        for fragment in new_end.split(",")
    )
    stored = ",".join(part for part in (common, stored_end) if part)
    last = int(common.rsplit(",", 1)[-1].split("-")[-1])  # the junction: equal is not ascending
    for new in (
        f"{common},{shifted}",
        f"{common},{new_end}",
        common,
        f"{common}5",
        f"{common},",
        f"{common},{last}",
        f"{common},{last + 1}-{last + 3}",
    ):
        assert _counted(new, completions, stored) == _exact(new, completions), (stored, new)


def test_the_job_controllers_growing_list_is_parsed_by_its_new_end() -> None:
    stored = ",".join(str(2 * i) for i in range(12_000))  # 64 KiB: every other index
    assert count_indexes(stored, 10**6) == 12_000
    for n in range(5):  # one more index per update, as the controller writes them
        grown = f"{stored},{24_000 + 2 * n}"
        assert count_indexes(grown, 10**6, stored) == 12_001 + n
        stored = grown
    # Changed in the middle, out of order, or past completions: the exact parser words it.
    with pytest.raises(IndexParseError, match="non-increasing order, previous: 24008, current: 7"):
        count_indexes(f"{stored},7", 10**6, stored)
    with pytest.raises(IndexParseError, match='too large index: "1000000"'):
        count_indexes(f"{stored},1000000", 10**6, stored)
    assert count_indexes(stored.replace(",200,", ",199,"), 10**6, stored) == 12_005


@settings(max_examples=200, deadline=None)
@given(
    failed=st.lists(st.integers(0, 3000), max_size=40).map(sorted),
    appended=st.lists(st.integers(1, 60), min_size=1, max_size=5),
)
def test_an_overlap_of_a_grown_list_is_found_by_its_new_intervals(
    failed: list[int], appended: list[int]
) -> None:
    failed_text = ",".join(str(i) for i in sorted(set(failed)))
    stored = ",".join(str(3 * i) for i in range(400))  # 0..1197, every third index
    common_before = set(range(0, 1200, 3)) & set(failed)
    assert first_overlap(stored, failed_text, 10**6) == (
        min(common_before) if common_before else None
    )
    new_indexes = [1197 + sum(appended[: k + 1]) for k in range(len(appended))]
    completed = stored + "," + ",".join(map(str, new_indexes))
    common = (set(range(0, 1200, 3)) | set(new_indexes)) & set(failed)
    expected = min(common) if common else None
    assert first_overlap(completed, failed_text, 10**6, stored) == expected


@settings(max_examples=400, deadline=None)
@given(text=index_text, completions=st.integers(0, 45), piece_chars=st.integers(0, 6))
def test_lists_read_in_pieces_read_as_a_whole(
    text: str, completions: int, piece_chars: int
) -> None:
    """Long lists are split about 64 KiB at a time; with pieces of a few characters every
    boundary case (a piece ending at a range, before an empty fragment, at a trailing comma)
    gives what reading the list in one piece gives, errors worded alike."""
    with mock.patch.object(intervals, "_PIECE_CHARS", piece_chars):
        parsed = intervals._parse((text, completions))
    try:
        expected = parse_intervals(text, completions)
    except IndexParseError as exc:
        assert parsed.error == str(exc)
        return
    assert parsed.error is None
    assert list(parsed.firsts) == [i.first for i in expected]
    assert list(parsed.lasts) == [i.last for i in expected]
    assert parsed.count == sum(len(i) for i in expected)
