"""The API server over TLS, as real processes: `podsched certs` writes the files, `podsched apiserver`
serves with them (mutual TLS and tokens), and the CLI, the scheduler and the server's own controllers
connect with credentials from flags or the environment. Every refusal (no CA, the wrong CA, no client
certificate, a bad security flag) is one clear line and exit 1."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from cluster.client import Client, ClientCredentials
from cluster.launcher.certs import Bundle, User, write_bundle
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.helpers import REPO, pod_manifest, run_cli

SETTLE_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    users = (User("admin", "admin"), User("scheduler", "scheduler"), User("readonly", "readonly"))
    return write_bundle(tmp_path_factory.mktemp("pki"), users=users)[0]


@pytest.fixture(scope="module")
def mtls_server(pki: Bundle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """Mutual TLS (client certificates required) and a token file."""
    server = ApiServerProcess(["--data-dir", str(tmp_path_factory.mktemp("mtls"))],
                              extra_args=pki.apiserver_flags())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def token_server(pki: Bundle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    """TLS without client certificates: callers authenticate with bearer tokens."""
    flags = ["--tls-cert-file", str(pki.path("apiserver.crt")), "--tls-private-key-file",
             str(pki.path("apiserver.key")), "--token-auth-file", str(pki.token_file)]
    server = ApiServerProcess(["--data-dir", str(tmp_path_factory.mktemp("tokens"))], extra_args=flags)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_cli_connects_with_a_client_certificate(mtls_server: ApiServerProcess, pki: Bundle) -> None:
    result = run_cli(mtls_server.address, "get", "pods", *pki.user_flags("admin"))
    assert result.code == 0, result.stderr
    assert "No resources found" in result.stderr


def test_the_cli_takes_credentials_from_the_environment(mtls_server: ApiServerProcess, pki: Bundle) -> None:
    result = run_cli(mtls_server.address, "get", "priorityclasses", env=pki.user_env("admin"))
    assert result.code == 0, result.stderr
    assert "system-node-critical" in result.stdout


def test_the_cli_connects_with_a_token_over_tls(token_server: ApiServerProcess, pki: Bundle) -> None:
    token = pki.tokens()["admin"]
    result = run_cli(token_server.address, "get", "pods", "--certificate-authority", str(pki.ca_cert),
                     "--token", token)
    assert result.code == 0, result.stderr
    via_env = run_cli(token_server.address, "get", "pods",
                      env={"PODSCHED_CA_FILE": str(pki.ca_cert), "PODSCHED_TOKEN": token})
    assert via_env.code == 0, via_env.stderr


def test_without_a_ca_the_cli_says_the_server_may_serve_tls(mtls_server: ApiServerProcess) -> None:
    result = run_cli(mtls_server.address, "get", "pods", "--request-timeout", "1")
    assert result.code == 1
    assert f"Unable to connect to the server at {mtls_server.address}" in result.stderr
    assert "if the server serves TLS, give --certificate-authority" in result.stderr


def test_the_wrong_ca_is_named_with_the_server(mtls_server: ApiServerProcess, pki: Bundle) -> None:
    wrong = pki.path("etcd/ca.crt")
    result = run_cli(mtls_server.address, "get", "pods", "--certificate-authority", str(wrong))
    assert result.code == 1
    assert (f"TLS handshake with the API server at {mtls_server.address} failed: its certificate is not "
            f"signed by the CA in {wrong}") in result.stderr


def test_without_a_client_certificate_mutual_tls_refuses(mtls_server: ApiServerProcess, pki: Bundle) -> None:
    result = run_cli(mtls_server.address, "get", "pods", "--certificate-authority", str(pki.ca_cert),
                     "--request-timeout", "1")
    assert result.code == 1
    assert (f"the API server at {mtls_server.address} closed the connection right after the TLS handshake: "
            "it most likely requires a client certificate (give --client-certificate and --client-key)"
            ) in result.stderr


def test_a_missing_ca_file_is_named_with_its_flag(mtls_server: ApiServerProcess, tmp_path: Path) -> None:
    missing = str(tmp_path / "ca.crt")
    result = run_cli(mtls_server.address, "get", "pods", "--certificate-authority", missing)
    assert result.code == 1
    assert result.stderr.strip() == (
        f"error: unable to read --certificate-authority {tmp_path}/ca.crt: No such file or directory"
    )


async def test_the_servers_own_controllers_reach_it_through_mutual_tls(
    mtls_server: ApiServerProcess, pki: Bundle
) -> None:
    """The disruption controller writes a budget's status: it got through TLS, the client-certificate
    requirement and authorization with the server's loopback identity."""
    await until_budget_observed(mtls_server, pki, admin_credentials(pki))


async def test_the_servers_own_controllers_reach_it_over_tls_with_tokens(
    token_server: ApiServerProcess, pki: Bundle
) -> None:
    credentials = ClientCredentials(ca_file=str(pki.ca_cert), token=pki.tokens()["admin"])
    await until_budget_observed(token_server, pki, credentials)


def admin_credentials(pki: Bundle) -> ClientCredentials:
    return pki.user_credentials("admin")


async def until_budget_observed(
    server: ApiServerProcess, pki: Bundle, credentials: ClientCredentials
) -> None:
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "web", "namespace": "tls-controllers"},
              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    applied = run_cli(server.address, "apply", "-f", "-", input=yaml.safe_dump(budget),
                      env={"PODSCHED_CA_FILE": str(pki.ca_cert), **token_or_cert_env(credentials)})
    assert applied.code == 0, applied.stderr
    async with Client(server.address, credentials=credentials) as api:
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while (await api.get("pdb", "web", "tls-controllers")).status.observed_generation < 1:  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, f"no controller wrote the budget's status:\n{server.log()}"
            await asyncio.sleep(0.2)


def token_or_cert_env(credentials: ClientCredentials) -> dict[str, str]:
    if credentials.token:
        return {"PODSCHED_TOKEN": credentials.token}
    return {"PODSCHED_CLIENT_CERT": credentials.client_cert_file,
            "PODSCHED_CLIENT_KEY": credentials.client_key_file}


async def test_the_scheduler_binds_with_its_certificate(
    mtls_server: ApiServerProcess, pki: Bundle, tmp_path: Path
) -> None:
    scheduler = SchedulerProcess(
        ["--server", mtls_server.address, "--metrics-addr", "127.0.0.1:0", "--leader-elect=true",
         *pki.user_flags("scheduler")]
    )  # fmt: skip
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "tls-node"},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
    manifests = yaml.safe_dump_all([node, pod_manifest("tls-pod", "tls-bind")])
    applied = run_cli(mtls_server.address, "apply", "-f", "-", input=manifests, env=pki.user_env("admin"))
    assert applied.code == 0, applied.stderr
    scheduler.start()
    try:
        async with Client(mtls_server.address, credentials=admin_credentials(pki)) as api:
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while not (await api.get("pods", "tls-pod", "tls-bind")).spec.node_name:
                assert time.monotonic() < deadline, f"the pod was not bound:\n{scheduler.log()}"
                await asyncio.sleep(0.2)
    finally:
        assert scheduler.stop() == 0, scheduler.log()


def test_the_scheduler_names_an_unusable_credential_file(tmp_path: Path) -> None:
    result = run_cli("127.0.0.1:1", "scheduler", "--client-certificate", str(tmp_path / "s.crt"),
                     "--client-key", str(tmp_path / "s.key"))
    assert result.code == 1
    assert f"unable to read --client-certificate {tmp_path}/s.crt" in result.stderr


@pytest.mark.parametrize(
    ("flags", "complaint"),
    [
        (lambda p, t: ["--tls-cert-file", str(t / "none.crt"),
                       "--tls-private-key-file", str(p.path("apiserver.key"))],
         "--tls-cert-file {t}/none.crt"),
        (lambda p, t: ["--tls-cert-file", str(p.path("apiserver.crt"))],
         "--tls-cert-file needs --tls-private-key-file"),
        (lambda p, t: ["--etcd-cafile", str(p.path("etcd/ca.crt"))],
         "--etcd-cafile applies to etcd only: add --etcd ENDPOINTS"),
        (lambda p, t: ["--etcd", "127.0.0.1:1", "--etcd-certfile", str(p.path("apiserver-etcd-client.crt"))],
         "--etcd-certfile needs --etcd-keyfile"),
        (lambda p, t: ["--etcd", "127.0.0.1:1", "--etcd-certfile", str(p.path("apiserver-etcd-client.crt")),
                       "--etcd-keyfile", str(p.path("apiserver-etcd-client.key"))],
         "--etcd-certfile needs --etcd-cafile"),
        (lambda p, t: ["--etcd", "127.0.0.1:1", "--etcd-cafile", str(t / "none.crt")],
         "--etcd-cafile {t}/none.crt: cannot read it: No such file or directory"),
        (lambda p, t: ["--etcd", "127.0.0.1:1", "--etcd-cafile", str(p.path("etcd/ca.crt")),
                       "--etcd-certfile", str(p.path("apiserver-etcd-client.key")),
                       "--etcd-keyfile", str(p.path("apiserver-etcd-client.key"))],
         "--etcd-certfile {p}/apiserver-etcd-client.key: holds no PEM certificate"),
    ],
    ids=["tls-cert-missing", "tls-key-not-given", "etcd-tls-without-etcd", "etcd-cert-without-key",
         "etcd-cert-without-ca", "etcd-ca-missing", "etcd-cert-not-pem"],
)
def test_a_bad_security_flag_stops_the_server_naming_it(
    pki: Bundle, tmp_path: Path, flags: Callable[[Bundle, Path], list[str]], complaint: str
) -> None:
    given = flags(pki, tmp_path)
    store = [] if "--etcd" in given else ["--data-dir", str(tmp_path / "data")]
    result = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "apiserver", "--listen", "127.0.0.1:0", *store, *given],
        capture_output=True, text=True, timeout=60, cwd=REPO, check=False,
    )
    assert result.returncode == 1, result.stderr
    assert complaint.format(p=pki.dir, t=tmp_path) in result.stderr
    assert "serving on" not in result.stderr


def test_healthcheck_over_mutual_tls(mtls_server: ApiServerProcess, pki: Bundle) -> None:
    address = mtls_server.address
    serving = run_cli(address, "healthcheck", "--server", address, *pki.user_flags("admin"))
    assert serving.code == 0, serving.stderr
    assert serving.stdout.strip() == f"podsched healthcheck: {address} is SERVING"
    plaintext = run_cli(address, "healthcheck", "--server", address)
    assert plaintext.code == 1
    assert f"podsched healthcheck: cannot reach {address}" in plaintext.stderr


def test_kubectls_words_for_no_credentials_and_a_denial(token_server: ApiServerProcess, pki: Bundle) -> None:
    ca = ["--certificate-authority", str(pki.ca_cert)]
    anonymous = run_cli(token_server.address, "get", "pods", *ca)
    assert anonymous.code == 1
    assert anonymous.stderr.strip() == "error: You must be logged in to the server (Unauthorized)"
    denied = run_cli(token_server.address, "delete", "pod", "x", *ca, "--token", pki.tokens()["readonly"])
    assert denied.code == 1
    assert denied.stderr.strip() == (
        'Error from server (Forbidden): pods "x" is forbidden: User "readonly" cannot delete resource "pods" '
        'in API group "" in the namespace "default"'
    )
