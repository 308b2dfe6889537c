"""`podsched up --tls` as a real process: it makes the certificates, runs a local etcd with client-cert
auth, an API server with mutual TLS and tokens, and replicas authenticating as the scheduler user; they
elect a leader, and a pod applied with the environment it prints is bound. Without those variables the
CLI is refused; the web view watches as the readonly user; a second `up` reuses the certificates;
--certs-dir alone is a usage error."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

from tests.integration.helpers import REPO, pod_manifest, run_cli
from tests.integration.upprocess import STEP_TIMEOUT_S, Up

EXPORT = re.compile(r"export (PODSCHED_[A-Z_]+)=(\S+)")


def printed_env(up: Up) -> dict[str, str]:
    up.wait_for(r"export PODSCHED_CLIENT_KEY=")
    return dict(EXPORT.findall(up.out))


def bound_node(env: dict[str, str], name: str, namespace: str) -> str:
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while True:
        shown = run_cli(env["PODSCHED_SERVER"], "get", "pod", name, "-n", namespace, "-o", "yaml", env=env)
        assert shown.code == 0, shown.stderr
        node: str = yaml.safe_load(shown.stdout)["spec"].get("nodeName", "")
        if node or time.monotonic() > deadline:
            return node
        time.sleep(0.3)


def test_up_tls_elects_and_binds_with_the_printed_environment(tmp_path: Path) -> None:
    data = tmp_path / "data"
    up = Up("--tls", "--replicas", "2", "--etcd-local", "1", "--nodes", "1", "--listen", "127.0.0.1:0",
            "--data-dir", str(data), "--ui", "--ui-listen", "127.0.0.1:0")
    try:
        up.wait_for(rf"certificates: made a CA, server and user certificates and tokens in {data}/pki")
        up.wait_for(r"store: local etcd cluster of 1 \(TLS, client-cert auth\)")
        up.wait_for(r"leader is now \S+ \(scheduler-\d")
        env = printed_env(up)
        assert env == {
            "PODSCHED_SERVER": env["PODSCHED_SERVER"], "PODSCHED_CA_FILE": f"{data}/pki/ca.crt",
            "PODSCHED_CLIENT_CERT": f"{data}/pki/users/admin.crt",
            "PODSCHED_CLIENT_KEY": f"{data}/pki/users/admin.key",
        }  # fmt: skip

        manifest = yaml.safe_dump(pod_manifest("web", "tls-up"))
        applied = run_cli(env["PODSCHED_SERVER"], "apply", "-f", "-", input=manifest, env=env)
        assert applied.code == 0, applied.stderr
        assert bound_node(env, "web", "tls-up") == "node-1", up.out
        # The web view watches over TLS as the readonly user.
        url = up.wait_for(r"ui: (http://\S+/)$")[1]
        with urllib.request.urlopen(url + "api/state", timeout=10) as response:
            assert "node-1" in json.loads(response.read())["nodes"]

        plain = run_cli(env["PODSCHED_SERVER"], "get", "pods", "--request-timeout", "1")
        assert plain.code == 1
        assert "if the server serves TLS" in plain.stderr
    finally:
        code, stderr = up.stop()
    assert code == 0, stderr
    # The data directory and every secret in it are the user's alone.
    assert os.stat(data).st_mode & 0o077 == 0
    for secret in ("ca.key", "apiserver.key", "users/admin.key", "tokens.csv", "etcd/ca.key"):
        assert os.stat(data / "pki" / secret).st_mode & 0o077 == 0, secret

    again = Up("--tls", "--replicas", "1", "--listen", "127.0.0.1:0", "--data-dir", str(data))
    try:
        again.wait_for(rf"certificates: using {data}/pki")
        assert printed_env(again)["PODSCHED_CA_FILE"] == f"{data}/pki/ca.crt"
    finally:
        code, stderr = again.stop()
    assert code == 0, stderr


def test_certs_dir_without_tls_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "cluster.cli", "up", "--certs-dir", "/tmp/pki"],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode == 2
    assert "podsched up: --certs-dir: applies with --tls only" in done.stderr
