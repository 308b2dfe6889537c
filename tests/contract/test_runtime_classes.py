"""RuntimeClass admission through the API server's verbs, on every store: each refusal in
kube-apiserver's words (plugin/pkg/admission/runtimeclass/admission.go) with nothing stored, each merge
written into the stored pod, and a pod's runtimeClassName and overhead immutable on update."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD
from cluster.apiserver.storage import Storage
from cluster.apiserver.verbs import Verbs
from store.base import Store

NS = "default"


def verbs_on(store: Store) -> Verbs:
    return Verbs(Storage(store))


def runtime_class(name: str = "kata", handler: str = "kata", *, overhead: dict[str, str] | None = None,
                  node_selector: dict[str, str] | None = None,
                  tolerations: list[dict[str, Any]] | None = None) -> objects_pb2.RuntimeClass:
    made = objects_pb2.RuntimeClass(metadata=objects_pb2.ObjectMeta(name=name), handler=handler)
    made.overhead.pod_fixed.update(overhead or {})
    made.scheduling.node_selector.update(node_selector or {})
    made.scheduling.tolerations.extend(objects_pb2.Toleration(**t) for t in tolerations or [])
    return made


def pod(name: str = "p", class_name: str | None = "kata", *, overhead: dict[str, str] | None = None,
        node_selector: dict[str, str] | None = None,
        tolerations: list[dict[str, Any]] | None = None) -> objects_pb2.Pod:
    made = objects_pb2.Pod(metadata=objects_pb2.ObjectMeta(name=name, namespace=NS))
    made.spec.containers.add(name="c", image="busybox")
    if class_name is not None:
        made.spec.runtime_class_name = class_name
    made.spec.overhead.update(overhead or {})
    made.spec.node_selector.update(node_selector or {})
    made.spec.tolerations.extend(objects_pb2.Toleration(**t) for t in tolerations or [])
    return made


TAINT_OK = {"key": "runtime", "operator": "Equal", "value": "kata", "effect": "NoSchedule"}
OWN = {"key": "team", "operator": "Exists", "effect": "NoSchedule"}


async def test_a_pod_gets_the_class_overhead_node_selector_and_tolerations(store: Store) -> None:
    verbs = verbs_on(store)
    await verbs.create(runtime_class(overhead={"cpu": "250m", "memory": "120Mi"},
                                     node_selector={"runtime": "kata"}, tolerations=[TAINT_OK, OWN]))
    created = await verbs.create(pod(node_selector={"zone": "a"}, tolerations=[OWN]))
    assert dict(created.spec.overhead) == {"cpu": "250m", "memory": "120Mi"}
    assert dict(created.spec.node_selector) == {"zone": "a", "runtime": "kata"}
    assert [t.key for t in created.spec.tolerations] == ["team", "runtime"]
    assert await verbs.registry.get(POD, NS, "p") == created


async def test_a_pod_may_carry_its_class_overhead(store: Store) -> None:
    verbs = verbs_on(store)
    await verbs.create(runtime_class(overhead={"cpu": "250m"}))
    created = await verbs.create(pod(overhead={"cpu": "0.25"}))
    assert dict(created.spec.overhead) == {"cpu": "250m"}


@pytest.mark.parametrize(
    ("rc", "bad", "reason"),
    [
        (None, pod(class_name="missing"), 'pod rejected: RuntimeClass "missing" not found'),
        (runtime_class(overhead={"cpu": "250m"}), pod(overhead={"cpu": "300m"}),
         "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
        (runtime_class(), pod(overhead={"cpu": "300m"}),
         "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
        (None, pod(class_name=None, overhead={"cpu": "300m"}),
         "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
        (runtime_class(node_selector={"runtime": "kata"}), pod(node_selector={"runtime": "runc"}),
         "conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; "
         "pod.spec.nodeSelector[runtime] = runc"),
    ],
    ids=["unknown-class", "other-overhead", "overhead-class-has-none", "overhead-without-class",
         "node-selector-conflict"],
)
async def test_refused_pods_are_not_stored(
    store: Store, rc: objects_pb2.RuntimeClass | None, bad: objects_pb2.Pod, reason: str
) -> None:
    verbs = verbs_on(store)
    if rc is not None:
        await verbs.create(rc)
    with pytest.raises(errors.Forbidden) as refused:
        await verbs.create(bad)
    assert str(refused.value) == f'pods "p" is forbidden: {reason}'
    assert await verbs.registry.get(POD, NS, "p") is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda p: setattr(p.spec, "runtime_class_name", "other"), "spec.runtimeClassName"),
        (lambda p: p.spec.overhead.__setitem__("cpu", "1"), "spec.overhead"),
    ],
    ids=["runtime-class-name", "overhead"],
)
async def test_runtime_class_name_and_overhead_are_immutable(store: Store, change: Any, field: str) -> None:
    verbs = verbs_on(store)
    await verbs.create(runtime_class(overhead={"cpu": "250m"}))
    await verbs.create(runtime_class("other", overhead={"cpu": "250m"}))
    created = await verbs.create(pod())
    change(created)
    with pytest.raises(errors.Invalid) as refused:
        await verbs.update(created)
    assert field in str(refused.value)


async def test_the_handler_is_immutable_and_other_fields_are_not(store: Store) -> None:
    verbs = verbs_on(store)
    created = await verbs.create(runtime_class(overhead={"cpu": "250m"}))
    created.overhead.pod_fixed["cpu"] = "500m"
    updated = await verbs.update(created)
    assert dict(updated.overhead.pod_fixed) == {"cpu": "500m"}
    updated.handler = "runc"
    with pytest.raises(errors.Invalid) as refused:
        await verbs.update(updated)
    assert 'handler: Invalid value: "runc": field is immutable' in str(refused.value)


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (runtime_class(handler=""), "handler: Required value"),
        (runtime_class(handler="Kata_1"), 'handler: Invalid value: "Kata_1": a lowercase RFC 1123 label'),
        (runtime_class(overhead={"cpu": "-1"}),
         'overhead.podFixed[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
        (runtime_class(overhead={"widgets": "1"}),
         'overhead.podFixed[widgets]: Invalid value: "widgets": must be a standard resource for containers'),
        (runtime_class(node_selector={"a b": "c"}), 'scheduling.nodeSelector: Invalid value: "a b"'),
        (runtime_class(tolerations=[{"key": "k", "operator": "Sometimes"}]),
         'scheduling.tolerations[0].operator: Unsupported value: "Sometimes"'),
    ],
    ids=["handler-missing", "handler-not-label", "overhead-negative", "overhead-unknown-resource",
         "node-selector-key", "toleration-operator"],
)
async def test_invalid_runtime_classes_are_refused(store: Store, bad: objects_pb2.RuntimeClass,
                                                   problem: str) -> None:
    verbs = verbs_on(store)
    with pytest.raises(errors.Invalid) as refused:
        await verbs.create(bad)
    assert problem in str(refused.value)
