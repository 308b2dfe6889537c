"""Kubernetes resource quantities ("500m", "1Gi", "2", "1.5", "1e3") as exact fractions.

The grammar is apimachinery's::

    <quantity> ::= <sign>? <number> <suffix>
    <number>   ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>   ::= <binarySI> | <decimalSI> | <decimalExponent>
    <binarySI> ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= (e | E) <sign>? <digits>

As in Kubernetes, a parsed value is rounded away from zero to a whole number of nano-units (so "0.1n" is
1n: asking for some of a resource gets some), and its magnitude is capped at 2^63-1 (Kubernetes' documented
limit). The cap also keeps an exponent like "1e999999999" from costing a billion-digit integer.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

#: Kubernetes' own pattern, quoted in its error message; ours is the stricter grammar above.
_K8S_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

_QUANTITY = re.compile(
    r"(?P<sign>[+-])?(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?P<suffix>[a-zA-Z]*(?:[+-]?[0-9]+)?)",
    re.ASCII,
)
_EXPONENT = re.compile(r"[eE](?P<exp>[+-]?[0-9]+)", re.ASCII)

# Each suffix as (base, exponent).
_SUFFIXES: dict[str, tuple[int, int]] = {
    "": (10, 0), "n": (10, -9), "u": (10, -6), "m": (10, -3),
    "k": (10, 3), "M": (10, 6), "G": (10, 9), "T": (10, 12), "P": (10, 15), "E": (10, 18),
    "Ki": (2, 10), "Mi": (2, 20), "Gi": (2, 30), "Ti": (2, 40), "Pi": (2, 50), "Ei": (2, 60),
}

_MAX_MAGNITUDE = 2**63 - 1
_NANO = 10**9


#: Distinct quantity texts remembered: a cluster uses few ("100m", "1Gi"), and every pod create, Node update
#: and scheduler cache update parses them again (about 5 us each with Fraction arithmetic, 0.1 us cached).
_CACHED_QUANTITIES = 4096


def parse_quantity(text: str) -> Fraction:
    """The exact value of a Kubernetes quantity; raises ValueError quoting ``text`` when it is malformed."""
    return _parse(_checked(text))


def _checked(text: str) -> str:
    """``text``, refused before it reaches a cache (which would hash it) unless it is a string."""
    if not isinstance(text, str):
        raise ValueError(f"quantity must be a string, not {type(text).__name__}: {text!r}")
    return text


# Fractions are immutable, so a cached value can be shared; a malformed text raises again each time.
@functools.lru_cache(maxsize=_CACHED_QUANTITIES)
def _parse(text: str) -> Fraction:
    match = _QUANTITY.fullmatch(text)
    if match is None or not (match["int"] or match["frac"]):
        raise ValueError(
            f'quantity "{text}": quantities must match the regular expression \'{_K8S_PATTERN}\''
        )
    suffix = match["suffix"]
    if suffix in _SUFFIXES:
        base, exponent = _SUFFIXES[suffix]
    elif (exp_match := _EXPONENT.fullmatch(suffix)) is not None:
        base, exponent = 10, int(exp_match["exp"])
    else:
        raise ValueError(f'quantity "{text}": unable to parse quantity\'s suffix "{suffix}"')

    int_digits = match["int"].lstrip("0")
    frac_digits = match["frac"] or ""
    mantissa = int(int_digits + frac_digits or "0")
    negative = match["sign"] == "-"
    if mantissa == 0:
        return Fraction(0)
    if base == 10:
        decimal_exponent = exponent - len(frac_digits)
        # Decide the extremes from digit counts before building a huge power of ten.
        magnitude_digits = len(str(mantissa)) + decimal_exponent
        if magnitude_digits > 20:
            return _signed(Fraction(_MAX_MAGNITUDE), negative)
        if magnitude_digits < -9:
            return _signed(Fraction(1, _NANO), negative)
        value = mantissa * Fraction(10) ** decimal_exponent
    else:
        value = Fraction(mantissa, 10 ** len(frac_digits)) * 2**exponent
    value = Fraction(math.ceil(value * _NANO), _NANO)  # up to whole nano-units (value is the magnitude)
    return _signed(min(value, Fraction(_MAX_MAGNITUDE)), negative)


def _signed(magnitude: Fraction, negative: bool) -> Fraction:
    return -magnitude if negative else magnitude


def _ceil_away_from_zero(value: Fraction) -> int:
    magnitude = math.ceil(abs(value))
    return -magnitude if value < 0 else magnitude


def milli_value(text: str) -> int:
    """The quantity in thousandths, rounded away from zero (Kubernetes' ``MilliValue``; cpu uses it)."""
    return _milli_value(_checked(text))


def int_value(text: str) -> int:
    """The quantity as an integer, rounded away from zero (Kubernetes' ``Value``; memory, pods, extended)."""
    return _int_value(_checked(text))


# The scheduler converts every pod's requests with these: cached like _parse, the Fraction arithmetic too.
@functools.lru_cache(maxsize=_CACHED_QUANTITIES)
def _milli_value(text: str) -> int:
    return _ceil_away_from_zero(_parse(text) * 1000)


@functools.lru_cache(maxsize=_CACHED_QUANTITIES)
def _int_value(text: str) -> int:
    return _ceil_away_from_zero(_parse(text))
