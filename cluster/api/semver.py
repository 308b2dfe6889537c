"""Semantic versions (semver.org 2.0.0) as LeaseCandidate validation reads them: strict, no leading "v",
ordered by precedence (build metadata ignored, a pre-release before its release)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_NUMBER = r"0|[1-9]\d*"
_PRERELEASE_PART = r"0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*"
_SEMVER = re.compile(
    rf"(?P<major>{_NUMBER})\.(?P<minor>{_NUMBER})\.(?P<patch>{_NUMBER})"
    rf"(?:-(?P<pre>(?:{_PRERELEASE_PART})(?:\.(?:{_PRERELEASE_PART}))*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?",
    re.ASCII,
)


@total_ordering
@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]:
        # A release sorts after its pre-releases; numeric identifiers before alphanumeric ones.
        parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return self.major, self.minor, self.patch, 0 if self.prerelease else 1, parts

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()


def parse(text: str) -> Version | None:
    """The version ``text`` spells, or None when it is not a semantic version."""
    match = _SEMVER.fullmatch(text)
    if match is None:
        return None
    pre = match.group("pre")
    return Version(int(match.group("major")), int(match.group("minor")), int(match.group("patch")),
                   tuple(pre.split(".")) if pre else ())
