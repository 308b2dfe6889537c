"""Hostile input to every RPC of a real `podsched apiserver` process, over a raw gRPC channel:
random bytes as the request body, random well-typed requests (hostile strings, extreme numbers, broken
timestamps, random selectors, resourceVersions, continue tokens and fences) and mutations of valid
objects.

Every call must end with a status a caller can act on (fuzzing.ALLOWED_CODES: never INTERNAL or
UNKNOWN), with a message, within the per-call timeout; and a rejected call must leave the store as it
was: its revision (a List's resourceVersion) is the same before and after. The examples run one at a
time on a server of the module's own with no controllers, so nothing else writes meanwhile; an
accepted delete that only marks a pod is finished at once (grace 0), so that the server's graceful
deletion never writes during a later example.

Each ``@example`` is a request that once failed one of these rules, kept as a regression.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import example, given
from hypothesis import strategies as st

from cluster.api import apiserver_pb2, kinds, objects_pb2
from cluster.apiserver import continuation
from cluster.launcher.process import ApiServerProcess
from tests.builders import IMAGE, ROOMY, node, pod
from tests.integration.conftest import own_apiserver
from tests.integration.fuzzing import (
    REQUEST_TYPES,
    UNARY_METHODS,
    RawApi,
    call_checked,
    fuzz_settings,
    messages,
    mutated,
)

#: A call that takes longer is hung: nothing here is slow.
CALL_TIMEOUT_S = 20.0


def _node() -> objects_pb2.Node:
    return node("node-1", labels={"kubernetes.io/hostname": "node-1"}, allocatable=ROOMY, capacity=ROOMY,
                ready="True")


def _priority_class() -> objects_pb2.PriorityClass:
    return objects_pb2.PriorityClass(metadata=objects_pb2.ObjectMeta(name="fuzz"), value=1000)


def _pdb() -> objects_pb2.PodDisruptionBudget:
    pdb = objects_pb2.PodDisruptionBudget(metadata=objects_pb2.ObjectMeta(name="web", namespace="default"))
    pdb.spec.min_available.number_value = 1
    pdb.spec.selector.match_labels["app"] = "web"
    return pdb


def _lease() -> objects_pb2.Lease:
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name="kube-scheduler", namespace="kube-system"))
    lease.spec.holder_identity = "fuzz"
    lease.spec.lease_duration_seconds = 15
    return lease


def _event() -> objects_pb2.Event:
    event = objects_pb2.Event(metadata=objects_pb2.ObjectMeta(name="web", namespace="default"))
    event.involved_object.kind = "Pod"
    event.involved_object.name = "web"
    event.reason = "Fuzzed"
    event.type = "Normal"
    return event


#: One valid object of each kind, named as the strategies' meaningful strings name things, so that random
#: Gets, Updates, Deletes and Binds find them.
SEEDS: tuple[Message, ...] = (
    pod("web", "default", spec={"terminationGracePeriodSeconds": 0}, labels={"app": "web"}, image=IMAGE,
        cpu="100m"),
    _node(), _priority_class(), _pdb(), _lease(), _event(),
)


@pytest.fixture(scope="module")
def server(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    # No controllers and no compaction while the module runs: nothing but the examples writes.
    with own_apiserver(
        backend, tmp_path_factory.mktemp("fuzz-rpc"), name_prefix="fuzz",
        extra_args=["--controllers", "none", "--compaction-interval", "1h"],
    ) as process:
        yield process
        assert process.running(), process.log()
        assert "Traceback" not in process.log(), process.log()


@pytest.fixture(scope="module")
def api(server: ApiServerProcess) -> Iterator[RawApi]:
    raw = RawApi(server.address, CALL_TIMEOUT_S)
    for obj in SEEDS:
        created = raw.unary("Create", apiserver_pb2.CreateRequest(object=kinds.wrap(obj)).SerializeToString())
        assert created.code is grpc.StatusCode.OK, created
    yield raw
    # Alive and answering after everything it was sent.
    assert raw.revision() > 0
    raw.close()


# ------------------------------------------------------------------------------------ the properties


def _serialized(cls: type[Message]) -> st.SearchStrategy[bytes]:
    return messages(cls).map(lambda msg: msg.SerializeToString())


def _damaged(cls: type[Message]) -> st.SearchStrategy[bytes]:
    """A real request's bytes, cut short or with bytes changed: mostly malformed wire data."""

    def damage(data: bytes, cut: int, flips: list[tuple[int, int]]) -> bytes:
        buffer = bytearray(data[: max(1, len(data) - cut)] if data else b"\xff")
        for position, value in flips:
            buffer[position % len(buffer)] = value
        return bytes(buffer)

    return st.builds(
        damage, _serialized(cls), st.integers(0, 8),
        st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=3),
    )


METHODS = (*UNARY_METHODS, "Watch")


@fuzz_settings(max_examples=120)
@given(
    method=st.sampled_from(METHODS),
    body=st.binary(max_size=200) | st.sampled_from(list(REQUEST_TYPES.values())).flatmap(_damaged),
)
# Not a protobuf message at all: grpc.aio answered UNKNOWN ("Unexpected DecodeError") and logged a traceback.
@example(method="Create", body=b"\x8a\x9f\xc9\x9cTu\x99\x07\xcd:\xa2-\x8c\x95.\xdc\x17\xcc\x8d\xcc")
@example(method="Watch", body=b"x\xaa5\xecA")
def test_bytes_that_are_no_request_are_refused(api: RawApi, method: str, body: bytes) -> None:
    call_checked(api, method, body)


def _requests(method: str) -> st.SearchStrategy[tuple[str, Message]]:
    return messages(REQUEST_TYPES[method]).map(lambda request: (method, request))


@fuzz_settings(max_examples=160)
@given(call=st.sampled_from(METHODS).flatmap(_requests))
# A limit of 2^63-1 overflowed sqlite's integer: INTERNAL.
@example(call=("List", apiserver_pb2.ListRequest(kind="Pod", limit=2**63 - 1)))
# A 2 MiB name echoed in "not found" overflowed the client's trailer limit: the client saw
# RESOURCE_EXHAUSTED "metadata size exceeds" and the error was lost.
# On etcd the same name became a store key past etcd's 2 MiB request limit: INTERNAL StoreError. So did a
# Bind's node name, a fence's lease name and a continue token's start key, which no verb checked.
@example(call=("Get", apiserver_pb2.GetRequest(kind="Pod", name="y" * (2 * 1024 * 1024))))
@example(call=("Bind", apiserver_pb2.BindRequest(binding=objects_pb2.Binding(
    metadata=objects_pb2.ObjectMeta(name="web"), target=objects_pb2.ObjectReference(name="n" * 2_100_000),
))))
@example(call=("Delete", apiserver_pb2.DeleteRequest(kind="Pod", name="web", fence=apiserver_pb2.Fence(
    lease_namespace="kube-system", lease_name="l" * 2_100_000, holder_identity="fuzz", token=1,
))))
@example(call=("List", apiserver_pb2.ListRequest(
    kind="Node", continue_token=continuation.encode(1, "/nodes/" + "k" * 2_100_000, "/nodes/"),
)))
def test_random_requests_end_in_a_clear_status(api: RawApi, call: tuple[str, Message]) -> None:
    method, request = call
    call_checked(api, method, request.SerializeToString())


def _update_request(obj: Message, dry_run: bool) -> bytes:
    return apiserver_pb2.UpdateRequest(object=kinds.wrap(obj), dry_run=dry_run).SerializeToString()


_OBJECT_REQUESTS = {
    "Create": lambda obj, dry_run: apiserver_pb2.CreateRequest(
        object=kinds.wrap(obj), dry_run=dry_run
    ).SerializeToString(),
    "Update": _update_request,
    "UpdateStatus": _update_request,
}


@pytest.mark.parametrize("method", sorted(_OBJECT_REQUESTS))
@fuzz_settings(max_examples=80)
@given(data=st.data())
def test_mutated_objects_end_in_a_clear_status(api: RawApi, method: str, data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(SEEDS), label="kind")
    obj = data.draw(mutated(seed), label="object")
    call_checked(api, method, _OBJECT_REQUESTS[method](obj, data.draw(st.booleans(), label="dry_run")))


def _binding() -> objects_pb2.Binding:
    binding = objects_pb2.Binding(metadata=objects_pb2.ObjectMeta(name="web", namespace="default"))
    binding.target.kind = "Node"
    binding.target.name = "node-1"
    return binding


@fuzz_settings(max_examples=60)
@given(binding=mutated(_binding()), fence=st.none() | messages(apiserver_pb2.Fence))
def test_mutated_bindings_end_in_a_clear_status(
    api: RawApi, binding: objects_pb2.Binding, fence: apiserver_pb2.Fence | None
) -> None:
    request = apiserver_pb2.BindRequest(binding=binding)
    if fence is not None:
        request.fence.CopyFrom(fence)
    call_checked(api, "Bind", request.SerializeToString())


@fuzz_settings(max_examples=60)
@given(
    bindings=st.lists(mutated(_binding()), max_size=4),
    fence=st.none() | messages(apiserver_pb2.Fence),
)
def test_mutated_group_bindings_end_in_a_clear_status(
    api: RawApi, bindings: list[objects_pb2.Binding], fence: apiserver_pb2.Fence | None
) -> None:
    request = apiserver_pb2.BindGroupRequest(bindings=bindings)
    if fence is not None:
        request.fence.CopyFrom(fence)
    call_checked(api, "BindGroup", request.SerializeToString())


def test_the_server_is_healthy_and_serves_a_valid_request(server: ApiServerProcess, api: RawApi) -> None:
    with grpc.insecure_channel(server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    after = pod("after-the-fuzz", "default", spec={"terminationGracePeriodSeconds": 0}, labels={"app": "web"},
                image=IMAGE, cpu="100m")
    created = api.unary("Create", apiserver_pb2.CreateRequest(object=kinds.wrap(after)).SerializeToString())
    assert created.code is grpc.StatusCode.OK, created
    listed = api.unary("List", apiserver_pb2.ListRequest(kind="Pod", namespace="default").SerializeToString())
    assert listed.code is grpc.StatusCode.OK, listed
