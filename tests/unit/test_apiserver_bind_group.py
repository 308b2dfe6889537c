"""BindGroup through the real service: all pods bound at one resourceVersion, or none, and a clear error
naming what is wrong."""

from __future__ import annotations

import pytest

from cluster.api import apiserver_pb2, errors, objects_pb2
from cluster.apiserver.binding import MAX_GROUP_BINDINGS
from tests.unit.framework_fakes import GroupBindingClient
from tests.unit.test_apiserver_server import Harness, api, make_node, make_pod

__all__ = ["api"]


def _binding(name: str, node: str, namespace: str = "") -> objects_pb2.Binding:
    return objects_pb2.Binding(
        metadata=objects_pb2.ObjectMeta(name=name, namespace=namespace),
        target=objects_pb2.ObjectReference(name=node),
    )


async def _group(api: Harness, *bindings: objects_pb2.Binding) -> list[objects_pb2.Pod]:
    response = await api.call("BindGroup", apiserver_pb2.BindGroupRequest(bindings=bindings))
    return list(response.pods)


async def _nodes_of(api: Harness, *names: str) -> list[str]:
    return [(await api.get("Pod", name)).spec.node_name for name in names]


async def test_a_group_is_bound_at_one_resource_version(api: Harness) -> None:
    await api.create(make_node("n1"))
    await api.create(make_node("n2"))
    for name in ("w-0", "w-1", "w-2"):
        await api.create(make_pod(name))

    bound = await _group(api, _binding("w-0", "n1"), _binding("w-1", "n2"), _binding("w-2", "n1"))

    assert [(p.metadata.name, p.spec.node_name, p.status.phase) for p in bound] == [
        ("w-0", "n1", "Running"), ("w-1", "n2", "Running"), ("w-2", "n1", "Running"),
    ]
    assert len({p.metadata.resource_version for p in bound}) == 1
    for pod in bound:
        assert await api.get("Pod", pod.metadata.name) == pod


@pytest.mark.parametrize("bad", ["bound", "terminating", "missing-pod", "missing-node", "stale-uid"])
async def test_one_pod_that_cannot_be_bound_binds_none(api: Harness, bad: str) -> None:
    await api.create(make_node("n1"))
    for name in ("w-0", "w-1"):
        await api.create(make_pod(name))
    last = _binding("w-2", "n1")
    if bad == "bound":
        await api.create(make_pod("w-2", node_name="n1"))
        expected: type[errors.ApiError] = errors.Conflict
        message = r'^Operation cannot be fulfilled on pods/binding "w-2": pod w-2 is already assigned'
    elif bad == "terminating":
        await api.create(make_pod("w-2", node_name="n1"))
        await api.delete("Pod", "w-2", grace=30)
        expected, message = errors.Conflict, r'"w-2": pod w-2 is being deleted, cannot be assigned to a host$'
    elif bad == "missing-pod":
        expected, message = errors.NotFound, r'^pods "w-2" not found$'
    elif bad == "missing-node":
        await api.create(make_pod("w-2"))
        last = _binding("w-2", "n9")
        expected, message = errors.NotFound, r'^nodes "n9" not found$'
    else:
        await api.create(make_pod("w-2"))
        last.metadata.uid = "other"
        expected = errors.Conflict
        message = r'^Operation cannot be fulfilled on pods "w-2": Precondition failed: UID'

    with pytest.raises(expected, match=message):
        await _group(api, _binding("w-0", "n1"), _binding("w-1", "n1"), last)

    assert await _nodes_of(api, "w-0", "w-1") == ["", ""]


@pytest.mark.parametrize(
    ("bindings", "message"),
    [
        ([], r"^BindGroup is invalid: bindings: Required value: at least one binding$"),
        ([_binding("w-0", "n1"), _binding("", "n1")],
         r"^BindGroup is invalid: bindings\[1\]\.metadata\.name: Required value$"),
        ([_binding("w-0", "")], r"^BindGroup is invalid: bindings\[0\]\.target\.name: Required value$"),
        ([objects_pb2.Binding(metadata=objects_pb2.ObjectMeta(name="w-0"),
                              target=objects_pb2.ObjectReference(kind="Pod", name="n1"))],
         r'^BindGroup is invalid: bindings\[0\]\.target\.kind: Unsupported value: "Pod"'),
        ([_binding("w-0", "n1"), _binding("w-0", "n2", namespace="default")],
         r'^BindGroup is invalid: bindings\[1\]\.metadata\.name: Duplicate value: "default/w-0"$'),
        ([_binding(f"w-{i}", "n1") for i in range(MAX_GROUP_BINDINGS + 1)],
         rf"^BindGroup is invalid: bindings: Too many: {MAX_GROUP_BINDINGS + 1}: must have at most "
         rf"{MAX_GROUP_BINDINGS} items$"),
    ],
    ids=["none", "no-pod-name", "no-node-name", "target-not-a-node", "pod-twice", "too-many"],
)
async def test_bad_groups_are_invalid_and_bind_nothing(
    api: Harness, bindings: list[objects_pb2.Binding], message: str
) -> None:
    await api.create(make_node("n1"))
    await api.create(make_pod("w-0"))
    with pytest.raises(errors.Invalid, match=message):
        await _group(api, *bindings)
    assert await _nodes_of(api, "w-0") == [""]


async def test_the_fake_client_binds_a_group_all_or_nothing() -> None:
    free, taken = make_pod("w-0"), make_pod("w-1", node_name="n1")
    client = GroupBindingClient([free, taken])
    with pytest.raises(errors.Conflict):
        await client.bind_group([("default", "w-0", "n1"), ("default", "w-1", "n2")])
    assert client.pods["default/w-0"].spec.node_name == ""
    client.pods["default/w-2"] = make_pod("w-2")
    bound = await client.bind_group([("default", "w-0", "n1"), ("default", "w-2", "n2")])
    assert [(p.spec.node_name, p.metadata.resource_version) for p in bound] == [("n1", "2"), ("n2", "2")]
