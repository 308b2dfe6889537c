"""Defaults and strategies as plain functions: what a create, update or status update stores."""

from __future__ import annotations

import random

import pytest
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, objects_pb2
from cluster.api.kinds import LEASE, NODE, POD, PRIORITY_CLASS, kind_of
from cluster.apiserver import defaults, strategy
from cluster.apiserver.registry import strategy_of


def apply_defaults(obj: Message) -> None:
    """The defaults of ``obj``'s kind, as its registry module declares them."""
    defaults = strategy_of(kind_of(obj)).defaults
    if defaults is not None:
        defaults(obj)


NOW = Timestamp(seconds=1_700_000_000)


def _container(image: str, **resources: dict[str, str]) -> objects_pb2.Container:
    container = objects_pb2.Container(name="c", image=image)
    for field, values in resources.items():
        getattr(container.resources, field).update(values)
    return container


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry.local:5000/nginx", "Always"),
        ("registry.local:5000/nginx:1.25", "IfNotPresent"),
        ("nginx@sha256:abcd", "IfNotPresent"),
    ],
    ids=["no-tag", "latest", "tag", "registry-port-no-tag", "registry-port-tag", "digest"],
)
def test_image_pull_policy_default(image: str, policy: str) -> None:
    container = _container(image)
    defaults.default_container(container)
    assert container.image_pull_policy == policy


def test_requests_default_to_limits_per_resource() -> None:
    container = _container(
        "nginx", limits={"cpu": "1", "memory": "1Gi", "example.com/gpu": "2"}, requests={"cpu": "250m"}
    )
    defaults.default_container(container)
    assert dict(container.resources.requests) == {"cpu": "250m", "memory": "1Gi", "example.com/gpu": "2"}


def test_pod_spec_defaults_keep_given_values() -> None:
    spec = objects_pb2.PodSpec(scheduler_name="my-scheduler", restart_policy="Never")
    spec.termination_grace_period_seconds = 0
    spec.containers.append(_container("nginx:1", limits={}))
    spec.containers[0].ports.add(container_port=80)
    spec.containers[0].ports.add(container_port=53, protocol="UDP")
    defaults.default_pod_spec(spec)
    assert (spec.scheduler_name, spec.restart_policy, spec.termination_grace_period_seconds) == (
        "my-scheduler", "Never", 0
    )
    assert [port.protocol for port in spec.containers[0].ports] == ["TCP", "UDP"]


def test_node_allocatable_defaults_to_capacity_only_when_absent() -> None:
    node = objects_pb2.Node()
    node.status.capacity.update({"cpu": "4", "pods": "110"})
    apply_defaults(node)
    assert dict(node.status.allocatable) == {"cpu": "4", "pods": "110"}
    node.status.allocatable["cpu"] = "3500m"
    apply_defaults(node)
    assert node.status.allocatable["cpu"] == "3500m"


def test_priority_class_preemption_policy_default() -> None:
    pc = objects_pb2.PriorityClass()
    apply_defaults(pc)
    assert pc.preemption_policy == "PreemptLowerPriority"
    never = objects_pb2.PriorityClass(preemption_policy="Never")
    apply_defaults(never)
    assert never.preemption_policy == "Never"


def test_create_of_a_pod_resets_status_to_pending() -> None:
    pod = objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name="web"))
    pod.status.phase = "Running"
    pod.status.nominated_node_name = "n1"
    strategy.prepare_for_create(POD, pod, NOW, random.Random(0))
    assert pod.status == objects_pb2.PodStatus(phase="Pending")
    assert pod.metadata.namespace == "default" and pod.metadata.generation == 1
    assert pod.metadata.creation_timestamp == NOW


def test_create_of_a_cluster_scoped_object_clears_the_namespace() -> None:
    node = objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name="n1", namespace="default"))
    strategy.prepare_for_create(NODE, node, NOW, random.Random(0))
    assert node.metadata.namespace == ""
    assert (node.api_version, node.kind) == ("v1", "Node")


def test_generation_moves_only_with_the_desired_state() -> None:
    old = objects_pb2.Lease(
        metadata=objects_pb2.ObjectMeta(name="l", namespace="default", generation=3, resource_version="7")
    )
    old.spec.holder_identity = "a"
    same = objects_pb2.Lease()
    same.CopyFrom(old)
    same.metadata.labels["x"] = "y"
    strategy.prepare_for_update(LEASE, same, old)
    assert same.metadata.generation == 3
    renewed = objects_pb2.Lease()
    renewed.CopyFrom(old)
    renewed.spec.holder_identity = "b"
    strategy.prepare_for_update(LEASE, renewed, old)
    assert renewed.metadata.generation == 4
    # A kind without a spec: any non-metadata field is its desired state.
    pc = objects_pb2.PriorityClass(metadata=objects_pb2.ObjectMeta(name="p", generation=1), value=5)
    described = objects_pb2.PriorityClass()
    described.CopyFrom(pc)
    described.description = "now described"
    strategy.prepare_for_update(PRIORITY_CLASS, described, pc)
    assert described.metadata.generation == 2


def test_update_keeps_server_owned_metadata() -> None:
    old = objects_pb2.Pod(
        metadata=objects_pb2.ObjectMeta(name="web", namespace="default", uid="u1", generation=1)
    )
    old.metadata.creation_timestamp.CopyFrom(NOW)
    old.metadata.deletion_timestamp.seconds = NOW.seconds + 30
    old.metadata.deletion_grace_period_seconds = 30
    old.status.phase = "Running"
    apply_defaults(old)  # as stored
    new = objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name="web", namespace="", generation=9))
    new.metadata.creation_timestamp.seconds = 1
    new.status.phase = "Failed"
    strategy.prepare_for_update(POD, new, old)
    meta = new.metadata
    assert (meta.uid, meta.namespace, meta.generation) == ("u1", "default", 1)
    assert meta.creation_timestamp == NOW
    assert meta.deletion_timestamp == old.metadata.deletion_timestamp
    assert meta.deletion_grace_period_seconds == 30
    assert new.status.phase == "Running"


def test_status_update_takes_only_the_status() -> None:
    old = objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name="n1", labels={"a": "b"}))
    new = objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name="n1", labels={"a": "changed"}))
    new.spec.unschedulable = True
    new.status.capacity["cpu"] = "8"
    stored = strategy.prepare_for_status_update(NODE, new, old)
    assert stored.metadata.labels["a"] == "b" and not stored.spec.unschedulable
    assert stored.status.capacity["cpu"] == "8"


def test_status_update_of_a_kind_without_status_is_invalid() -> None:
    lease = objects_pb2.Lease(metadata=objects_pb2.ObjectMeta(name="l"))
    with pytest.raises(errors.Invalid, match=r"^Lease has no status: use Update to change it$"):
        strategy.prepare_for_status_update(LEASE, lease, lease)
