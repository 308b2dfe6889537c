"""The Kubernetes HTTP API of a real `podsched apiserver` serving TLS with bearer tokens, through the
official Python client: the same certificate as gRPC's listener, the same tokens and roles (a readonly
user reads but may not write: 403 in kube-apiserver's words), and no way in without a known token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from cluster.launcher.process import ApiServerProcess

ADMIN_TOKEN = "http-admin-token"
READER_TOKEN = "http-reader-token"


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def server(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory = tmp_path_factory.mktemp("http-tls")
    serving = ca.issue_cert("localhost", "127.0.0.1")
    serving.cert_chain_pems[0].write_to_path(str(directory / "server.crt"))
    serving.private_key_pem.write_to_path(str(directory / "server.key"))
    (directory / "tokens.csv").write_text(
        f"{ADMIN_TOKEN},ada,1,system:masters\n{READER_TOKEN},rita,2,podsched:readonly\n")
    process = ApiServerProcess(
        ["--data-dir", str(directory / "data")], http_listen="127.0.0.1:0",
        extra_args=["--tls-cert-file", str(directory / "server.crt"),
                    "--tls-private-key-file", str(directory / "server.key"),
                    "--token-auth-file", str(directory / "tokens.csv"), "--controllers", "none"],
    )
    with process:
        yield process


def _api(kubernetes_module: Any, server: ApiServerProcess, ca: trustme.CA, token: str | None,
         tmp_path: Path) -> Any:
    client = kubernetes_module.client
    configuration = client.Configuration()
    assert server.http_url is not None and server.http_url.startswith("https://")
    configuration.host = server.http_url
    ca_file = tmp_path / "ca.crt"
    ca.cert_pem.write_to_path(str(ca_file))
    configuration.ssl_ca_cert = str(ca_file)
    if token is not None:
        configuration.api_key = {"authorization": token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.CoreV1Api(client.ApiClient(configuration))


def _pod(kubernetes_module: Any, name: str) -> Any:
    client = kubernetes_module.client
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name),
                        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))


def test_an_admin_token_writes_over_https(kubernetes_module: Any, server: ApiServerProcess, ca: trustme.CA,
                                          tmp_path: Path) -> None:
    api = _api(kubernetes_module, server, ca, ADMIN_TOKEN, tmp_path)
    created = api.create_namespaced_pod("default", _pod(kubernetes_module, "by-admin"))
    assert created.metadata.name == "by-admin"
    listed, _, headers = api.list_namespaced_pod_with_http_info("default")
    assert "by-admin" in [p.metadata.name for p in listed.items]
    # Flow control is on (the server authenticates): answers name its flow schema and priority level.
    assert headers["X-Kubernetes-PF-FlowSchema-UID"] and headers["X-Kubernetes-PF-PriorityLevel-UID"]


def test_a_readonly_token_reads_and_is_forbidden_to_write(
    kubernetes_module: Any, server: ApiServerProcess, ca: trustme.CA, tmp_path: Path
) -> None:
    api = _api(kubernetes_module, server, ca, READER_TOKEN, tmp_path)
    api.list_namespaced_pod("default")
    with pytest.raises(kubernetes_module.client.ApiException) as refused:
        api.create_namespaced_pod("default", _pod(kubernetes_module, "by-reader"))
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == (
        'pods is forbidden: User "rita" cannot create resource "pods" '
        'in API group "" in the namespace "default"')


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_no_known_token_is_unauthorized(kubernetes_module: Any, server: ApiServerProcess, ca: trustme.CA,
                                        tmp_path: Path, token: str | None) -> None:
    api = _api(kubernetes_module, server, ca, token, tmp_path)
    with pytest.raises(kubernetes_module.client.ApiException) as refused:
        api.list_namespaced_pod("default")
    assert refused.value.status == 401
    assert '"reason":"Unauthorized"' in refused.value.body
