"""Workload, CompositePodGroup and PodGroup's workloadRef through the real API service: the kinds are
served, a group naming a Workload is admitted only when the Workload has that template
(PodGroupWorkloadExists), nothing refused is stored, defaults and update rules apply on the server."""

from __future__ import annotations

import pytest

from cluster.api import errors
from tests import builders
from tests.unit.test_apiserver_server import Harness, api

__all__ = ["api"]

WORKLOAD = builders.workload("train", spec={"podGroupTemplates": [
    {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]})
TREE = builders.workload("tree", spec={"compositePodGroupTemplates": [{
    "name": "root", "schedulingPolicy": {"basic": {}},
    "podGroupTemplates": [{"name": "leaf", "schedulingPolicy": {"basic": {}}}]}]})


def _group(workload: str, template: str) -> object:
    return builders.pod_group("g", min_count=2, spec={"workloadRef": {"workloadName": workload,
                                                                      "templateName": template}})


@pytest.mark.parametrize(
    ("workloads", "template", "message"),
    [
        ((), "workers", 'podgroups.scheduling.k8s.io "g" is forbidden: PodGroup rejected: Workload "train" '
                        "not found"),
        ((WORKLOAD,), "drivers", 'podgroups.scheduling.k8s.io "g" is forbidden: PodGroup rejected: '
                                 'PodGroupTemplate "drivers" not found in Workload "train"'),
    ],
    ids=["no-workload", "no-template"],
)
async def test_a_group_naming_a_missing_template_is_refused(
    api: Harness, workloads: tuple[object, ...], template: str, message: str
) -> None:
    for workload in workloads:
        await api.create(workload)
    with pytest.raises(errors.Forbidden) as refused:
        await api.create(_group("train", template))
    assert refused.value.message == message
    with pytest.raises(errors.NotFound):
        await api.get("PodGroup", "g", "default")


async def test_groups_of_a_workload_are_admitted_and_defaulted(api: Harness) -> None:
    await api.create(WORKLOAD)
    created = await api.create(_group("train", "workers"))
    assert created.spec.disruption_mode.HasField("single")
    await api.create(TREE)
    root = builders.composite_pod_group("root", spec={
        "workloadRef": {"workloadName": "tree", "templateName": "root"}, "schedulingPolicy": {"basic": {}}})
    stored = await api.create(root)
    assert stored.spec.disruption_mode.HasField("single")
    assert (await api.get("CompositePodGroup", "root", "default")).metadata.name == "root"
    leaf_as_composite = builders.composite_pod_group("leaf", spec={
        "workloadRef": {"workloadName": "tree", "templateName": "leaf"}, "schedulingPolicy": {"basic": {}}})
    refusal = 'CompositePodGroupTemplate "leaf" not found in Workload "tree"'
    with pytest.raises(errors.Forbidden, match=refusal):
        await api.create(leaf_as_composite)


async def test_a_workload_keeps_its_templates(api: Harness) -> None:
    stored = await api.create(WORKLOAD)
    stored.spec.pod_group_templates.add(name="more").scheduling_policy.basic.SetInParent()
    added = r"spec\.podGroupTemplates\[1\]: Forbidden: items cannot be added"
    with pytest.raises(errors.Invalid, match=added):
        await api.update(stored)
    scaled = await api.get("Workload", "train", "default")
    scaled.spec.pod_group_templates[0].scheduling_policy.gang.min_count = 4
    updated = await api.update(scaled)
    assert updated.spec.pod_group_templates[0].scheduling_policy.gang.min_count == 4
    with pytest.raises(errors.Invalid, match="Workload has no status"):
        await api.update_status(updated)


async def test_the_server_resolves_the_priority_of_templates_and_composite_groups(api: Harness) -> None:
    """Priority admission runs for Workloads and CompositePodGroups as for PodGroups: a template's or a
    composite group's class becomes its priority, and a priority the class does not give is refused."""
    await api.create(builders.priority_class("high", 1000))
    prioritized = builders.workload("ranked", spec={"podGroupTemplates": [
        {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": "high"}]})
    stored = await api.create(prioritized)
    assert stored.spec.pod_group_templates[0].priority == 1000
    await api.create(TREE)
    composite = builders.composite_pod_group("root", spec={
        "workloadRef": {"workloadName": "tree", "templateName": "root"}, "schedulingPolicy": {"basic": {}},
        "priorityClassName": "high", "priority": 5})
    with pytest.raises(errors.Forbidden):
        await api.create(composite)
    with pytest.raises(errors.NotFound):
        await api.get("CompositePodGroup", "root", "default")
    composite.spec.ClearField("priority")
    assert (await api.create(composite)).spec.priority == 1000
