"""Client certificates as identities on a real `podsched apiserver` serving mutual TLS: the
certificate's CN is the user and its O the groups; a token on the same connection names the caller
instead; a certificate from another CA, none at all, or plaintext never get in, and the CLI says at once
what is likely wrong; a certificate without a CN names nobody."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import trustme

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, kinds
from cluster.client.credentials import ClientCredentials
from cluster.launcher.process import ApiServerProcess
from tests.builders import pod
from tests.integration.helpers import run_cli

ADMIN_TOKEN = "tls-admin-token"
NAMESPACE = "auth-tls"


class Pki:
    def __init__(self) -> None:
        self.ca = trustme.CA()
        self.other_ca = trustme.CA()

    def credentials(
        self, *, common_name: str | None = None, groups: str | None = None, ca: trustme.CA | None = None
    ) -> grpc.ChannelCredentials:
        """TLS trusting the server's CA, with a client certificate when a subject is given."""
        if common_name is None and groups is None:
            return grpc.ssl_channel_credentials(self.ca.cert_pem.bytes())
        leaf = (ca or self.ca).issue_cert("client", common_name=common_name, organization_name=groups)
        return grpc.ssl_channel_credentials(
            self.ca.cert_pem.bytes(),
            private_key=leaf.private_key_pem.bytes(),
            certificate_chain=leaf.cert_chain_pems[0].bytes(),
        )


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki()


@pytest.fixture(scope="module")
def mtls_server(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory = tmp_path_factory.mktemp("auth-tls")
    serving = pki.ca.issue_cert("localhost", "127.0.0.1")
    paths = {name: directory / name for name in ("server.crt", "server.key", "ca.crt", "tokens.csv")}
    serving.cert_chain_pems[0].write_to_path(str(paths["server.crt"]))
    serving.private_key_pem.write_to_path(str(paths["server.key"]))
    pki.ca.cert_pem.write_to_path(str(paths["ca.crt"]))
    paths["tokens.csv"].write_text(f"{ADMIN_TOKEN},ada,1,system:masters\n")
    server = ApiServerProcess(
        ["--data-dir", str(directory / "data")],
        extra_args=[
            "--tls-cert-file", str(paths["server.crt"]), "--tls-private-key-file", str(paths["server.key"]),
            "--client-ca-file", str(paths["ca.crt"]), "--token-auth-file", str(paths["tokens.csv"]),
            "--controllers", "none",
        ],
    )
    with server:
        yield server


def _create_pod_dry_run() -> apiserver_pb2.CreateRequest:
    web = pod("web", NAMESPACE, image="busybox")
    return apiserver_pb2.CreateRequest(object=kinds.wrap(web), dry_run=True)


async def _call(
    server: ApiServerProcess, credentials: grpc.ChannelCredentials | None, request: object, token: str = ""
) -> grpc.StatusCode:
    """The status of one call (List or a dry-run Create) made over ``credentials`` (None: plaintext)."""
    if credentials is None:
        channel = grpc.aio.insecure_channel(server.address)
    else:
        channel = grpc.aio.secure_channel(
            server.address, credentials, options=(("grpc.ssl_target_name_override", "localhost"),)
        )
    metadata = ClientCredentials(token=token).metadata()
    stub = apiserver_pb2_grpc.ApiServerStub(channel)
    try:
        if isinstance(request, apiserver_pb2.ListRequest):
            await stub.List(request, metadata=metadata, timeout=10)
        else:
            await stub.Create(request, metadata=metadata, timeout=10)
        return grpc.StatusCode.OK
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    finally:
        await channel.close()


LIST_PODS = apiserver_pb2.ListRequest(kind="pods", namespace=NAMESPACE)


async def test_a_client_certificate_names_the_user_and_its_groups(
    mtls_server: ApiServerProcess, pki: Pki
) -> None:
    reader = pki.credentials(common_name="alice", groups="podsched:readonly")
    assert await _call(mtls_server, reader, LIST_PODS) == grpc.StatusCode.OK
    assert await _call(mtls_server, reader, _create_pod_dry_run()) == grpc.StatusCode.PERMISSION_DENIED
    channel = grpc.aio.secure_channel(
        mtls_server.address, reader, options=(("grpc.ssl_target_name_override", "localhost"),)
    )
    async with channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await apiserver_pb2_grpc.ApiServerStub(channel).Create(_create_pod_dry_run())
    assert refused.value.details() == (
        f'pods is forbidden: User "alice" cannot create resource "pods" '
        f'in API group "" in the namespace "{NAMESPACE}"'
    )


async def test_a_token_on_a_certificate_connection_names_the_caller(
    mtls_server: ApiServerProcess, pki: Pki
) -> None:
    reader = pki.credentials(common_name="alice", groups="podsched:readonly")
    assert await _call(mtls_server, reader, _create_pod_dry_run(), ADMIN_TOKEN) == grpc.StatusCode.OK
    assert await _call(mtls_server, reader, LIST_PODS, "wrong-token") == grpc.StatusCode.UNAUTHENTICATED


async def test_a_certificate_without_a_common_name_names_nobody(
    mtls_server: ApiServerProcess, pki: Pki
) -> None:
    anonymous = pki.credentials(groups="system:masters")
    assert await _call(mtls_server, anonymous, LIST_PODS) == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("how", ["other-ca", "no-certificate", "plaintext"])
async def test_no_connection_without_a_certificate_from_the_client_ca(
    mtls_server: ApiServerProcess, pki: Pki, how: str
) -> None:
    credentials = {
        "other-ca": pki.credentials(common_name="mallory", groups="system:masters", ca=pki.other_ca),
        "no-certificate": pki.credentials(),
        "plaintext": None,
    }[how]
    assert await _call(mtls_server, credentials, LIST_PODS, ADMIN_TOKEN) == grpc.StatusCode.UNAVAILABLE


def _client_files(pki: Pki, directory: Path, *, ca: trustme.CA) -> dict[str, str]:
    """The server's CA and a client certificate signed by ``ca``, as files for the CLI's flags."""
    leaf = ca.issue_cert("client", common_name="ada", organization_name="system:masters")
    files = {"ca": directory / "ca.crt", "cert": directory / "client.crt", "key": directory / "client.key"}
    pki.ca.cert_pem.write_to_path(str(files["ca"]))
    leaf.cert_chain_pems[0].write_to_path(str(files["cert"]))
    leaf.private_key_pem.write_to_path(str(files["key"]))
    return {name: str(path) for name, path in files.items()}


def test_a_client_certificate_from_another_ca_fails_at_once_saying_why(
    mtls_server: ApiServerProcess, pki: Pki, tmp_path: Path
) -> None:
    files = _client_files(pki, tmp_path, ca=pki.other_ca)
    # The server twice: a retry of the refused connection would log a failover to "the next" server.
    servers = f"{mtls_server.address},{mtls_server.address}"
    result = run_cli(servers, "get", "pods", "--certificate-authority", files["ca"],
                     "--client-certificate", files["cert"], "--client-key", files["key"])
    assert result.code == 1
    assert result.stderr == (
        f"Unable to connect to the server at {servers}: the API server at {mtls_server.address} closed the "
        "connection right after the TLS handshake: it most likely refused the client certificate "
        f"(--client-certificate {files['cert']}): is it signed by the CA the server trusts (its "
        "--client-ca-file)?\n"
    )


def test_the_health_service_needs_a_client_certificate_from_the_client_ca(
    mtls_server: ApiServerProcess, pki: Pki, tmp_path: Path
) -> None:
    files = _client_files(pki, tmp_path, ca=pki.ca)
    without = run_cli(mtls_server.address, "healthcheck", "--certificate-authority", files["ca"])
    assert without.code == 1
    assert without.stderr == (
        f"podsched healthcheck: {mtls_server.address} closed the connection right after the TLS handshake: "
        "it most likely requires a client certificate (give --client-certificate and --client-key)\n"
    )
    with_certificate = run_cli(mtls_server.address, "healthcheck", "--certificate-authority", files["ca"],
                               "--client-certificate", files["cert"], "--client-key", files["key"])
    assert with_certificate.code == 0, with_certificate.stderr
    assert with_certificate.stdout == f"podsched healthcheck: {mtls_server.address} is SERVING\n"
