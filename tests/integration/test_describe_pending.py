"""`podsched describe pod` on a real API server with no scheduler running: a pending pod's Events say
that no scheduler holds the Lease (none, released, or not renewed within its duration), and say
nothing of it once a scheduler renews the Lease, when the pod is bound, or when the caller may not read
leases (describe still works)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cluster.launcher.process import ApiServerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import node_manifest, pod_manifest, run_cli, write_yaml

QUESTION = 'is "podsched scheduler" running?'


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ApiServerProcess]:
    with own_apiserver("sqlite", tmp_path) as started:
        yield started


def _events_line(address: str, pod: str) -> str:
    described = run_cli(address, "describe", "pod", pod)
    assert described.code == 0, described
    return next(line for line in described.stdout.splitlines() if line.startswith("Events:"))


def _write_lease(address: str, tmp_path: Path, holder: str, renewed_s_ago: float) -> None:
    renewed = datetime.fromtimestamp(time.time() - renewed_s_ago, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renewed},
    }
    applied = run_cli(address, "apply", "-f", write_yaml(tmp_path / "lease.yaml", lease))
    assert applied.code == 0, applied


def test_a_pending_pod_says_when_no_scheduler_holds_the_lease(
    server: ApiServerProcess, tmp_path: Path
) -> None:
    address = server.address
    pod = write_yaml(tmp_path / "pod.yaml", pod_manifest("web", "default"))
    applied = run_cli(address, "apply", "-f", pod)
    assert applied.code == 0, applied

    assert _events_line(address, "web") == (
        "Events:          <none>  (no scheduler holds the lease kube-system/kube-scheduler "
        f"(there is no such lease): {QUESTION})")

    _write_lease(address, tmp_path, "gone_1", renewed_s_ago=3600)
    stale = re.search(r"\(the lease kube-system/kube-scheduler, held by gone_1, was not renewed for (\d+)s "
                      r"by this machine's clock \(its duration is 15s\): (.*)\)$",
                      _events_line(address, "web"))
    assert stale and int(stale[1]) >= 3600 and stale[2] == QUESTION

    _write_lease(address, tmp_path, "", renewed_s_ago=0)
    assert _events_line(address, "web").endswith(
        f"<none>  (no scheduler holds the lease kube-system/kube-scheduler (released): {QUESTION})")

    _write_lease(address, tmp_path, "alive_1", renewed_s_ago=0)
    assert _events_line(address, "web").split() == ["Events:", "<none>"]


def test_a_bound_pod_gets_no_hint(server: ApiServerProcess, tmp_path: Path) -> None:
    address = server.address
    manifests = write_yaml(tmp_path / "bound.yaml", node_manifest("node-1"),
                           pod_manifest("placed", "default", nodeName="node-1"))
    applied = run_cli(address, "apply", "-f", manifests)
    assert applied.code == 0, applied
    assert _events_line(address, "placed").split() == ["Events:", "<none>"]


def test_a_caller_who_may_not_read_leases_gets_no_hint_and_no_error(tmp_path: Path) -> None:
    (tmp_path / "tokens.csv").write_text("admin-token,ada,1,system:masters\nviewer-token,vic,2\n")
    (tmp_path / "policy.yaml").write_text(
        "roles:\n  - name: pod-viewer\n    rules:\n"
        "      - {verbs: [get, list], resources: [pods, events]}\n"
        "bindings:\n  - {role: pod-viewer, users: [vic]}\n")
    auth = ["--token-auth-file", str(tmp_path / "tokens.csv"),
            "--authorization-policy-file", str(tmp_path / "policy.yaml")]
    with own_apiserver("sqlite", tmp_path, extra_args=auth) as secured:
        pod = write_yaml(tmp_path / "pod.yaml", pod_manifest("web", "default"))
        applied = run_cli(secured.address, "apply", "-f", pod, "--token", "admin-token")
        assert applied.code == 0, applied
        lease = run_cli(secured.address, "get", "lease", "-n", "kube-system", "--token", "viewer-token")
        assert lease.code == 1 and "cannot list resource \"leases\"" in lease.stderr, lease
        described = run_cli(secured.address, "describe", "pod", "web", "--token", "viewer-token")
        assert described.code == 0, described
        assert described.stdout.splitlines()[-1].split() == ["Events:", "<none>"]
