"""How `podsched get` and `podsched describe` print Workloads, CompositePodGroups and PodGroup's
scheduling.k8s.io/v1alpha3 fields."""

from __future__ import annotations

import asyncio
from typing import Any

from google.protobuf.message import Message

from cluster.api import kinds
from cluster.printers import catalog
from cluster.printers.describe import DescribeText
from tests import builders


class _Objects:
    """A Reader holding ``objects``."""

    def __init__(self, *objects: Message) -> None:
        self.objects = objects

    async def list_all(self, kind: kinds.Kind[Any], namespace: str = "", *, label_selector: str = "",
                       field_selector: str = "") -> Any:
        return _Listed([obj for obj in self.objects if kinds.kind_of(obj) is kind])


class _Listed:
    def __init__(self, items: list[Message]) -> None:
        self.items = items


def _describe(obj: Message, *others: Message) -> list[str]:
    text = DescribeText()
    asyncio.run(catalog.PRINTERS[kinds.kind_of(obj)].describe(_Objects(obj, *others), obj, text))
    return [line.rstrip() for line in text.render().splitlines()]


WORKLOAD = builders.workload("job", spec={
    "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "job"},
    "compositePodGroupTemplates": [{
        "name": "replica", "schedulingPolicy": {"gang": {"minGroupCount": 2}},
        "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
        "podGroupTemplates": [
            {"name": "leader", "schedulingPolicy": {"basic": {}}},
            {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}, "disruptionMode": {"all": {}},
             "priorityClassName": "high", "priority": 1000,
             "resourceClaims": [{"name": "nic", "resourceClaimTemplateName": "rdma"}]},
        ]}]})


def test_workload_columns_count_the_whole_tree() -> None:
    assert catalog.header(kinds.WORKLOAD, wide=False, all_namespaces=False) == [
        "NAME", "PODGROUP TEMPLATES", "COMPOSITE TEMPLATES", "CONTROLLER", "AGE"]
    row = catalog.row(kinds.WORKLOAD, WORKLOAD, wide=False, all_namespaces=False)
    assert row[:4] == ["job", "2", "1", "Job.batch/job"]


def test_workload_describe_shows_each_template() -> None:
    lines = _describe(WORKLOAD)
    assert "Controller:   Job.batch/job" in lines
    templates = lines[lines.index("Templates:") + 1:]
    assert [line for line in templates if " Template " in line] == [
        "  CompositePodGroup Template replica:",
        "    PodGroup Template leader:",
        "    PodGroup Template workers:",
    ]
    workers = templates[templates.index("    PodGroup Template workers:"):]
    assert "      Scheduling Policy:    Gang (minCount 4)" in workers
    assert "      Disruption Mode:      All" in workers
    assert "      Priority Class Name:  high" in workers
    assert "        nic   ResourceClaimTemplate rdma  <none>" in workers
    assert "    Topology Key:         topology.kubernetes.io/zone" in templates


def test_pod_group_shows_its_template_topology_and_generated_claims() -> None:
    group = builders.pod_group("workers-0", spec={
        "workloadRef": {"workloadName": "job", "templateName": "workers"},
        "parentCompositePodGroupName": "replica-0",
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
        "resourceClaims": [{"name": "nic", "resourceClaimTemplateName": "rdma"},
                           {"name": "shared", "resourceClaimName": "dataset"}],
        "disruptionMode": {"single": {}}, "preemptionPolicy": "Never",
    }, status={"resourceClaimStatuses": [{"name": "nic", "resourceClaimName": "workers-0-nic-x7k2p"}]})
    lines = _describe(group)
    for expected in ("Workload Template:    job/workers", "Parent:               replica-0",
                     "Topology Key:         topology.kubernetes.io/rack", "Disruption Mode:      Single",
                     "Preemption Policy:    Never", "Resource Claims:",
                     "  nic     ResourceClaimTemplate rdma  workers-0-nic-x7k2p",
                     "  shared  ResourceClaim dataset       <none>"):
        assert expected in lines, (expected, lines)
    wide = dict(zip(catalog.header(kinds.POD_GROUP, wide=True, all_namespaces=False),
                    catalog.row(kinds.POD_GROUP, group, wide=True, all_namespaces=False), strict=True))
    assert (wide["WORKLOAD"], wide["TOPOLOGY"]) == ("job/workers", "topology.kubernetes.io/rack")


def test_composite_pod_group_lists_its_children() -> None:
    root = builders.composite_pod_group("replica-0", spec={
        "workloadRef": {"workloadName": "job", "templateName": "replica"},
        "schedulingPolicy": {"gang": {"minGroupCount": 2}}})
    child = builders.pod_group("workers-0", min_count=4, spec={
        "workloadRef": {"workloadName": "job", "templateName": "workers"},
        "parentCompositePodGroupName": "replica-0"})
    lines = _describe(root, child, builders.pod_group("other", min_count=1))
    assert "Scheduling Policy:    Gang (minGroupCount 2)" in lines
    assert lines[lines.index("Children:") + 1:][:2] == ["  Kind      Name", "  PodGroup  workers-0"]
    row = catalog.row(kinds.COMPOSITE_POD_GROUP, root, wide=False, all_namespaces=False)
    assert row[:3] == ["replica-0", "Gang (minGroupCount 2)", "<none>"]
