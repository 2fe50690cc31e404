"""names.py is the one place DNS-1123 names are read: its yes/no helpers, used by JS-006,
JS-007 and IM-008's key prefixes, agree with the problem lists the other rules word."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jobguard.validators.names import (
    dns1123_label_problems,
    dns1123_subdomain_problems,
    is_dns1123_label,
    is_dns1123_subdomain,
)
from jobguard.validators.rules.metadata_update import qualified_name_problem

_names = st.text("ab0-.A_", max_size=70) | st.text("a-.", min_size=60, max_size=260)


@settings(max_examples=400, deadline=None)
@given(_names)
def test_the_helpers_agree_with_the_problem_lists(value: str) -> None:
    assert is_dns1123_label(value) == (not dns1123_label_problems(value))
    assert is_dns1123_subdomain(value) == (not dns1123_subdomain_problems(value))


def test_lengths_and_dots() -> None:
    assert is_dns1123_label("a" * 63) and not is_dns1123_label("a" * 64)
    assert not is_dns1123_label("a.b") and is_dns1123_subdomain("a.b")
    assert is_dns1123_subdomain("a" * 253) and not is_dns1123_subdomain("a" * 254)
    assert not is_dns1123_subdomain("a-") and not is_dns1123_subdomain("a..b")
    assert not is_dns1123_subdomain("x" * 1_000_000)  # the length first: no scan, no cache entry


def test_label_key_prefixes_are_subdomains() -> None:
    assert qualified_name_problem("example.com/name") is None
    assert qualified_name_problem("Example.com/name") == (
        "prefix part must be a lowercase RFC 1123 subdomain"
    )
    assert qualified_name_problem("a" * 254 + "/name") == (
        "prefix part must be a lowercase RFC 1123 subdomain"
    )
