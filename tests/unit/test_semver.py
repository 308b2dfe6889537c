"""Semantic versions (cluster/api/semver.py): the strict form accepts exactly semver.org 2.0.0's grammar,
with blang/semver's messages for what it refuses (blang/semver v4's own cases); precedence as the spec
orders it; the tolerant form of Kubernetes' CEL ``semver(text, true)``."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cluster.api import semver
from cluster.api.semver import Version

#: The regular expression semver.org suggests for its grammar (with ASCII digits only).
_GRAMMAR = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
    re.ASCII,
)


def _numbers_fit(match: re.Match[str]) -> bool:
    pre = match[4].split(".") if match[4] else []
    numbers = [*match.group(1, 2, 3), *(part for part in pre if part.isdigit())]
    return all(int(number) < 2**64 for number in numbers)


_IDENTIFIER = st.text("0123456789azAZ-", max_size=4)
_NUMBER_LIKE = st.one_of(st.text("0123456789", max_size=3), st.text("0a-+ v\n\u0661", max_size=2))


@st.composite
def _near_versions(draw: st.DrawFn) -> str:
    """Texts close to a version: any count of dot-separated numbers (empty, zero-led, with other characters),
    identifiers that may be empty or zero-led, a trailing character."""
    text = ".".join(draw(st.lists(_NUMBER_LIKE, min_size=1, max_size=4)))
    if draw(st.booleans()):
        text += "-" + ".".join(draw(st.lists(_IDENTIFIER, min_size=1, max_size=3)))
    if draw(st.booleans()):
        text += "+" + ".".join(draw(st.lists(_IDENTIFIER, min_size=1, max_size=3)))
    return text + draw(st.sampled_from(["", "", "", "\n", " ", "+", "-", ".", "_", "é"]))


_TEXTS = st.one_of(
    st.from_regex(_GRAMMAR, fullmatch=True), _near_versions(), st.text("0123456789.-+aZv ", max_size=16)
)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
@example("1.2.3\n")
@example("\u0661.2.3")  # ARABIC-INDIC DIGIT ONE: a digit, not an ASCII one
@example("1.2.3-0a")
@example("1.2.3--")
@example("1.2.3+-")
@example("1.2.3-a+b+c")
@example("18446744073709551616.0.0")
@example("0.0.0-x.18446744073709551616")
def test_accepts_exactly_the_grammar(text: str) -> None:
    """What the grammar accepts, with numbers of 64 bits (blang/semver's uint64)."""
    match = _GRAMMAR.fullmatch(text)
    version = semver.parse(text)
    if match is None or not _numbers_fit(match):
        assert version is None
        with pytest.raises(ValueError):
            semver.read(text)
        return
    assert version == semver.read(text)
    assert version is not None
    assert (version.major, version.minor, version.patch) == tuple(int(n) for n in match.group(1, 2, 3))
    assert str(version) == text.split("+", 1)[0]


# blang/semver v4's formatTests: versions it reads.
@pytest.mark.parametrize(("text", "expected"), [
    ("1.2.3", Version(1, 2, 3)),
    ("0.0.1", Version(0, 0, 1)),
    ("0.0.1-alpha.preview+123.456", Version(0, 0, 1, ("alpha", "preview"))),
    ("1.2.3-alpha.1+123.456", Version(1, 2, 3, ("alpha", 1))),
    ("1.2.3-alpha.1", Version(1, 2, 3, ("alpha", 1))),
    ("1.2.3+123.456", Version(1, 2, 3)),
    ("1.2.3-alpha.b-eta+123.b-uild", Version(1, 2, 3, ("alpha", "b-eta"))),
    ("1.2.3+123.b-uild", Version(1, 2, 3)),
    ("1.2.3-alpha.b-eta", Version(1, 2, 3, ("alpha", "b-eta"))),
    ("18446744073709551615.0.0-18446744073709551615", Version(2**64 - 1, 0, 0, (2**64 - 1,))),
])
def test_reads_blang_semver_cases(text: str, expected: Version) -> None:
    assert semver.read(text) == expected


_SYNTAX = 'strconv.ParseUint: parsing "": invalid syntax'
_RANGE = 'strconv.ParseUint: parsing "20000000000000000000": value out of range'


# blang/semver v4's wrongformatTests and the message it gives for each (Go's %q quotes; an empty number fails
# strconv.ParseUint), then what it checks first when more is wrong, and its 64-bit numbers.
@pytest.mark.parametrize(("text", "message"), [
    ("", "Version string empty"),
    (".", "No Major.Minor.Patch elements found"),
    ("1.", "No Major.Minor.Patch elements found"),
    (".1", "No Major.Minor.Patch elements found"),
    ("a.b.c", 'Invalid character(s) found in major number "a"'),
    ("1.a.b", 'Invalid character(s) found in minor number "a"'),
    ("1.1.a", 'Invalid character(s) found in patch number "a"'),
    ("1.a.1", 'Invalid character(s) found in minor number "a"'),
    ("a.1.1", 'Invalid character(s) found in major number "a"'),
    ("..", _SYNTAX),
    ("1..", _SYNTAX),
    ("1.1.", _SYNTAX),
    ("1..1", _SYNTAX),
    ("1.1.+123", _SYNTAX),
    ("1.1.-beta", _SYNTAX),
    ("-1.1.1", 'Invalid character(s) found in major number "-1"'),
    ("1.-1.1", 'Invalid character(s) found in minor number "-1"'),
    ("1.1.-1", _SYNTAX),
    ("20000000000000000000.1.1", _RANGE),
    ("1.20000000000000000000.1", _RANGE),
    ("1.1.20000000000000000000", _RANGE),
    ("1.1.1-20000000000000000000", _RANGE),
    ("01.1.1", 'Major number must not contain leading zeroes "01"'),
    ("001.1.1", 'Major number must not contain leading zeroes "001"'),
    ("1.01.1", 'Minor number must not contain leading zeroes "01"'),
    ("1.001.1", 'Minor number must not contain leading zeroes "001"'),
    ("1.1.01", 'Patch number must not contain leading zeroes "01"'),
    ("1.1.001", 'Patch number must not contain leading zeroes "001"'),
    ("1.1.1-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.1.1-001", 'Numeric PreRelease version must not contain leading zeroes "001"'),
    ("1.1.1-beta.01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.1.1-beta.001", 'Numeric PreRelease version must not contain leading zeroes "001"'),
    ("0.0.0-!", 'Invalid character(s) found in prerelease "!"'),
    ("0.0.0+!", 'Invalid character(s) found in build meta data "!"'),
    ("0.0.0-.alpha", "Prerelease is empty"),
    ("0.0.0-alpha+", "Build meta data is empty"),
    ("0.0.0-alpha+test.", "Build meta data is empty"),
    # The patch before the pre-release, the pre-release before the build metadata.
    ("1.1.a-01+!", 'Invalid character(s) found in patch number "a"'),
    ("1.1.1-01+!", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.1.1-a\tb", 'Invalid character(s) found in prerelease "a\\tb"'),
    ('1.1.1+"\x00', 'Invalid character(s) found in build meta data "\\"\\x00"'),
    ("1.1.1+\u00a0é", 'Invalid character(s) found in build meta data "\\u00a0é"'),
    ("18446744073709551616.0.0", 'strconv.ParseUint: parsing "18446744073709551616": value out of range'),
])
def test_refuses_blang_semver_cases(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        semver.read(text)
    assert str(raised.value) == message
    assert semver.parse(text) is None


# blang/semver v4's compareTests: semver.org's examples of precedence, build metadata not counted.
@pytest.mark.parametrize(("low", "high"), [
    ("1.0.0", "2.0.0"), ("2.0.0", "2.1.0"), ("2.1.0", "2.1.1"),
    ("1.0.0-alpha", "1.0.0-alpha.1"), ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
    ("1.0.0-alpha.beta", "1.0.0-beta"),
    ("1.0.0-beta", "1.0.0-beta.2"), ("1.0.0-beta.2", "1.0.0-beta.11"), ("1.0.0-beta.11", "1.0.0-rc.1"),
    ("1.0.0-rc.1", "1.0.0"), ("1.0.0", "1.0.1-alpha"),
])
def test_precedence(low: str, high: str) -> None:
    a, b = semver.read(low), semver.read(high)
    assert semver.compare(a, b) == -1
    assert semver.compare(b, a) == 1
    assert a < b
    assert semver.compare(a, a) == 0


def test_build_metadata_does_not_count() -> None:
    assert semver.compare(semver.read("1.0.0+1.2.3"), semver.read("1.0.0")) == 0
    assert semver.read("1.0.0+1.2.3") == semver.read("1.0.0")


# blang/semver v4's tolerantFormatTests and wrongTolerantFormatTests, but for the spaces, which Kubernetes'
# CEL library does not trim.
@pytest.mark.parametrize(("text", "expected"), [
    ("v1.2.3", Version(1, 2, 3)),
    ("1.2.0-alpha", Version(1, 2, 0, ("alpha",))),
    ("1.2.00", Version(1, 2, 0)),
    ("01.02.03", Version(1, 2, 3)),
    ("00.0.03", Version(0, 0, 3)),
    ("000.0.03", Version(0, 0, 3)),
    ("1.2", Version(1, 2, 0)),
    ("1", Version(1, 0, 0)),
])
def test_reads_tolerantly(text: str, expected: Version) -> None:
    assert semver.read_tolerant(text) == expected


@pytest.mark.parametrize("text", ["1.0+abc", "1.0-rc.1", " 1.2.3", "1.2.3 "])
def test_refuses_tolerantly(text: str) -> None:
    with pytest.raises(ValueError):
        semver.read_tolerant(text)
