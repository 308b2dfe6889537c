"""Authentication and authorization of a real `podsched apiserver` process, over real gRPC:

* no credentials, or a token the server does not know → UNAUTHENTICATED, for every RPC;
* each built-in role can do exactly its job, and gets PERMISSION_DENIED naming the verb and resource
  otherwise: every RPC on every kind for every role (writes are dry runs or address missing objects, so
  a permitted call ends in NotFound or Invalid, after authorization, and the store stays as it was);
* a policy file's own role and binding; the health service open to all, reflection only with a token;
* a server without authentication serves loopback only and says so.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from cluster.api import apiserver_pb2, apiserver_pb2_grpc, kinds, objects_pb2
from cluster.api.kinds import KINDS, POD, POD_GROUP, Kind
from cluster.apiserver.server import SERVICE_NAME
from cluster.client.credentials import ClientCredentials
from cluster.launcher.process import ApiServerProcess, die_with_parent_prefix
from tests.integration.helpers import REPO

#: One token per built-in role (by the group bound to it), one for a user of the policy file's own role,
#: and one for a user bound to nothing.
TOKENS = {
    "admin": ("admin-token", "ada", "system:masters"),
    "scheduler": ("scheduler-token", "sam", "podsched:schedulers"),
    "client": ("client-token", "cleo", "podsched:clients"),
    "readonly": ("readonly-token", "rae", "podsched:readonly"),
    "lease-keeper": ("lease-keeper-token", "pat", ""),
    "nobody": ("nobody-token", "nemo", ""),
}
POLICY = """
roles:
  - name: lease-keeper
    rules:
      - {verbs: [get, update], resources: [leases], resourceNames: [kube-scheduler]}
bindings:
  - {role: lease-keeper, users: [pat]}
"""
READ = ("get", "list", "watch")
ALL_RESOURCES = [kind.plural for kind in KINDS]
#: What each identity may do, as "verb resource[/subresource]" over the calls below; the rest is denied.
ALLOWED: dict[str, set[str]] = {
    "admin": {"*"},
    "scheduler": {
        *(f"{verb} {resource}" for verb in READ for resource in ALL_RESOURCES),
        "create pods/binding", "update pods/status", "update podgroups/status", "delete pods",
        # DynamicResources: claims for extended resources, and the allocation and reservedFor it writes.
        "create resourceclaims", "delete resourceclaims", "update resourceclaims/status",
        "create events", "update events", "create leases", "update leases",
        "create leasecandidates", "update leasecandidates", "delete leasecandidates",
        # VolumeBinding's PreBind: a volume's claimRef, a claim's selected-node annotation.
        "update persistentvolumes", "update persistentvolumeclaims",
    },
    "client": {
        "create pods", "delete pods", "create podgroups", "delete podgroups", "create compositepodgroups",
        "delete compositepodgroups",
        *(f"{verb} {r}" for verb in READ
          for r in ("pods", "nodes", "podgroups", "compositepodgroups", "runtimeclasses", "deviceclasses",
                    "resourceslices", "storageclasses", "persistentvolumes")),
        *(f"{verb} {r}" for verb in ("create", "update", "delete", *READ)
          for r in ("services", "replicasets", "statefulsets", "replicationcontrollers", "resourceclaims",
                    "resourceclaimtemplates", "workloads", "persistentvolumeclaims")),
    },
    "readonly": {f"{verb} {resource}" for verb in READ for resource in ALL_RESOURCES},
    # Its role names only the lease kube-scheduler, and these calls address other objects.
    "lease-keeper": set(),
    "nobody": set(),
}
NAMESPACE = "auth-test"
#: How long a permitted watch may stay silent before it counts as open (the kinds watched have objects).
WATCH_OPEN_S = 2.0


def _metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return ClientCredentials(token=token or "").metadata()


def _object(kind: Kind, name: str) -> apiserver_pb2.Object:
    obj = kind.message()
    obj.metadata.name = name  # type: ignore[attr-defined]
    if kind.namespaced:
        obj.metadata.namespace = NAMESPACE  # type: ignore[attr-defined]
    return kinds.wrap(obj)


Call = Callable[[apiserver_pb2_grpc.ApiServerStub, tuple[tuple[str, str], ...]], Awaitable[object]]


async def _watch_opens(
    stub: apiserver_pb2_grpc.ApiServerStub, md: tuple[tuple[str, str], ...], kind: str
) -> None:
    """Open a watch and wait for its first event; a permitted watch of a kind with objects gets one."""
    stream = stub.Watch(apiserver_pb2.WatchRequest(kind=kind, namespace=NAMESPACE), metadata=md)
    try:
        async with asyncio.timeout(WATCH_OPEN_S):
            await stream.read()
    finally:
        stream.cancel()


def _calls() -> dict[str, Call]:
    """Every RPC on every kind, by the "verb resource" it asks for; none changes the store."""
    calls: dict[str, Call] = {}
    for kind in KINDS:
        plural, missing = kind.plural, "missing"
        calls[f"create {plural}"] = lambda s, md, k=kind: s.Create(
            apiserver_pb2.CreateRequest(object=_object(k, "created"), dry_run=True), metadata=md
        )
        calls[f"get {plural}"] = lambda s, md, k=kind, n=missing: s.Get(
            apiserver_pb2.GetRequest(kind=k.plural, namespace=NAMESPACE, name=n), metadata=md
        )
        calls[f"list {plural}"] = lambda s, md, k=kind: s.List(
            apiserver_pb2.ListRequest(kind=k.plural, namespace=NAMESPACE), metadata=md
        )
        calls[f"update {plural}"] = lambda s, md, k=kind, n=missing: s.Update(
            apiserver_pb2.UpdateRequest(object=_object(k, n), dry_run=True), metadata=md
        )
        calls[f"delete {plural}"] = lambda s, md, k=kind, n=missing: s.Delete(
            apiserver_pb2.DeleteRequest(kind=k.plural, namespace=NAMESPACE, name=n, dry_run=True),
            metadata=md,
        )
    calls["update pods/status"] = lambda s, md: s.UpdateStatus(
        apiserver_pb2.UpdateRequest(object=_object(POD, "missing"), dry_run=True), metadata=md
    )
    calls["update podgroups/status"] = lambda s, md: s.UpdateStatus(
        apiserver_pb2.UpdateRequest(object=_object(POD_GROUP, "missing"), dry_run=True), metadata=md
    )
    binding = objects_pb2.Binding()
    binding.metadata.namespace, binding.metadata.name, binding.target.name = NAMESPACE, "missing", "n1"
    calls["create pods/binding"] = lambda s, md: s.Bind(
        apiserver_pb2.BindRequest(binding=binding), metadata=md
    )
    calls["watch pods"] = lambda s, md: _watch_opens(s, md, "pods")
    calls["watch nodes"] = lambda s, md: _watch_opens(s, md, "nodes")
    return calls


CALLS = _calls()


async def _outcome(
    call: Call, stub: apiserver_pb2_grpc.ApiServerStub, token: str | None
) -> grpc.aio.AioRpcError | None:
    """The call's refusal by authentication or authorization, or None if it got past both."""
    try:
        await call(stub, _metadata(token))
    except grpc.aio.AioRpcError as exc:
        if exc.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            return exc
    return None


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("auth")
    tokens = directory / "tokens.csv"
    tokens.write_text(
        "".join(f'{token},{user},uid-{user},"{group}"\n' for token, user, group in TOKENS.values())
    )
    policy = directory / "policy.yaml"
    policy.write_text(POLICY)
    return {"dir": directory, "tokens": tokens, "policy": policy}


@pytest.fixture(scope="module")
def secured(files: dict[str, Path]) -> Iterator[ApiServerProcess]:
    server = ApiServerProcess(
        ["--data-dir", str(files["dir"] / "data")],
        extra_args=[
            "--token-auth-file", str(files["tokens"]), "--authorization-policy-file", str(files["policy"]),
            "--controllers", "none",
        ],
    )
    with server:
        yield server


@pytest.fixture
async def stub(secured: ApiServerProcess) -> AsyncIterator[apiserver_pb2_grpc.ApiServerStub]:
    channel = grpc.aio.insecure_channel(secured.address)
    stub = apiserver_pb2_grpc.ApiServerStub(channel)
    admin = _metadata(TOKENS["admin"][0])
    for kind in ("pods", "nodes"):  # something for the watches to deliver
        obj = _object(kinds.kind_by_name(kind), "existing")
        if kind == "pods":
            obj.pod.spec.containers.add(name="c", image="busybox")
        try:
            await stub.Create(apiserver_pb2.CreateRequest(object=obj), metadata=admin)
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == grpc.StatusCode.ALREADY_EXISTS, exc.details()
    yield stub
    await channel.close()


@pytest.mark.parametrize("token", [None, "not-a-token"], ids=["no-credentials", "unknown-token"])
async def test_every_rpc_refuses_a_caller_without_valid_credentials(
    stub: apiserver_pb2_grpc.ApiServerStub, token: str | None
) -> None:
    for asked, call in CALLS.items():
        refusal = await _outcome(call, stub, token)
        assert refusal is not None, f"{asked} was let through"
        assert (refusal.code(), refusal.details()) == (grpc.StatusCode.UNAUTHENTICATED, "Unauthorized"), asked


@pytest.mark.parametrize("identity", sorted(TOKENS))
async def test_each_identity_can_do_exactly_its_job(
    stub: apiserver_pb2_grpc.ApiServerStub, identity: str
) -> None:
    token, user, _ = TOKENS[identity]
    allowed = ALLOWED[identity]
    for asked, call in CALLS.items():
        refusal = await _outcome(call, stub, token)
        if "*" in allowed or asked in allowed:
            assert refusal is None, f"{identity} may {asked}, got {refusal and refusal.details()}"
            continue
        assert refusal is not None, f"{identity} may not {asked}, yet it got through"
        verb, resource = asked.split(" ")
        assert refusal.code() == grpc.StatusCode.PERMISSION_DENIED, asked
        assert f'User "{user}" cannot {verb} resource "{resource}"' in refusal.details(), refusal.details()


async def test_a_denial_reads_as_kube_apiserver_words_it(stub: apiserver_pb2_grpc.ApiServerStub) -> None:
    refusal = await _outcome(CALLS["delete pods"], stub, TOKENS["readonly"][0])
    assert refusal is not None
    assert refusal.details() == (
        f'pods "missing" is forbidden: User "rae" cannot delete resource "pods" '
        f'in API group "" in the namespace "{NAMESPACE}"'
    )
    refusal = await _outcome(CALLS["create pods/binding"], stub, TOKENS["client"][0])
    assert refusal is not None
    assert refusal.details() == (
        f'pods "missing" is forbidden: User "cleo" cannot create resource "pods/binding" '
        f'in API group "" in the namespace "{NAMESPACE}"'
    )


async def test_a_policy_role_limited_to_one_name_allows_only_that_object(
    stub: apiserver_pb2_grpc.ApiServerStub,
) -> None:
    md = _metadata(TOKENS["lease-keeper"][0])
    outcomes = (("kube-scheduler", grpc.StatusCode.NOT_FOUND), ("other", grpc.StatusCode.PERMISSION_DENIED))
    for name, expected in outcomes:
        request = apiserver_pb2.GetRequest(kind="leases", namespace="kube-system", name=name)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Get(request, metadata=md)
        assert raised.value.code() == expected, raised.value.details()


async def test_health_is_open_to_all_and_reflection_needs_a_token(secured: ApiServerProcess) -> None:
    async with grpc.aio.insecure_channel(secured.address) as channel:
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        # The server refuses before it reads a request: send none, since a request written after the
        # refusal makes grpc.aio's client report its own INTERNAL "Failed execute_batch" instead.
        unauthenticated = reflection.ServerReflectionInfo()
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await unauthenticated.read()
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        responses = [
            response async for response in reflection.ServerReflectionInfo(
                iter([request]), metadata=_metadata(TOKENS["nobody"][0])
            )
        ]
        services = {service.name for service in responses[0].list_services_response.service}
        assert SERVICE_NAME in services


def test_without_authentication_the_server_serves_loopback_only_and_says_so(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [
            *die_with_parent_prefix(), sys.executable, "-m", "cluster.cli", "apiserver",
            "--listen", "0.0.0.0:0",
            "--data-dir", str(tmp_path / "data"), "--controllers", "none",
        ],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    lines: list[str] = []
    try:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if line.startswith("podsched apiserver serving on"):
                break
    finally:
        process.terminate()
        process.wait(10)
    output = "".join(lines)
    assert "podsched apiserver serving on 127.0.0.1:" in output, output
    assert "no authentication is configured" in output, output
    warning = r"every caller is an admin: serving on 127\.0\.0\.1:\d+, loopback only, not on 0\.0\.0\.0:0"
    assert re.search(warning, output), output
