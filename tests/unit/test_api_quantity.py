from fractions import Fraction

import pytest

from cluster.api.quantity import int_value, milli_value, parse_quantity

VALID = [
    ("0", Fraction(0)),
    ("2", Fraction(2)),
    ("+2", Fraction(2)),
    ("-2", Fraction(-2)),
    ("007", Fraction(7)),
    ("1.5", Fraction(3, 2)),
    (".5", Fraction(1, 2)),
    ("5.", Fraction(5)),
    ("500m", Fraction(1, 2)),
    ("1n", Fraction(1, 10**9)),
    ("250u", Fraction(1, 4000)),
    ("1k", Fraction(1000)),
    ("1M", Fraction(10**6)),
    ("1G", Fraction(10**9)),
    ("1T", Fraction(10**12)),
    ("1P", Fraction(10**15)),
    ("1E", Fraction(10**18)),
    ("100Ki", Fraction(102400)),
    ("1Mi", Fraction(2**20)),
    ("1Gi", Fraction(2**30)),
    ("1.5Gi", Fraction(3 * 2**29)),
    ("1Ti", Fraction(2**40)),
    ("1Pi", Fraction(2**50)),
    ("1Ei", Fraction(2**60)),
    ("1e3", Fraction(1000)),
    ("1E3", Fraction(1000)),
    ("1e+3", Fraction(1000)),
    ("15e-1", Fraction(3, 2)),
    ("1.G", Fraction(10**9)),
    ("0.1n", Fraction(1, 10**9)),
    ("-0.1n", Fraction(-1, 10**9)),
    ("1e-999999999", Fraction(1, 10**9)),
    ("1e999999999", Fraction(2**63 - 1)),
    ("16Ei", Fraction(2**63 - 1)),
]


@pytest.mark.parametrize(("text", "expected"), VALID, ids=[t for t, _ in VALID])
def test_parse_valid(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


INVALID = [
    ("empty", "", "regular expression"),
    ("space", "1 Gi", "regular expression"),
    ("leading-space", " 1", "regular expression"),
    ("sign-only", "-", "regular expression"),
    ("dot-only", ".", "regular expression"),
    ("two-dots", "1.2.3", "regular expression"),
    ("suffix-only", "Gi", "regular expression"),
    ("lowercase-ki", "1ki", "suffix"),
    ("bad-unit", "1GB", "suffix"),
    ("bare-e", "1e", "suffix"),
    ("exponent-fraction", "1e1.5", "regular expression"),
    ("words", "lots", "regular expression"),
    ("trailing-garbage", "1Gi!", "regular expression"),
]


@pytest.mark.parametrize(("text", "problem"), [(t, p) for _, t, p in INVALID], ids=[i for i, _, _ in INVALID])
def test_parse_invalid_names_the_text(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as raised:
        parse_quantity(text)
    assert f'"{text}"' in str(raised.value)


def test_parse_rejects_non_strings() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        parse_quantity(1)  # type: ignore[arg-type]


ROUNDING = [
    ("100m", 100, 1),
    ("1", 1000, 1),
    ("1.5", 1500, 2),
    ("0.1m", 1, 1),
    ("1500u", 2, 1),
    ("2Gi", 2 * 2**30 * 1000, 2 * 2**30),
    ("-1.5", -1500, -2),
    ("-0.1m", -1, -1),
    ("0", 0, 0),
]


@pytest.mark.parametrize(("text", "milli", "integer"), ROUNDING, ids=[t for t, _, _ in ROUNDING])
def test_values_round_away_from_zero(text: str, milli: int, integer: int) -> None:
    assert milli_value(text) == milli
    assert int_value(text) == integer


def test_value_helpers_reject_bad_text() -> None:
    with pytest.raises(ValueError, match='"1x"'):
        milli_value("1x")
    with pytest.raises(ValueError, match='"1x"'):
        int_value("1x")
