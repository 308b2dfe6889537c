"""podsched's release, as `podsched version`, the API server's Version call and the scheduler's
LeaseCandidate (its binaryVersion) report it."""

from __future__ import annotations

import importlib.metadata
import platform
import sys

PODSCHED_VERSION = importlib.metadata.version("podsched")

#: The Kubernetes release whose API podsched follows (the newest published API of its kinds), which the
#: HTTP API's /version reports so that kubectl's version-skew check compares like with like.
KUBERNETES_VERSION = (1, 37, 0)


def kubernetes_version_info(podsched_version: str) -> dict[str, str]:
    """/version as kube-apiserver answers it (version.Info), podsched's release as semver build
    metadata of the Kubernetes version it follows: ``v1.37.0+podsched.0.9.0``."""
    major, minor, patch = KUBERNETES_VERSION
    build = "".join(ch if ch.isalnum() or ch in ".-" else "-" for ch in podsched_version)
    return {
        "major": str(major), "minor": str(minor),
        "gitVersion": f"v{major}.{minor}.{patch}+podsched.{build}",
        "gitCommit": "", "gitTreeState": "", "buildDate": "", "goVersion": "", "compiler": "",
        "platform": _platform(),
        "emulationMajor": str(major), "emulationMinor": str(minor),
        "minCompatibilityMajor": str(major), "minCompatibilityMinor": str(minor - 1),
    }


def _platform() -> str:
    """GOOS/GOARCH as Go names them: linux/amd64, darwin/arm64."""
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64", "i686": "386"}.get(machine, machine)
    return f"{sys.platform}/{arch}"
