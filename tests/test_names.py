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
    label_wording,
)

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
    # IM-008 uses upstream's IsQualifiedName (names.py), with every message it gives.
    key_problems = label_wording("1.34").key
    assert key_problems("example.com/name") == ()
    assert key_problems("Example.com/name") == (
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    )
    assert key_problems("a" * 254 + "/name") == ("prefix part must be no more than 253 characters",)
    assert key_problems("a/b/c")[0].startswith("a qualified name must consist of")


def test_im008_reports_every_message_of_upstream() -> None:
    from jobguard.validators.rules.metadata_update import validate_labels_and_annotations

    key = "_" + "a" * 63
    errors = validate_labels_and_annotations({"labels": {key: "ok"}}, None, "metadata", "1.34")
    assert [e.body() for e in errors] == [
        f'Invalid value: "{key}": name part must be no more than 63 characters',
        f"Invalid value: \"{key}\": name part must consist of alphanumeric characters, '-', "
        "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]
