"""`podsched describe pg` (cluster/printers/podgroups.py, cluster/cli/describe.py): a reason several
members share is printed once, with how many pods and which, not once per pod."""

from __future__ import annotations

import json

from cluster.api import objects_pb2
from cluster.cli import describe
from cluster.client import ObjectList
from cluster.printers import podgroups as pod_group_printer
from cluster.printers.describe import DescribeText
from scheduler.framework.explanation import EXPLANATION_ANNOTATION
from tests import builders
from tests.builders import pod

REASON = "3/8 pods placeable, minCount 8: pod w-3: 0/40 nodes are available: " + "x" * 240


class _Pods:
    def __init__(self, pods: list[objects_pb2.Pod]) -> None:
        self.pods = pods

    async def list_all(self, kind, namespace: str = "") -> ObjectList:
        return ObjectList(items=list(self.pods), resource_version="1")


def _member(name: str, *, node: str = "", message: str = "") -> objects_pb2.Pod:
    status: dict = {"phase": "Running" if node else "Pending"}
    if message:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": message}]
    member = pod(name, "ml", node_name=node, status=status)
    member.spec.scheduling_group.pod_group_name = "train"
    return member


def _group() -> objects_pb2.PodGroup:
    return builders.pod_group("train", "ml", api_version="", min_count=8)


async def test_members_waiting_for_the_same_reason_share_one_line() -> None:
    members = [_member("w-0", node="n1"), *(_member(f"w-{i}", message=REASON) for i in range(1, 6)),
               _member("w-6", message="0/40 nodes are available: 40 Insufficient memory.")]
    text = DescribeText()
    await pod_group_printer.PRINTER.describe(_Pods(members), _group(), text)  # type: ignore[arg-type]
    out = text.render()
    assert out.count(REASON) == 1, out
    assert f"5 pods: w-1, w-2, w-3 and 2 more: {REASON}" in out
    assert "1 pod: w-6: 0/40 nodes are available: 40 Insufficient memory." in out
    # Every member still has its row, with its node and phase.
    rows = [line.split() for line in out.splitlines()]
    assert ["w-0", "n1", "Running"] in rows
    assert all(["w-" + str(i), "<none>", "Pending"] in rows for i in range(1, 7))


def test_a_group_attempt_prints_a_shared_placement_once() -> None:
    verdicts = {f"w-{i}": {"unschedulable": REASON} for i in range(5)}
    verdicts["w-5"] = {"node": "n1"}
    event = objects_pb2.Event(reason="FailedScheduling", message="5/6 pods placeable, minCount 6")
    event.metadata.resource_version = "7"
    event.metadata.annotations[EXPLANATION_ANNOTATION] = json.dumps({"pods": verdicts})
    text = DescribeText()
    describe._group_attempt(text, [event])
    out = text.render()
    assert out.count(REASON) == 1, out
    assert f"5 pods: w-0, w-1, w-2 and 2 more  {REASON}" in out
    assert ["w-5", "could", "go", "to", "n1"] in [line.split() for line in out.splitlines()]
