"""Semantic versions (semver.org 2.0.0) as Kubernetes reads them with blang/semver: LeaseCandidate's versions,
DRA's version attributes and the CEL semver library. ``read`` is the strict form (``1.2.3-rc.1+build``) and
raises with blang/semver's messages, ``read_tolerant`` the form ``semver(text, true)`` accepts, ``parse``
answers None instead of raising; numbers are blang/semver's uint64s. Versions are ordered by precedence: a
pre-release before its release, build metadata not counted (nor kept)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_DIGITS = frozenset("0123456789")


@functools.total_ordering
@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    #: Numeric identifiers as ints, the others as strings.
    pre: tuple[int | str, ...] = ()

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(part) for part in self.pre)
        return text

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return compare(self, other) < 0


def compare(a: Version, b: Version) -> int:
    """-1, 0 or 1 as ``a`` is lower than, equal to or higher than ``b`` in semver precedence."""
    core_a, core_b = (a.major, a.minor, a.patch), (b.major, b.minor, b.patch)
    if core_a != core_b:
        return -1 if core_a < core_b else 1
    if a.pre == b.pre:
        return 0
    # A release outranks its pre-releases.
    if not a.pre or not b.pre:
        return 1 if not a.pre else -1
    for x, y in zip(a.pre, b.pre, strict=False):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return -1 if x < y else 1
        # Numeric identifiers rank below alphanumeric ones.
        if isinstance(x, int) or isinstance(y, int):
            return -1 if isinstance(x, int) else 1
        return -1 if x < y else 1
    return -1 if len(a.pre) < len(b.pre) else (1 if len(a.pre) > len(b.pre) else 0)


def parse(text: str) -> Version | None:
    """The version ``text`` spells strictly, or None when it is not a semantic version."""
    try:
        return read(text)
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def read(text: str) -> Version:
    """The version ``text`` is, strictly; raises ValueError saying what is wrong (checked in blang/semver's
    order: the numbers, then the pre-release, then the build metadata)."""
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    rest, plus, build = parts[2].partition("+")
    rest, minus, pre = rest.partition("-")
    patch = _number(rest, "patch")
    version = Version(major, minor, patch, tuple(_pre_part(part) for part in pre.split(".")) if minus else ())
    if plus:
        for part in build.split("."):
            _check_build_part(part)
    return version


def read_tolerant(text: str) -> Version:
    """``text`` read as Kubernetes' ``semver(text, true)`` does: a leading "v" dropped, a missing minor or
    patch taken as 0, leading zeros removed."""
    parts = text.removeprefix("v").split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _DIGITS:
                part = "0" + part
            parts[index] = part
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return read(".".join(parts))


def _number(text: str, what: str) -> int:
    if not set(text) <= _DIGITS:
        raise ValueError(f"Invalid character(s) found in {what} number {_quoted(text)}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{what.capitalize()} number must not contain leading zeroes {_quoted(text)}")
    return _uint64(text)


def _uint64(digits: str) -> int:
    """``digits`` as Go's strconv.ParseUint(digits, 10, 64) reads them, with its errors."""
    if not digits:
        raise ValueError(f"strconv.ParseUint: parsing {_quoted(digits)}: invalid syntax")
    value = int(digits)
    if value >= 2**64:
        raise ValueError(f"strconv.ParseUint: parsing {_quoted(digits)}: value out of range")
    return value


def _pre_part(text: str) -> int | str:
    if not text:
        raise ValueError("Prerelease is empty")
    if set(text) <= _DIGITS:
        if len(text) > 1 and text[0] == "0":
            raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {_quoted(text)}")
        return _uint64(text)
    if not set(text) <= _ALNUM:
        raise ValueError(f"Invalid character(s) found in prerelease {_quoted(text)}")
    return text


def _check_build_part(text: str) -> None:
    if not text:
        raise ValueError("Build meta data is empty")
    if not set(text) <= _ALNUM:
        raise ValueError(f"Invalid character(s) found in build meta data {_quoted(text)}")


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}


def _quoted(text: str) -> str:
    """``text`` as Go's %q writes it: escapes for what is not printable."""
    out = []
    for char in text:
        code = ord(char)
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'
