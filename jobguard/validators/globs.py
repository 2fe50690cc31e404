"""The configuration's globs (namespaces, exempt namespaces, rule IDs): one grammar, one
translation.

A glob is read once, into an RE2-compatible regular expression (`glob_regex`); the server
matches with that expression (`glob_match`) and the registrations and the exported
ValidatingAdmissionPolicies embed the same text in CEL (`request.namespace.matches(...)`), so
the three cannot disagree. The grammar is the part of fnmatch's on which fnmatch, Go's
`path.Match`, RE2 and Python's `re` all agree (`glob_problem` refuses the rest, naming it):

- `*` any run of characters, `?` one character;
- `[abc]`, `[a-z]`, `[!a-z]` one character of (not of) a set of the alphabet's characters;
- every other character literal, from the alphabet (lower-case letters, digits and `-` for
  namespaces, which are DNS labels; upper-case letters, digits and `-` for rule IDs).

`[^...]` is refused: fnmatch reads `^` as a literal and Go and shells as a negation, so a
configuration written for one would mean the other here. An unclosed `[`, an empty or reversed
set, and any character a name cannot contain are refused too.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache

NAMESPACE_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-"
RULE_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
_GLOB_CHARS = re.compile(r"[*?\[\]]")


def is_glob(pattern: str) -> bool:
    """`pattern` holds glob syntax (else it is an exact name)."""
    return _GLOB_CHARS.search(pattern) is not None


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    """"*", "?", "lit" or "set"."""
    char: str = ""
    negated: bool = False
    chars: frozenset[str] = frozenset()


def _parse(
    pattern: str, alphabet: str | None, sets: bool = True
) -> tuple[list[_Token], str | None]:
    """The tokens of `pattern`, or the first problem found. `alphabet` None: any literal but the glob syntax (user names),
    sets only when `sets` (of the names' alphabets)."""
    set_alphabet = alphabet or NAMESPACE_ALPHABET + RULE_ID_ALPHABET
    tokens: list[_Token] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        i += 1
        if char in "*?":
            tokens.append(_Token(char))
        elif char == "[":
            if not sets:
                return [], f"{pattern!r}: sets ('[...]') are not supported here"
            end = pattern.find("]", i)
            if end < 0:
                return [], f"{pattern!r}: '[' at {i - 1} is never closed"
            body = pattern[i:end]
            i = end + 1
            if body.startswith("^"):
                return [], (
                    f"{pattern!r}: '[^' is a negation in Go and shells but a literal '^' in "
                    "fnmatch; write '[!...]' to negate"
                )
            negated = body.startswith("!")
            body = body[1:] if negated else body
            if not body:
                return [], f"{pattern!r}: an empty set '[]' matches nothing"
            chars: set[str] = set()
            j = 0
            while j < len(body):
                low = body[j]
                if j + 2 < len(body) and body[j + 1] == "-":
                    high = body[j + 2]
                    j += 3
                else:
                    high = low
                    j += 1
                for end_char in (low, high):
                    if end_char not in set_alphabet:
                        return [], f"{pattern!r}: {end_char!r} cannot occur in a name"
                if low > high:
                    return [], f"{pattern!r}: the range {low}-{high} is reversed"
                chars |= {c for c in set_alphabet if low <= c <= high}
            tokens.append(_Token("set", negated=negated, chars=frozenset(chars)))
        elif char == "]":
            return [], f"{pattern!r}: ']' at {i - 1} closes no '['"
        elif alphabet is not None and char not in alphabet:
            return [], f"{pattern!r}: {char!r} cannot occur in a name"
        else:
            tokens.append(_Token("lit", char))
    return tokens, None


def glob_problem(pattern: str, alphabet: str | None = NAMESPACE_ALPHABET) -> str | None:
    """Why `pattern` is not a glob of the grammar above (None when it is). `alphabet` None: a
    user-name glob (any character but the glob syntax; `*` and `?` only)."""
    if not pattern:
        return "an empty pattern matches nothing"
    return _parse(pattern, alphabet, sets=alphabet is not None)[1]


def _literal(char: str) -> str:
    # A backslash before ASCII punctuation is a literal in RE2 and in Python alike.
    return "\\" + char if char in string.punctuation else char


def _set_regex(negated: bool, chars: frozenset[str]) -> str:
    ordered = sorted(chars)
    # Ranges and literals that mean the same in RE2 and Python: '-' escaped, nothing else needs it.
    body = "".join("\\-" if c == "-" else c for c in ordered)
    return f"[{'^' if negated else ''}{body}]"


@lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> str:
    """The RE2 (and Python `re`) expression, anchored, that matches what `pattern` does: CEL's
    `matches` and `glob_match` evaluate this same text. Patterns outside the grammar (which a
    loaded configuration never holds) match as fnmatch reads them literally: only themselves."""
    tokens, problem = _parse(pattern, None)
    if problem is not None:
        return "(?s)^" + "".join(_literal(c) for c in pattern) + "$"
    out = []
    for token in tokens:
        if token.kind == "*":
            out.append(".*")
        elif token.kind == "?":
            out.append(".")
        elif token.kind == "lit":
            out.append(_literal(token.char))
        else:
            out.append(_set_regex(token.negated, token.chars))
    return "(?s)^" + "".join(out) + "$"


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_regex(pattern))


def glob_match(name: str, pattern: str) -> bool:
    """`name` matches `pattern` (an exact name matches only itself)."""
    if not is_glob(pattern):
        return name == pattern
    return _compiled(pattern).fullmatch(name) is not None


def _accepts(token: _Token, char: str) -> bool:
    """A one-character token (`?`, a literal, a set) accepts `char`."""
    if token.kind == "set":
        return (char in token.chars) != token.negated
    return token.kind == "?" or token.char == char


def globs_intersect(first: str, second: str, alphabet: str = NAMESPACE_ALPHABET) -> bool:
    """Some name of `alphabet` matches both patterns (the two automata run in step; an exact
    name is matched against the other pattern instead)."""
    for name, other in ((first, second), (second, first)):
        if not is_glob(name):
            return all(c in alphabet for c in name) and glob_match(name, other)
    a = _parse(first, alphabet)[0]
    b = _parse(second, alphabet)[0]

    def closure(tokens: list[_Token], i: int) -> set[int]:
        out = {i}
        while i < len(tokens) and tokens[i].kind == "*":
            i += 1
            out.add(i)
        return out

    def step(tokens: list[_Token], states: set[int], char: str) -> set[int]:
        out: set[int] = set()
        for i in states:
            if i == len(tokens):
                continue
            token = tokens[i]
            if token.kind == "*":
                out |= closure(tokens, i)
            elif _accepts(token, char):
                out |= closure(tokens, i + 1)
        return out

    start = (frozenset(closure(a, 0)), frozenset(closure(b, 0)))
    seen = {start}
    todo = [start]
    while todo:
        left, right = todo.pop()
        if len(a) in left and len(b) in right:
            return True
        for char in alphabet:
            pair = (frozenset(step(a, set(left), char)), frozenset(step(b, set(right), char)))
            if pair[0] and pair[1] and pair not in seen:
                seen.add(pair)
                todo.append(pair)
    return False
