"""Priority admission of groups: a PodGroup's preemptionPolicy (through the real service), and a
Workload's group templates and a CompositePodGroup, whose kinds the API server does not serve yet (in
process, beside a watch cache of the classes and quotas given): a client may not give a group a priority
it could not give a pod."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import errors, objects_pb2
from cluster.api.kinds import PRIORITY_CLASS, RESOURCE_QUOTA
from cluster.apiserver import quota
from cluster.apiserver.admission.priority import (
    admit_composite_pod_group_create,
    admit_composite_pod_group_update,
    admit_workload_create,
    admit_workload_update,
)
from cluster.apiserver.selection import Selection
from tests import builders
from tests.builders import priority_class, resource_quota
from tests.unit.test_apiserver_server import Harness, api

__all__ = ["api"]

GOLD = priority_class("gold", 1000)
NEVER = priority_class("never", 500, preemption_policy="Never")
DEFAULT = priority_class("fallback", 100, global_default=True)


# -------------------------------------------------------------------------- PodGroup (real service)


@pytest.mark.parametrize(
    ("classes", "class_name", "policy"),
    [((), "", "PreemptLowerPriority"), ((GOLD,), "gold", "PreemptLowerPriority"),
     ((NEVER,), "never", "Never"), ((NEVER,), "", "PreemptLowerPriority")],
    ids=["no-class", "class-without-policy", "class-policy", "other-class-unused"],
)
async def test_a_pod_groups_preemption_policy_is_its_classs(
    api: Harness, classes: tuple[objects_pb2.PriorityClass, ...], class_name: str, policy: str
) -> None:
    for pc in classes:
        await api.create(pc)
    created = await api.create(builders.pod_group("g", min_count=2, priority_class=class_name))
    assert created.spec.preemption_policy == policy


async def test_a_pod_group_may_not_say_another_preemption_policy_than_its_classs(api: Harness) -> None:
    await api.create(NEVER)
    group = builders.pod_group("g", min_count=2, priority_class="never")
    group.spec.preemption_policy = "PreemptLowerPriority"
    with pytest.raises(errors.Forbidden, match=(
            r'^podgroups\.scheduling\.k8s\.io "g" is forbidden: the string value of PreemptionPolicy '
            r"\(PreemptLowerPriority\) must not be provided in podgroup spec; priority admission controller "
            r"computed Never from the given PriorityClass name$")):
        await api.create(group)
    group.spec.preemption_policy = "Never"
    assert (await api.create(group)).spec.preemption_policy == "Never"


async def test_pod_group_updates_keep_the_admitted_preemption_policy(api: Harness) -> None:
    await api.create(NEVER)
    created = await api.create(builders.pod_group("g", min_count=2, priority_class="never"))
    change = objects_pb2.PodGroup()
    change.CopyFrom(created)
    change.spec.ClearField("preemption_policy")
    change.metadata.labels["a"] = "b"
    assert (await api.update(change)).spec.preemption_policy == "Never"


# -------------------------------------------------- Workload and CompositePodGroup (in process)


@dataclass
class Listed:
    items: list[Any]


@dataclass
class Cache:
    """The watch cache as admission reads it: the classes and quotas given."""

    classes: list[objects_pb2.PriorityClass] = field(default_factory=list)
    quotas: list[objects_pb2.ResourceQuota] = field(default_factory=list)

    async def get(self, kind: Any, namespace: str, name: str) -> Any:
        assert kind is PRIORITY_CLASS
        return next((pc for pc in self.classes if pc.metadata.name == name), None)

    async def list(self, selection: Selection, namespace: str | None = None) -> Listed:
        if selection.kind is PRIORITY_CLASS:
            return Listed(list(self.classes))
        assert selection.kind is RESOURCE_QUOTA
        return Listed([q for q in self.quotas if namespace is None or q.metadata.namespace == namespace])


def workload(namespace: str = "default", **spec: Any) -> objects_pb2.Workload:
    return json_format.ParseDict(
        {"metadata": {"name": "job", "namespace": namespace}, "spec": spec}, objects_pb2.Workload())


def composite(namespace: str = "default", **spec: Any) -> objects_pb2.CompositePodGroup:
    return json_format.ParseDict(
        {"metadata": {"name": "cpg", "namespace": namespace}, "spec": spec}, objects_pb2.CompositePodGroup())


def gang(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"gang": {"minCount": 2}}, **fields}


def nested(**leaf: Any) -> dict[str, Any]:
    """Two levels of compositePodGroupTemplates around one podGroupTemplate ``leaf``."""
    return {"compositePodGroupTemplates": [{
        "name": "outer", "schedulingPolicy": {"basic": {}},
        "compositePodGroupTemplates": [{"name": "inner", "schedulingPolicy": {"basic": {}},
                                        "podGroupTemplates": [gang("leaf", **leaf)]}],
    }]}


async def test_every_template_of_a_workload_gets_its_classs_priority_and_policy() -> None:
    cache = Cache([GOLD, NEVER, DEFAULT])
    admitted = workload(podGroupTemplates=[gang("a", priorityClassName="gold"), gang("b")],
                        **nested(priorityClassName="never"))
    await admit_workload_create(cache, admitted)  # type: ignore[arg-type]
    a, b = admitted.spec.pod_group_templates
    lower = "PreemptLowerPriority"
    assert (a.priority_class_name, a.priority, a.preemption_policy) == ("gold", 1000, lower)
    assert (b.priority_class_name, b.priority, b.preemption_policy) == ("fallback", 100, lower)
    (outer,) = admitted.spec.composite_pod_group_templates
    (inner,) = outer.composite_pod_group_templates
    assert (outer.priority_class_name, outer.priority) == ("fallback", 100)
    (leaf,) = inner.pod_group_templates
    assert (leaf.priority_class_name, leaf.priority, leaf.preemption_policy) == ("never", 500, "Never")


async def test_without_classes_a_template_gets_priority_zero() -> None:
    admitted = workload(podGroupTemplates=[gang("a")])
    await admit_workload_create(Cache(), admitted)  # type: ignore[arg-type]
    template = admitted.spec.pod_group_templates[0]
    assert (template.priority_class_name, template.priority, template.HasField("priority")) == ("", 0, True)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"podGroupTemplates": [gang("a", priorityClassName="gold")]},
         r'^workloads\.scheduling\.k8s\.io "job" is forbidden: no PriorityClass with name gold was found$'),
        ({"podGroupTemplates": [gang("a"), gang("b", priorityClassName="never", priority=7)]},
         r'^workloads\.scheduling\.k8s\.io "job" is forbidden: the integer value of priority \(7\) must not '
         r"be provided in spec\.podGroupTemplates\[1\]; priority admission controller computed 500 from the "
         r"given PriorityClass name$"),
        (nested(priorityClassName="never", preemptionPolicy="PreemptLowerPriority"),
         r'^workloads\.scheduling\.k8s\.io "job" is forbidden: the string value of PreemptionPolicy '
         r"\(PreemptLowerPriority\) must not be provided in spec\.compositePodGroupTemplates\[0\]\."
         r"compositePodGroupTemplates\[0\]\.podGroupTemplates\[0\]; priority admission controller computed "
         r"Never from the given PriorityClass name$"),
    ],
    ids=["unknown-class", "wrong-priority", "wrong-policy-deep"],
)
async def test_a_workload_template_is_refused_what_a_pod_would_be(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.Forbidden, match=message):
        await admit_workload_create(Cache([NEVER]), workload(**spec))  # type: ignore[arg-type]


async def test_workload_updates_keep_each_templates_admitted_priority() -> None:
    old = workload(podGroupTemplates=[gang("a", priorityClassName="never")], **nested())
    await admit_workload_create(Cache([NEVER]), old)  # type: ignore[arg-type]
    new = objects_pb2.Workload()
    new.CopyFrom(old)
    for template in (new.spec.pod_group_templates[0],
                     new.spec.composite_pod_group_templates[0].composite_pod_group_templates[0]
                     .pod_group_templates[0]):
        template.ClearField("priority")
        template.ClearField("preemption_policy")
    admit_workload_update(new, old)
    assert new == old


async def test_a_composite_pod_group_gets_its_classs_priority_and_policy() -> None:
    admitted = composite(priorityClassName="never")
    await admit_composite_pod_group_create(Cache([NEVER]), admitted)  # type: ignore[arg-type]
    assert (admitted.spec.priority, admitted.spec.preemption_policy) == (500, "Never")
    defaulted = composite()
    await admit_composite_pod_group_create(Cache([DEFAULT]), defaulted)  # type: ignore[arg-type]
    assert (defaulted.spec.priority_class_name, defaulted.spec.priority) == ("fallback", 100)
    with pytest.raises(errors.Forbidden, match=(
            r'^compositepodgroups\.scheduling\.k8s\.io "cpg" is forbidden: the integer value of priority '
            r"\(1\) must not be provided in compositepodgroup spec; priority admission controller computed 0 "
            r"from the given PriorityClass name$")):
        await admit_composite_pod_group_create(Cache(), composite(priority=1))  # type: ignore[arg-type]
    changed = objects_pb2.CompositePodGroup()
    changed.CopyFrom(admitted)
    changed.spec.ClearField("priority")
    changed.spec.ClearField("preemption_policy")
    admit_composite_pod_group_update(changed, admitted)
    assert changed == admitted


NOT_OPENED = (r"insufficient quota to match these scopes: "
              r"\[\{PriorityClass In \[system-node-critical system-cluster-critical\]\}\]$")


@pytest.mark.parametrize("priority_class", ["system-node-critical", "system-cluster-critical"])
async def test_system_classes_only_where_a_quota_opens_them(priority_class: str) -> None:
    """As for a pod and a PodGroup: a group template or a CompositePodGroup of a system class is refused
    in a namespace without a quota that opens it."""
    templates = {"podGroupTemplates": [gang("a"), gang("b", priorityClassName=priority_class)]}
    closed = Cache()
    refused = (r'^workloads\.scheduling\.k8s\.io "job" is forbidden: '
               r"spec\.podGroupTemplates\[1\]\.priorityClassName: ")
    with pytest.raises(errors.Forbidden, match=refused + NOT_OPENED):
        await quota.admit_workload(closed, workload("team", **templates))  # type: ignore[arg-type]
    refused = r'^compositepodgroups\.scheduling\.k8s\.io "cpg" is forbidden: '
    with pytest.raises(errors.Forbidden, match=refused + NOT_OPENED):
        await quota.admit_composite_pod_group(  # type: ignore[arg-type]
            closed, composite("team", priorityClassName=priority_class))
    other = "system-cluster-critical" if priority_class == "system-node-critical" else "system-node-critical"
    wrong = Cache(quotas=[resource_quota("critical", "team", hard={"pods": "5"}, priority_classes=[other])])
    with pytest.raises(errors.Forbidden):
        await quota.admit_workload(wrong, workload("team", **templates))  # type: ignore[arg-type]
    opened = Cache(quotas=[resource_quota("critical", "team", hard={"pods": "5"},
                                          priority_classes=[priority_class])])
    await quota.admit_workload(opened, workload("team", **templates))  # type: ignore[arg-type]
    await quota.admit_composite_pod_group(  # type: ignore[arg-type]
        opened, composite("team", priorityClassName=priority_class))
