"""Resource quantities and cron schedules as apimachinery and robfig/cron read them."""

from __future__ import annotations

import decimal
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobguard.validators.cron import duration_problem, go_fields, go_quote, load_location
from jobguard.validators.quantity import (
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    Format,
    QuantityError,
    parse_quantity,
    quantity_of,
)
from jobguard.validators.semantic import normalize, quantity_value, semantic_equal


@pytest.mark.parametrize(
    ("text", "canonical", "fmt"),
    [
        ("0", "0", Format.DECIMAL_SI),
        ("1.5", "1500m", Format.DECIMAL_SI),
        ("1500m", "1500m", Format.DECIMAL_SI),
        ("2000m", "2", Format.DECIMAL_SI),
        (".5", "500m", Format.DECIMAL_SI),
        ("1.", "1", Format.DECIMAL_SI),
        ("0.1m", "100u", Format.DECIMAL_SI),
        ("1n", "1n", Format.DECIMAL_SI),
        ("0.1n", "1n", Format.DECIMAL_SI),
        ("1E", "1E", Format.DECIMAL_SI),
        ("-1k", "-1k", Format.DECIMAL_SI),
        ("+1k", "1k", Format.DECIMAL_SI),
        ("1Gi", "1Gi", Format.BINARY_SI),
        ("1024Mi", "1Gi", Format.BINARY_SI),
        ("1.5Gi", "1536Mi", Format.BINARY_SI),
        ("1.1Ki", "1126400m", Format.BINARY_SI),
        ("0.5Ki", "512", Format.BINARY_SI),
        ("0.0001Ki", "102400u", Format.DECIMAL_SI),
        ("12e6", "12e6", Format.DECIMAL_EXPONENT),
        ("1.1e-3", "1100e-6", Format.DECIMAL_EXPONENT),
        ("1e-10", "1e-9", Format.DECIMAL_EXPONENT),
        ("1E3", "1e3", Format.DECIMAL_EXPONENT),
        ("9Ei", "9223372036854775807", Format.BINARY_SI),
        # Exact past 28 digits (Decimal's default precision): 1024.0000000000000000000000001024
        # rounds up to the next nano, as upstream's inf.Dec does.
        ("1.0000000000000000000000000001Ki", "1024000000001n", Format.BINARY_SI),
        ("-1e1000000", "-10e999999", Format.DECIMAL_EXPONENT),
    ],
)
def test_canonical_forms(text: str, canonical: str, fmt: Format) -> None:
    quantity = parse_quantity(text)
    assert (str(quantity), quantity.format) == (canonical, fmt)


def test_numbers_read_by_their_json_text() -> None:
    assert str(quantity_of(2)) == "2"
    assert str(quantity_of(0.5)) == "500m"
    assert str(quantity_of(" 1Gi ")) == "1Gi"
    with pytest.raises(QuantityError, match="quantities must match"):
        quantity_of(True)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", ERR_FORMAT_WRONG),
        ("abc", ERR_FORMAT_WRONG),
        ("1 Gi", ERR_FORMAT_WRONG),
        ("1GB", ERR_FORMAT_WRONG),
        ("1ki", ERR_SUFFIX),
    ],
)
def test_parse_errors(text: str, error: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(text)
    assert str(caught.value) == error


def test_comparisons_are_exact_and_huge_exponents_stay_cheap() -> None:
    assert parse_quantity("1Gi").compare(parse_quantity("1073741824")) == 0
    assert parse_quantity("100m").compare(parse_quantity("0.1")) == 0
    assert parse_quantity("1e2147483647").compare(parse_quantity("1")) == 1
    assert parse_quantity("1e-2147483647").compare(parse_quantity("0")) == 1
    assert parse_quantity("1e20").scaled_value(0) == 2**63 - 1  # saturated, as upstream
    assert parse_quantity("1.5").scaled_value(-3) == 1500
    assert parse_quantity("1.0001").scaled_value(0) == 2


def test_go_helpers() -> None:
    assert go_fields(" 0\t3  *\u3000* * ") == ["0", "3", "*", "*", "*"]
    assert go_quote('a"b\n\x01é') == '"a\\"b\\n\\x01é"'
    assert duration_problem("1h2m3.5s") is None
    assert duration_problem("-1.5h") is None
    assert duration_problem("1é") == 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'
    assert load_location("UTC") is None
    assert load_location("Etc/GMT-14") is None
    assert load_location("../x") == "time: invalid location name"
    assert load_location("Mars/Olympus") == "unknown time zone Mars/Olympus"


# --- one reading of quantities: ParseQuantity's grammar, and semantic equality through it -----

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_digits = st.text("0123456789", max_size=12)


@st.composite
def _quantities(draw: st.DrawFn) -> tuple[str, Decimal | None, str | None]:
    """A string in ParseQuantity's grammar with its exact value when it is one upstream reads
    without rounding (None otherwise), or the error upstream gives."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole, fraction = draw(_digits), draw(_digits)
    dot = draw(st.booleans())
    number = whole + ("." + fraction if dot else "")
    kind = draw(st.sampled_from(["decimal", "binary", "exponent", "other"]))
    amount = Decimal(f"{whole or 0}.{fraction or 0}" if dot else whole or "0")
    amount = -amount if sign == "-" else amount
    if kind == "decimal":
        suffix = draw(st.sampled_from(sorted(_DECIMAL_SUFFIXES)))
        value = amount.scaleb(_DECIMAL_SUFFIXES[suffix], _EXACT)
    elif kind == "binary":
        suffix = draw(st.sampled_from(sorted(_BINARY_SUFFIXES)))
        value = _EXACT.multiply(amount, 2 ** _BINARY_SUFFIXES[suffix])
        if abs(value) > 2**63 - 1:
            return sign + number + suffix, None, None  # capped at int64
    elif kind == "exponent":
        exponent = draw(st.integers(-(2**64), 2**64))
        suffix = draw(st.sampled_from("eE")) + (
            "+" if exponent >= 0 and draw(st.booleans()) else ""
        )
        suffix += str(exponent)
        if not -(2**63) <= exponent < 2**63:
            return sign + number + suffix, None, ERR_SUFFIX  # strconv.ParseInt overflows
        if not -(2**31) <= exponent < 2**31:
            return sign + number + suffix, None, None  # int32(parsed) wraps
        value = amount.scaleb(exponent, _EXACT)
    else:
        suffix = draw(st.sampled_from(["ki", "K", "mi", "Mm", "e", "E+", "i", "nu", "Gb", "e5x"]))
        error = ERR_FORMAT_WRONG if suffix in ("Gb", "e5x") else ERR_SUFFIX
        return sign + number + suffix, None, error
    if not sign + number + suffix:
        return "", None, ERR_FORMAT_WRONG
    if value != 0 and value.as_tuple().exponent < -9:  # type: ignore[operator]
        return sign + number + suffix, None, None  # rounded up to 1n
    return sign + number + suffix, value, None


_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


@settings(max_examples=400, deadline=None)
@given(_quantities())
def test_the_grammar_reads_exact_values_and_upstreams_errors(
    case: tuple[str, Decimal | None, str | None],
) -> None:
    text, value, error = case
    if error is not None:
        with pytest.raises(QuantityError) as caught:
            parse_quantity(text)
        assert str(caught.value) == error
        assert quantity_value(text) is None
        return
    parsed = parse_quantity(text)
    if value is not None:
        assert parsed.value == value
    # Semantic equality (TM-002/TM-003, the immutable-field rules) reads the same value.
    assert quantity_value(text) == parsed.value
    assert normalize({"cpu": text}, "requests") == {"cpu": ("quantity", parsed.value)}


@settings(max_examples=300, deadline=None)
@given(_quantities(), _quantities())
def test_semantic_equality_of_resources_is_quantity_comparison(
    a: tuple[str, Decimal | None, str | None], b: tuple[str, Decimal | None, str | None]
) -> None:
    left, right = {"requests": {"cpu": a[0]}}, {"requests": {"cpu": b[0]}}
    if a[2] is None and b[2] is None:
        same = parse_quantity(a[0]).compare(parse_quantity(b[0])) == 0
    else:  # a quantity that does not parse is compared as written
        same = a[0] == b[0]
    assert semantic_equal(left, right) is same


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_a_character_outside_the_grammar_is_a_format_error(text: str) -> None:
    # The scanner (parseQuantityString), not SPLIT_RE, decides: "u" and "+" read as 0.
    if set(text) <= set("+-.0123456789eEinumkKMGTP") and text:
        return
    with pytest.raises(QuantityError) as caught:
        parse_quantity(text)
    assert str(caught.value) == ERR_FORMAT_WRONG
    assert parse_quantity("u").value == parse_quantity("+").value == 0


def test_a_huge_exponent_is_a_number_as_upstream_reads_it() -> None:
    # strconv.ParseInt takes 1234567 and int32() keeps it: ParseQuantity returns 10^1234567
    # (no error); only an exponent past int64 is ErrSuffix, and one past int32 wraps.
    huge = parse_quantity("1e1234567")
    assert (huge.value, huge.format) == (Decimal("1e1234567"), Format.DECIMAL_EXPONENT)
    assert str(huge) == "10e1234566"
    assert quantity_value("1e1234567") == Decimal("1e1234567")
    assert semantic_equal({"limits": {"cpu": "1e1234567"}}, {"limits": {"cpu": "10e1234566"}})
    assert not semantic_equal({"limits": {"cpu": "1e1234567"}}, {"limits": {"cpu": "1e1234568"}})
    assert parse_quantity("1e2147483648").value == Decimal("1e-9")  # int32(2^31) = -2^31: 1n
    with pytest.raises(QuantityError, match="suffix"):
        parse_quantity("1e9223372036854775808")
    assert quantity_value("1e9223372036854775808") is None
