"""What the podgroup controller writes (groupstatus.group_status): the counts from the pods and
scheduler-plugins' phase rules, kept conditions; and how `podsched get pg` shows it."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2, timeutil
from cluster.api.kinds import POD_GROUP
from cluster.controllers.groupstatus import group_status
from cluster.controllers.podgroup import group_key
from cluster.printers import catalog
from tests import builders

NOW = timeutil.from_seconds(1_800_000_000)


def cosched(min_member: int, phase: str = "") -> objects_pb2.PodGroup:
    return builders.pod_group(api_version=builders.COSCHEDULING, status={}, min_member=min_member,
                              phase=phase)


def member(name: str, node: str = "", phase: str = "Pending") -> objects_pb2.Pod:
    return builders.pod(name, node_name=node, phase=phase, labels={"scheduling.x-k8s.io/pod-group": "g"})


def test_counts_follow_the_pods() -> None:
    pods = [member("a", "n1", "Running"), member("b", "n1", "Succeeded"), member("c", "n2", "Failed"),
            member("d")]
    status = group_status(cosched(10), pods, NOW)
    assert (status.scheduled, status.running, status.succeeded, status.failed) == (3, 1, 1, 1)


@pytest.mark.parametrize(
    ("min_member", "phase", "pods", "expected"),
    [
        (2, "", [member("a")], "Pending"),
        (2, "", [member("a"), member("b")], "Scheduling"),
        (2, "Pending", [member("a", "n1", "Pending"), member("b")], "Scheduling"),
        (2, "Scheduling", [member("a", "n1", "Pending"), member("b", "n1", "Pending")], "Scheduled"),
        (2, "", [member("a", "n1", "Running"), member("b", "n1", "Running")], "Running"),
        (2, "Running", [member("a", "n1", "Running")], "Pending"),
        (2, "Running", [member("a", "n1", "Running"), member("b", "n1", "Failed")], "Failed"),
        (2, "Running", [member("a", "n1", "Succeeded"), member("b", "n1", "Succeeded")], "Finished"),
        (2, "Finished", [], "Finished"),
        (2, "Failed", [member("a", "n1", "Running"), member("b", "n1", "Running")], "Failed"),
        (0, "", [member("a", "n1", "Running")], "Running"),  # no gang: as for one pod
    ],
    ids=["too-few", "enough", "pending-enough", "bound", "running-at-once", "lost-one", "failed", "finished",
         "finished-stays", "failed-stays", "no-gang"],
)
def test_phase_follows_scheduler_plugins(
    min_member: int, phase: str, pods: list[objects_pb2.Pod], expected: str
) -> None:
    assert group_status(cosched(min_member, phase), pods, NOW).phase == expected


def test_schedule_start_time_is_set_once_and_conditions_are_kept() -> None:
    group = cosched(1)
    group.status.conditions.add(type="PodGroupInitiallyScheduled", status="False", reason="Unschedulable")
    status = group_status(group, [member("a")], NOW)
    assert status.schedule_start_time == NOW
    assert [c.reason for c in status.conditions] == ["Unschedulable"]
    group.status.CopyFrom(status)
    later = group_status(group, [member("a", "n1", "Running")], timeutil.from_seconds(1_900_000_000))
    assert later.schedule_start_time == NOW and later.phase == "Running"


def test_upstream_groups_use_min_count() -> None:
    group = json_format.ParseDict(
        {"metadata": {"name": "g", "namespace": "default"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}},
        objects_pb2.PodGroup(),
    )
    in_group = {"schedulingGroup": {"podGroupName": "g"}}
    pods = [builders.pod(name, node_name="n1", phase="Running", spec=in_group) for name in ("a", "b")]
    assert group_status(group, pods, NOW).phase == "Pending"
    assert [group_key(pod) for pod in pods] == ["default/g", "default/g"]


def test_the_table_shows_min_counts_and_phase() -> None:
    group = cosched(4, "Scheduling")
    group.status.scheduled, group.status.running = 3, 2
    header = catalog.header(POD_GROUP, wide=True, all_namespaces=True)
    assert header == ["NAMESPACE", "NAME", "MIN", "SCHEDULED", "RUNNING", "PHASE", "AGE", "SUCCEEDED",
                      "FAILED", "API VERSION", "WORKLOAD", "TOPOLOGY"]
    row = catalog.row(POD_GROUP, group, wide=True, all_namespaces=True)
    assert row[:6] == ["default", "g", "4", "3", "2", "Scheduling"]
    assert row[7:] == ["0", "0", "scheduling.x-k8s.io/v1alpha1", "<none>", "<none>"]
    upstream = json_format.ParseDict(
        {"metadata": {"name": "u"}, "spec": {"schedulingPolicy": {"basic": {}}}}, objects_pb2.PodGroup()
    )
    shown = catalog.row(POD_GROUP, upstream, wide=False, all_namespaces=False)
    assert shown[:5] == ["u", "0", "0", "0", "<none>"]
