"""One glob grammar (`jobguard.validators.globs`): the server's matching, the regular expression
the registrations and exported policies embed in CEL (evaluated on cel-cpp), and fnmatch agree on
every pattern the configuration accepts; the rest is refused with the reason."""

from __future__ import annotations

import fnmatch
import itertools

import pytest

from jobguard.validators.globs import (
    NAMESPACE_ALPHABET,
    RULE_ID_ALPHABET,
    glob_match,
    glob_problem,
    glob_regex,
    globs_intersect,
)
from jobguard.validators.vap import cel_string
from tests.vap_eval import evaluate

NAMES = ["team-a", "team-ab", "team-", "team-x1", "kube-system", "abd", "acd", "add", "a-d", ""]
ACCEPTED = ["team-*", "team-?", "kube-system", "a[bc]d", "a[!bc]d", "*", "team-[!x]*", "a[a-c-]d"]


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_server_cel_and_fnmatch_agree(pattern: str) -> None:
    assert glob_problem(pattern) is None
    expression = f"object.matches({cel_string(glob_regex(pattern))})"
    for name in [*NAMES, "team-a\nb"]:
        expected = fnmatch.fnmatchcase(name, pattern)
        assert glob_match(name, pattern) is expected, (pattern, name)
        assert evaluate(expression, {"object": name}) is expected, (pattern, name)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("team-[^x]*", "'[^' is a negation in Go and shells but a literal '^' in fnmatch"),
        ("team-[x", "'[' at 5 is never closed"),
        ("team]", "']' at 4 closes no '['"),
        ("Team-*", "'T' cannot occur in a name"),
        ("a[z-a]", "the range z-a is reversed"),
        ("a[]", "an empty set '[]' matches nothing"),
        ("", "an empty pattern matches nothing"),
    ],
)
def test_patterns_outside_the_grammar_are_refused(pattern: str, reason: str) -> None:
    assert reason in (glob_problem(pattern) or "")


def test_rule_id_and_user_name_alphabets() -> None:
    assert glob_problem("SUS-00[18]", RULE_ID_ALPHABET) is None
    assert glob_problem("sus-001", RULE_ID_ALPHABET) == "'sus-001': 's' cannot occur in a name"
    assert glob_problem("system:serviceaccount:kueue-system:*", None) is None
    assert "not supported" in (glob_problem("system:[ab]", None) or "")
    assert glob_match("system:serviceaccount:a:b", "system:serviceaccount:a:*")
    assert not glob_match("system:serviceaccount:ab", "system:serviceaccount:a")


def test_intersection_agrees_with_enumeration() -> None:
    patterns = ["a*", "*b", "a?", "[!a]*", "ab", "[a-b]", "?", "a*b*", "[!ab]?"]
    names = ["".join(p) for n in range(4) for p in itertools.product("abc", repeat=n)]
    for first, second in itertools.product(patterns, repeat=2):
        both = any(fnmatch.fnmatchcase(n, first) and fnmatch.fnmatchcase(n, second) for n in names)
        assert globs_intersect(first, second, "abc") is both, (first, second)
    assert globs_intersect("team-[!x]*", "team-x*", NAMESPACE_ALPHABET) is False
    # An exact name meets a pattern when it is of the alphabet and the pattern matches it.
    assert globs_intersect("team-a", "team-?", NAMESPACE_ALPHABET) is True
    assert globs_intersect("team-?", "team-a", NAMESPACE_ALPHABET) is True
    assert globs_intersect("team-A", "team-?", NAMESPACE_ALPHABET) is False
    assert globs_intersect("team-a", "team-a", NAMESPACE_ALPHABET) is True
    assert globs_intersect("team-a", "team-b", NAMESPACE_ALPHABET) is False
