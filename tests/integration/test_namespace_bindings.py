"""Namespaces against a real `podsched apiserver` process with tokens: a `client` (the built-in
`podsched:clients` group) runs pods in its own namespaces but can neither create nor delete pods in
kube-system, nor use system-node-critical (whose priority would preempt everyone else's pods) where no
quota opens it; a policy file's binding that names namespaces holds only there."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, kinds
from cluster.client.credentials import ClientCredentials
from cluster.launcher.process import ApiServerProcess
from tests.builders import pod

ADMIN, CLIENT, TEAM = "admin-token", "client-token", "team-token"
TOKENS = f'{ADMIN},ada,1,"system:masters"\n{CLIENT},cleo,2,"podsched:clients"\n{TEAM},tess,3\n'
POLICY = "bindings:\n  - {role: client, users: [tess], namespaces: [team-a]}\n"


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return ClientCredentials(token=token).metadata()


def _pod(namespace: str, name: str, priority_class: str = "") -> apiserver_pb2.Object:
    return kinds.wrap(pod(name, namespace, image="busybox", priority_class=priority_class))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory: Path = tmp_path_factory.mktemp("namespaces")
    (directory / "tokens.csv").write_text(TOKENS)
    (directory / "policy.yaml").write_text(POLICY)
    process = ApiServerProcess(
        ["--data-dir", str(directory / "data")],
        extra_args=[
            "--token-auth-file", str(directory / "tokens.csv"),
            "--authorization-policy-file", str(directory / "policy.yaml"), "--controllers", "none",
        ],
    )
    with process:
        yield process


@pytest.fixture
async def stub(server: ApiServerProcess) -> AsyncIterator[apiserver_pb2_grpc.ApiServerStub]:
    async with grpc.aio.insecure_channel(server.address) as channel:
        yield apiserver_pb2_grpc.ApiServerStub(channel)


async def _refused(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    return raised.value


async def test_a_client_runs_pods_in_its_namespace_but_not_in_kube_system(
    stub: apiserver_pb2_grpc.ApiServerStub,
) -> None:
    created = await stub.Create(
        apiserver_pb2.CreateRequest(object=_pod("team-x", "web")), metadata=_md(CLIENT)
    )
    assert created.pod.metadata.namespace == "team-x"
    await stub.Delete(
        apiserver_pb2.DeleteRequest(kind="pods", namespace="team-x", name="web"), metadata=_md(CLIENT)
    )

    refusal = await _refused(
        stub.Create(apiserver_pb2.CreateRequest(object=_pod("kube-system", "intruder")), metadata=_md(CLIENT))
    )
    assert refusal.code() == grpc.StatusCode.PERMISSION_DENIED
    assert refusal.details() == (
        'pods is forbidden: User "cleo" cannot create resource "pods" '
        'in API group "" in the namespace "kube-system"'
    )

    await stub.Create(apiserver_pb2.CreateRequest(object=_pod("kube-system", "dns")), metadata=_md(ADMIN))
    refusal = await _refused(stub.Delete(
        apiserver_pb2.DeleteRequest(kind="pods", namespace="kube-system", name="dns"), metadata=_md(CLIENT)
    ))
    assert refusal.code() == grpc.StatusCode.PERMISSION_DENIED
    assert refusal.details() == (
        'pods "dns" is forbidden: User "cleo" cannot delete resource "pods" '
        'in API group "" in the namespace "kube-system"'
    )
    still = await stub.Get(apiserver_pb2.GetRequest(kind="pods", namespace="kube-system", name="dns"),
                           metadata=_md(ADMIN))
    assert not still.pod.metadata.HasField("deletion_timestamp")


async def test_a_policy_binding_naming_a_namespace_holds_only_there(
    stub: apiserver_pb2_grpc.ApiServerStub,
) -> None:
    await stub.Create(apiserver_pb2.CreateRequest(object=_pod("team-a", "app")), metadata=_md(TEAM))
    refusal = await _refused(
        stub.Create(apiserver_pb2.CreateRequest(object=_pod("default", "app")), metadata=_md(TEAM))
    )
    assert refusal.details() == (
        'pods is forbidden: User "tess" cannot create resource "pods" '
        'in API group "" in the namespace "default"'
    )
    refusal = await _refused(stub.List(apiserver_pb2.ListRequest(kind="nodes"), metadata=_md(TEAM)))
    assert refusal.details() == (
        'nodes is forbidden: User "tess" cannot list resource "nodes" in API group "" at the cluster scope'
    )


async def test_a_client_cannot_preempt_with_a_system_priority_class(
    stub: apiserver_pb2_grpc.ApiServerStub,
) -> None:
    for priority_class in ("system-node-critical", "system-cluster-critical"):
        refusal = await _refused(stub.Create(
            apiserver_pb2.CreateRequest(object=_pod("team-x", "vip", priority_class)), metadata=_md(CLIENT)
        ))
        assert refusal.code() == grpc.StatusCode.FAILED_PRECONDITION  # admission's Forbidden
        assert refusal.details() == (
            'pods "vip" is forbidden: insufficient quota to match these scopes: '
            "[{PriorityClass In [system-node-critical system-cluster-critical]}]"
        )
    refusal = await _refused(stub.Create(
        apiserver_pb2.CreateRequest(object=_pod("kube-system", "vip", "system-node-critical")),
        metadata=_md(CLIENT),
    ))
    assert refusal.details() == (
        'pods is forbidden: User "cleo" cannot create resource "pods" '
        'in API group "" in the namespace "kube-system"'
    )
    listed = await stub.List(apiserver_pb2.ListRequest(kind="pods"), metadata=_md(ADMIN))
    assert not any(item.pod.metadata.name == "vip" for item in listed.items)
