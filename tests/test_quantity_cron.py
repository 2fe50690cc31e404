"""Resource quantities and cron schedules as apimachinery and robfig/cron read them."""

from __future__ import annotations

import pytest

from jobguard.validators.cron import duration_problem, go_fields, go_quote, load_location
from jobguard.validators.quantity import (
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    Format,
    QuantityError,
    parse_quantity,
    quantity_of,
)


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
