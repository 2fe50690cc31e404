"""The index-interval grammar (RULES.md "Index-interval grammar"), against a naive reference."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
