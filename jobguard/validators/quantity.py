"""Kubernetes resource quantities (`k8s.io/apimachinery/pkg/api/resource`): parsing with
upstream's grammar and errors, exact comparison, and the canonical form the API server prints.

A quantity is held as an exact `Decimal` (never a float). Exponents may be huge (`1e999999`),
so nothing here expands a value into all of its digits: comparisons and canonical forms work
on the digits and the exponent.
"""

from __future__ import annotations

import decimal
import sys
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from jobguard.validators.memo import MiB, short_key_cache

# Exact arithmetic over any exponent a quantity can carry (upstream: int32).
_CONTEXT = decimal.Context(
    prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[]
)
_NANO = Decimal("1e-9")
_MAX_ALLOWED = Decimal(2**63 - 1)
_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_SUFFIX = "unable to parse quantity's suffix"

_DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_BY_EXPONENT = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_EXPONENT = {exponent: suffix for suffix, exponent in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")


class Format(StrEnum):
    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"


class QuantityError(ValueError):
    """The quantity does not parse; the message is upstream's."""


@dataclass(frozen=True, slots=True)
class Quantity:
    value: Decimal
    format: Format

    def __str__(self) -> str:
        return canonical(self)

    def compare(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def scaled_value(self, scale: int) -> int:
        """ceil(value / 10^scale) away from zero, saturated to int64 (upstream ScaledValue)."""
        if self.value == 0:
            return 0
        shifted = self.value.scaleb(-scale, _CONTEXT)
        if shifted.adjusted() > 19:
            return _INT64_MAX if shifted > 0 else _INT64_MIN
        rounded = int(shifted.to_integral_value(decimal.ROUND_UP, _CONTEXT))
        return max(_INT64_MIN, min(_INT64_MAX, rounded))


def _scan(text: str) -> tuple[bool, str, str, str]:
    """upstream parseQuantityString: (positive, numerator, denominator, suffix)."""
    positive = True
    pos, end = 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] != "-"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isascii() and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, num, denom, ""
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """(base, exponent, format) of a suffix (upstream suffixer.interpret)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if body.isdigit() and body.isascii():
            parsed = int(digits)
            if _INT64_MIN <= parsed <= _INT64_MAX:
                # Go converts the parsed int64 to int32, wrapping.
                wrapped = (parsed + 2**31) % 2**32 - 2**31
                return 10, wrapped, Format.DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


@short_key_cache(MiB, 64)
def parse_quantity(text: str) -> Quantity:
    """upstream ParseQuantity (after UnmarshalJSON's TrimSpace); QuantityError with its message."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(Decimal(0), Format.DECIMAL_SI)
    positive, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    amount = Decimal(f"{num}.{denom}" if denom else num)
    # Exact: the default context would round past 28 digits and overflow past 1e999999.
    if base == 10:
        amount = amount.scaleb(exponent, _CONTEXT)
    else:
        amount = _CONTEXT.multiply(amount, 2**exponent)
    if amount != 0 and amount.as_tuple().exponent < -9:  # type: ignore[operator]
        # Non-zero values round up to the smallest representable amount (1n).
        amount = amount.quantize(_NANO, decimal.ROUND_UP, _CONTEXT)
    if fmt is Format.BINARY_SI and amount > _MAX_ALLOWED:
        amount = _MAX_ALLOWED
    if fmt is Format.BINARY_SI and 0 < amount < 1:
        fmt = Format.DECIMAL_SI
    return Quantity(amount if positive else amount.copy_negate(), fmt)


def quantity_of(value: object) -> Quantity:
    """A JSON value as Quantity.UnmarshalJSON reads it (numbers by their text)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise QuantityError(ERR_FORMAT_WRONG)
    text = value.strip() if isinstance(value, str) else repr(value)
    return parse_quantity(text)


def _strip_factors(digits: str) -> tuple[str, int]:
    stripped = digits.rstrip("0")
    return stripped, len(digits) - len(stripped)


def _decimal_canonical(value: Decimal) -> tuple[str, int]:
    """(mantissa, exponent) with the exponent a multiple of 3 (upstream AsCanonicalBytes)."""
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    digits, times = _strip_factors("".join(map(str, digit_tuple)))
    exponent += times
    remainder = exponent % 3
    digits += "0" * remainder
    exponent -= remainder
    return ("-" if sign else "") + digits, exponent


# Kept only for values of a few dozen digits (a Decimal's size grows with its digits).
@short_key_cache(MiB, 160, lambda quantity: sys.getsizeof(quantity.value), entry_bytes=600)
def canonical(quantity: Quantity) -> str:
    """upstream Quantity.String(): the canonical form (1.5 -> 1500m, 1.5Gi -> 1536Mi)."""
    value = quantity.value
    if value == 0:
        return "0"
    fmt = quantity.format
    rounded = value
    if fmt is Format.BINARY_SI:
        if -1024 < value < 1024:
            fmt = Format.DECIMAL_SI
        else:
            rounded = value.to_integral_value(decimal.ROUND_UP, _CONTEXT)
            if rounded != value:
                fmt = Format.DECIMAL_SI
    if fmt is Format.BINARY_SI:
        amount = int(rounded)
        times = 0
        while abs(amount) >= 1024 and amount % 1024 == 0:
            amount //= 1024
            times += 1
        return f"{amount}{_BINARY_BY_EXPONENT.get(times * 10, '')}"
    mantissa, exponent = _decimal_canonical(value)
    if fmt is Format.DECIMAL_SI:
        return mantissa + _DECIMAL_BY_EXPONENT.get(exponent, "")
    return mantissa if exponent == 0 else f"{mantissa}e{exponent}"
