"""ClientCredentials and the client over TLS: where each setting comes from, every kind of unusable
file named with its flag, the bearer token on every call (TLS or plaintext), and each TLS handshake
failure raised at once as a TlsError that says why (against the in-process fake API server)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from google.protobuf.message import Message

from cluster.api import apiserver_pb2_grpc, objects_pb2
from cluster.client import Client, ClientCredentials, CredentialsError, TlsError, Unavailable
from cluster.client.handshake import closes_after_handshake, refused_client
from cluster.launcher.certs import Bundle, User, write_bundle
from tests.unit.test_client_fake_apiserver import FAST_RETRIES, FakeApiServer


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    users = (User("admin", "admin"),)
    return write_bundle(tmp_path_factory.mktemp("pki"), users=users)[0]


@pytest.fixture(scope="module")
def other_bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """Certificates of another CA: trusted by nobody here."""
    return write_bundle(tmp_path_factory.mktemp("other"), users=(User("admin", "admin"),))[0]


class TlsFake(FakeApiServer):
    """The fake API server on a TLS port (client certificates required when ``client_ca`` is given),
    keeping the metadata of every call."""

    def __init__(self, bundle: Bundle, *, client_ca: bytes | None = None, tls: bool = True) -> None:
        super().__init__()
        self._bundle, self._client_ca, self._tls = bundle, client_ca, tls
        self.metadata: list[dict[str, str]] = []

    async def start(self) -> int:
        self._server = server = grpc.aio.server()
        apiserver_pb2_grpc.add_ApiServerServicer_to_server(self, server)
        if self._tls:
            pair = (self._bundle.path("apiserver.key").read_bytes(),
                    self._bundle.path("apiserver.crt").read_bytes())
            credentials = grpc.ssl_server_credentials(
                [pair], root_certificates=self._client_ca, require_client_auth=self._client_ca is not None
            )
            self.port = server.add_secure_port("127.0.0.1:0", credentials)
        else:
            self.port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        return self.port

    async def _enter(self, method: str, request: Message, context: grpc.aio.ServicerContext) -> None:
        self.metadata.append(dict(context.invocation_metadata()))
        await super()._enter(method, request, context)


#: ``await serve(bundle, client_ca=..., tls=...)``: a started TlsFake, stopped after the test.
Serve = Callable[..., Awaitable[TlsFake]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    started: list[TlsFake] = []

    async def start(bundle: Bundle, **options: Any) -> TlsFake:
        fake = TlsFake(bundle, **options)
        await fake.start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        await fake.stop()


def node(name: str) -> objects_pb2.Node:
    return objects_pb2.Node(api_version="v1", kind="Node", metadata=objects_pb2.ObjectMeta(name=name))


def client(address: str, credentials: ClientCredentials) -> Client:
    return Client(address, credentials=credentials, timeout_s=5.0, retry_policy=FAST_RETRIES)


# ------------------------------------------------------------------------------------------- settings


def test_flags_win_over_the_environment(bundle: Bundle) -> None:
    env = {"PODSCHED_TOKEN": "from-env", "PODSCHED_CA_FILE": "/nowhere/ca.crt"}
    credentials = ClientCredentials.from_env_and_flags(token="from-flag", ca_file=str(bundle.ca_cert),
                                                       environ=env)
    assert credentials.token == "from-flag"
    assert credentials.ca_pem == bundle.ca_cert.read_bytes()
    assert credentials.tls


def test_the_environment_gives_what_the_flags_do_not(bundle: Bundle) -> None:
    env = {
        "PODSCHED_TOKEN": "abc", "PODSCHED_CA_FILE": str(bundle.ca_cert),
        "PODSCHED_CLIENT_CERT": cert(bundle), "PODSCHED_CLIENT_KEY": key(bundle),
    }  # fmt: skip
    credentials = ClientCredentials.from_env_and_flags(environ=env)
    assert credentials.metadata() == (("authorization", "Bearer abc"),)
    assert credentials.client_cert_pem == bundle.user_cert("admin").read_bytes()


def test_nothing_given_is_plaintext_without_metadata() -> None:
    credentials = ClientCredentials.from_env_and_flags(environ={})
    assert not credentials.tls and credentials.metadata() == ()


def cert(b: Bundle) -> str:
    return str(b.user_cert("admin"))


def key(b: Bundle) -> str:
    return str(b.user_key("admin"))


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def encrypted_key(path: Path) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.BestAvailableEncryption(b"secret"))
    return write(path, pem)


@pytest.mark.parametrize(
    ("settings", "complaint"),
    [
        (lambda b, t: {"ca_file": str(t / "missing.crt")},
         "unable to read --certificate-authority {t}/missing.crt: No such file or directory"),
        (lambda b, t: {"ca_file": write(t / "junk.crt", b"hello")},
         "--certificate-authority {t}/junk.crt: no PEM certificate in the file"),
        (lambda b, t: {"ca_file": str(t)}, "unable to read --certificate-authority {t}: Is a directory"),
        (lambda b, t: {"client_cert_file": cert(b)},
         "--client-certificate needs --client-key (or $PODSCHED_CLIENT_KEY) too"),
        (lambda b, t: {"client_key_file": key(b)},
         "--client-key needs --client-certificate (or $PODSCHED_CLIENT_CERT) too"),
        (lambda b, t: {"client_cert_file": cert(b), "client_key_file": str(b.path("ca.key"))},
         "--client-key {b}/ca.key is not the key of --client-certificate {b}/users/admin.crt"),
        (lambda b, t: {"client_cert_file": key(b), "client_key_file": key(b)},
         "--client-certificate {b}/users/admin.key: no PEM certificate in the file"),
        (lambda b, t: {"client_cert_file": cert(b), "client_key_file": cert(b)},
         "--client-key {b}/users/admin.crt: no PEM private key in the file"),
        (lambda b, t: {"client_cert_file": cert(b), "client_key_file": encrypted_key(t / "e.key")},
         "--client-key {t}/e.key: the key is encrypted"),
        (lambda b, t: {"token": "two words"}, "--token: the token must be printable ASCII without spaces"),
        (lambda b, t: {"token": "line\nbreak"}, "--token: the token must be printable ASCII"),
    ],
    ids=["missing-ca", "ca-not-pem", "ca-directory", "cert-without-key", "key-without-cert", "key-of-another",
         "cert-not-pem", "key-not-pem", "encrypted-key", "token-space", "token-newline"],
)
def test_unusable_settings_name_the_flag_and_the_file(
    bundle: Bundle, tmp_path: Path, settings: Callable[[Bundle, Path], dict[str, str]], complaint: str
) -> None:
    with pytest.raises(CredentialsError) as caught:
        ClientCredentials.from_env_and_flags(**settings(bundle, tmp_path), environ={})
    assert complaint.format(b=bundle.dir, t=tmp_path) in str(caught.value)


def test_a_setting_from_the_environment_is_named_by_its_variable(tmp_path: Path) -> None:
    with pytest.raises(CredentialsError, match=rf"unable to read \$PODSCHED_CA_FILE {tmp_path}/x.crt"):
        ClientCredentials.from_env_and_flags(environ={"PODSCHED_CA_FILE": str(tmp_path / "x.crt")})


def test_trusting_a_serving_certificate_checks_a_name_it_carries(bundle: Bundle) -> None:
    credentials = ClientCredentials.trusting_certificate(str(bundle.path("apiserver.crt")), token="t")
    assert credentials.tls_server_name == "localhost"
    assert credentials.channel_options() == (("grpc.ssl_target_name_override", "localhost"),)
    assert credentials.metadata() == (("authorization", "Bearer t"),)


# ------------------------------------------------------------------------------------------- the wire


async def test_tls_with_the_ca_carries_the_token_on_every_call(bundle: Bundle, serve: Serve) -> None:
    fake = await serve(bundle)
    credentials = ClientCredentials(token="s3cret", ca_file=str(bundle.ca_cert))
    async with client(fake.address, credentials) as api:
        await api.create(node("n1"))
        assert (await api.get("nodes", "n1")).metadata.name == "n1"
        events = api.watch("nodes")
        assert (await anext(events)).object.metadata.name == "n1"
        await events.aclose()
    assert [call["authorization"] for call in fake.metadata] == ["Bearer s3cret"] * 3


async def test_a_token_over_plaintext_is_sent_as_metadata(bundle: Bundle, serve: Serve) -> None:
    fake = await serve(bundle, tls=False)
    async with client(fake.address, ClientCredentials(token="dev")) as api:
        await api.list("pods")
    assert fake.metadata[-1]["authorization"] == "Bearer dev"


async def test_mutual_tls_with_a_client_certificate(bundle: Bundle, serve: Serve) -> None:
    fake = await serve(bundle, client_ca=bundle.ca_cert.read_bytes())
    credentials = ClientCredentials(ca_file=str(bundle.ca_cert), client_cert_file=cert(bundle),
                                    client_key_file=key(bundle))
    async with client(fake.address, credentials) as api:
        assert (await api.list("pods")).items == []
    assert "authorization" not in fake.metadata[-1]


async def tls_failure(address: str, credentials: ClientCredentials) -> str:
    async with client(address, credentials) as api:
        started = asyncio.get_running_loop().time()
        with pytest.raises(TlsError) as caught:
            await api.list("pods")
        # Not retried until the deadline: a handshake failure is a setting to fix.
        assert asyncio.get_running_loop().time() - started < 4.0
    return caught.value.message


async def test_a_server_signed_by_another_ca_fails_naming_the_server_and_the_ca(
    bundle: Bundle, other_bundle: Bundle, serve: Serve
) -> None:
    fake = await serve(other_bundle)
    message = await tls_failure(fake.address, ClientCredentials(ca_file=str(bundle.ca_cert)))
    assert message.startswith(f"TLS handshake with the API server at {fake.address} failed: its certificate "
                              f"is not signed by the CA in {bundle.ca_cert}")


async def test_tls_to_a_plaintext_server_says_it_does_not_speak_tls(bundle: Bundle, serve: Serve) -> None:
    fake = await serve(bundle, tls=False)
    message = await tls_failure(fake.address, ClientCredentials(ca_file=str(bundle.ca_cert)))
    assert "the server does not speak TLS" in message


async def test_a_certificate_for_other_names_fails_unless_told_the_name(bundle: Bundle, serve: Serve) -> None:
    fake = await serve(bundle)
    wrong = ClientCredentials(ca_file=str(bundle.ca_cert), tls_server_name="elsewhere.example")
    assert "its certificate is not valid for the address dialled" in await tls_failure(fake.address, wrong)
    right = ClientCredentials(ca_file=str(bundle.ca_cert), tls_server_name="localhost")
    async with client(fake.address, right) as api:
        await api.list("pods")


async def test_the_server_trusting_itself_reaches_itself(bundle: Bundle, serve: Serve) -> None:
    fake = await serve(bundle)
    loopback = ClientCredentials.trusting_certificate(str(bundle.path("apiserver.crt")), token="loop")
    async with client(fake.address, loopback) as api:
        await api.list("pods")
    assert fake.metadata[-1]["authorization"] == "Bearer loop"


async def test_a_server_requiring_a_client_certificate_refuses_a_client_without_one(
    bundle: Bundle, serve: Serve
) -> None:
    # TLS 1.3 tells the client only that the server closed the connection: the error says what may help.
    fake = await serve(bundle, client_ca=bundle.ca_cert.read_bytes())
    credentials = ClientCredentials(ca_file=str(bundle.ca_cert))
    async with Client(fake.address, credentials=credentials, timeout_s=0.5, retry_policy=FAST_RETRIES) as api:
        with pytest.raises(Unavailable, match="give --client-certificate and --client-key"):
            await api.list("pods")


async def test_plaintext_to_a_tls_server_suggests_a_ca(bundle: Bundle, serve: Serve) -> None:
    fake = await serve(bundle)
    async with Client(fake.address, timeout_s=0.5, retry_policy=FAST_RETRIES) as api:
        with pytest.raises(Unavailable, match="if the server serves TLS, give --certificate-authority"):
            await api.list("pods")


async def test_a_client_certificate_from_another_ca_is_refused_at_once_saying_why(
    bundle: Bundle, other_bundle: Bundle, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = await serve(bundle, client_ca=bundle.ca_cert.read_bytes())
    examined: list[str] = []

    async def counted(address: str, err: grpc.aio.AioRpcError, credentials: ClientCredentials) -> str | None:
        examined.append(address)
        return await refused_client(address, err, credentials)

    monkeypatch.setattr("cluster.client.client.refused_client", counted)
    foreign = ClientCredentials(ca_file=str(bundle.ca_cert), client_cert_file=cert(other_bundle),
                                client_key_file=key(other_bundle))
    # A long deadline: a retried failure would be examined again and again within it.
    async with Client(fake.address, credentials=foreign, timeout_s=30.0, retry_policy=FAST_RETRIES) as api:
        with pytest.raises(TlsError) as caught:
            await api.list("pods")
    assert caught.value.message == (
        f"the API server at {fake.address} closed the connection right after the TLS handshake: it most "
        f"likely refused the client certificate (--client-certificate {cert(other_bundle)}): is it signed by "
        "the CA the server trusts (its --client-ca-file)?"
    )
    assert examined == [fake.address]  # one attempt, not retried


async def test_the_probe_tells_a_refused_client_from_an_accepted_one(
    bundle: Bundle, other_bundle: Bundle, serve: Serve
) -> None:
    fake = await serve(bundle, client_ca=bundle.ca_cert.read_bytes())
    accepted = ClientCredentials(ca_file=str(bundle.ca_cert), client_cert_file=cert(bundle),
                                 client_key_file=key(bundle))
    foreign = ClientCredentials(ca_file=str(bundle.ca_cert), client_cert_file=cert(other_bundle),
                                client_key_file=key(other_bundle))
    assert not await closes_after_handshake(fake.address, accepted)
    assert await closes_after_handshake(fake.address, foreign)
    assert await closes_after_handshake(fake.address, ClientCredentials(ca_file=str(bundle.ca_cert)))


async def test_a_connection_dropped_before_any_handshake_is_no_refused_certificate(bundle: Bundle) -> None:
    # A load balancer without a backend accepts and drops connections: worth a retry, no certificate to fix.
    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    listener = await asyncio.start_server(drop, "127.0.0.1", 0)
    try:
        address = f"127.0.0.1:{listener.sockets[0].getsockname()[1]}"
        credentials = ClientCredentials(ca_file=str(bundle.ca_cert), client_cert_file=cert(bundle),
                                        client_key_file=key(bundle))
        assert not await closes_after_handshake(address, credentials)
    finally:
        listener.close()
        await listener.wait_closed()
