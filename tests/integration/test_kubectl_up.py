"""The real kubectl against `podsched up --tls`: the kubeconfig up writes (and names in its ``export
KUBECONFIG=`` line) reaches the HTTP API over TLS as the admin user, whose pod the scheduler binds; the
readonly user's kubeconfig, written with `podsched kubeconfig` from the certificates up made, is refused
what it may not do."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from tests.integration.helpers import CliResult, parse_table, pod_manifest, run_cli
from tests.integration.upprocess import Up


def run_kubectl(
    kubectl: Path, kubeconfig: str, home: Path, *args: str, input: str | None = None
) -> CliResult:
    done = subprocess.run(
        [str(kubectl), "--kubeconfig", kubeconfig, *args], input=input, capture_output=True, text=True,
        stdin=None if input is not None else subprocess.DEVNULL, timeout=60,
        env={"HOME": str(home), "PATH": os.environ.get("PATH", "")},
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


def test_kubectl_with_the_kubeconfig_of_up_tls_gets_nodes_and_applies_a_bound_pod(
    kubectl: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    up = Up("--tls", "--replicas", "1", "--nodes", "1", "--listen", "127.0.0.1:0",
            "--http-listen", "127.0.0.1:0", "--data-dir", str(data))
    try:
        kubeconfig = up.wait_for(r"export KUBECONFIG=(\S+)$")[1]
        assert kubeconfig == str(data / "kubeconfig")
        written = yaml.safe_load(Path(kubeconfig).read_text())
        server = written["clusters"][0]["cluster"]["server"]
        assert server.startswith("https://127.0.0.1:"), written
        up.wait_for(r"leader is now \S+ \(scheduler-1")

        def admin(*args: str, input: str | None = None) -> CliResult:
            return run_kubectl(kubectl, kubeconfig, tmp_path, *args, input=input)

        nodes = admin("get", "nodes")
        assert nodes.code == 0, nodes.stderr
        assert [row["NAME"] for row in parse_table(nodes.stdout)] == ["node-1"]

        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubectl-up"}}
        manifest = yaml.safe_dump_all([namespace, pod_manifest("web", "kubectl-up")], sort_keys=False)
        applied = admin("apply", "-f", "-", input=manifest)
        assert (applied.code, applied.stdout) == (
            0, "namespace/kubectl-up created\npod/web created\n"), applied
        waited = admin("wait", "--for=condition=PodScheduled", "pod/web", "-n", "kubectl-up", "--timeout=60s")
        assert (waited.code, waited.stdout) == (0, "pod/web condition met\n"), waited
        bound = admin("get", "pod", "web", "-n", "kubectl-up", "-o", "jsonpath={.spec.nodeName}")
        assert (bound.code, bound.stdout) == (0, "node-1"), bound

        # The readonly user up made certificates for: it may read, not delete.
        users = data / "pki" / "users"
        readonly = tmp_path / "readonly.kubeconfig"
        made = run_cli("", "kubeconfig", "--server", server, "-o", str(readonly),
                       "--certificate-authority", str(data / "pki" / "ca.crt"),
                       "--client-certificate", str(users / "readonly.crt"),
                       "--client-key", str(users / "readonly.key"))
        assert made.code == 0, made.stderr
        def reader(*args: str) -> CliResult:
            return run_kubectl(kubectl, str(readonly), tmp_path, *args)

        listed = reader("get", "pods", "-n", "kubectl-up", "-o", "name")
        assert (listed.code, listed.stdout) == (0, "pod/web\n"), listed
        refused = reader("delete", "pod", "web", "-n", "kubectl-up")
        assert refused.code == 1
        assert refused.stderr == (
            'Error from server (Forbidden): pods "web" is forbidden: User "readonly" cannot delete resource '
            '"pods" in API group "" in the namespace "kubectl-up"\n')
    finally:
        code, stderr = up.stop()
    assert code == 0, stderr
