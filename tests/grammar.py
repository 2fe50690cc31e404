"""The rows of the index-interval grammar table in RULES.md (C = 10), shared by the parser's
tests and SP-006's: valid lists with the size of their index set, and errors with their text."""

from __future__ import annotations

GRAMMAR_VALID = [
    ("", 0),
    ("0", 1),
    ("1,3,5-7", 5),
    ("0-9", 10),
    ("1-3,4-5", 5),
    ("007", 1),
    ("+3", 1),
    ("1-+3", 3),
    ("0,9", 2),
]

GRAMMAR_ERRORS = [
    ("3,1", "non-increasing order, previous: 3, current: 1"),
    ("1,1", "non-increasing order, previous: 1, current: 1"),
    ("1-3,3", "non-increasing order, previous: 3, current: 3"),
    ("1-5,2-3", "non-increasing order, previous: 5, current: 2"),
    ("2-2", "non-increasing order, previous: 2, current: 2"),
    ("5-3", "non-increasing order, previous: 5, current: 3"),
    ("10", 'too large index: "10"'),
    ("1-10", 'too large index: "10"'),
    (
        "1-2-3",
        'the fragment "1-2-3" violates the requirement that an index interval can have at most '
        "two parts separated by '-'",
    ),
    ("1,", 'cannot convert string to integer for index: ""'),
    (",1", 'cannot convert string to integer for index: ""'),
    ("1,,2", 'cannot convert string to integer for index: ""'),
    (" 1", 'cannot convert string to integer for index: " 1"'),
    ("1 ", 'cannot convert string to integer for index: "1 "'),
    ("a", 'cannot convert string to integer for index: "a"'),
    ("1.0", 'cannot convert string to integer for index: "1.0"'),
    ("1_0", 'cannot convert string to integer for index: "1_0"'),
    ("٣", 'cannot convert string to integer for index: "٣"'),
    ("-1", 'cannot convert string to integer for index: ""'),
    ("++1", 'cannot convert string to integer for index: "++1"'),
    (
        "99999999999999999999",
        'cannot convert string to integer for index: "99999999999999999999"',
    ),
]
