"""The failed cycle's fast paths equal their references: a signature's memo predicts a failure exactly
when it remembers a verdict for every node and none of them fits (its running tally against a recount),
the table lister is found per type as a runtime isinstance finds it, and the failure handler skips the
copy exactly when writing the condition would change nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.cache import Cache, Snapshot
from scheduler.clock import SystemClock
from scheduler.framework import Status
from scheduler.framework.batching import SignatureMemo
from scheduler.framework.interface import NodeTableLister, as_node_table_lister
from scheduler.framework.nodedata import NodeSet
from scheduler.schedule_one import POD_SCHEDULED, with_failure_status
from tests import builders

FAILS = Status.unschedulable("Insufficient nvidia.com/gpu")
ERROR = Status.as_error("boom")

#: One step: filter the nodes from ``start`` for ``length`` nodes, each answering fit / fail / error and
#: maybe having nominated pods; or a pod lands on node ``node`` (its generation changes).
_FILTER = st.tuples(st.just("filter"), st.integers(0, 7), st.integers(0, 8),
                    st.lists(st.sampled_from(["fit", "fail", "error"]), min_size=8, max_size=8),
                    st.lists(st.booleans(), min_size=8, max_size=8))
_CHANGE = st.tuples(st.just("change"), st.integers(0, 7))


@settings(deadline=None)
@given(st.integers(1, 8), st.lists(st.one_of(_FILTER, _CHANGE), max_size=25))
def test_a_memo_predicts_a_failure_exactly_when_it_remembers_every_node_and_none_fits(
        count: int, steps: list[tuple[Any, ...]]) -> None:
    cache = Cache(clock=SystemClock())
    for i in range(count):
        cache.add_node(builders.node(f"n{i}", cpu="64", memory="64Gi"))
    snapshot = Snapshot()
    memo = SignatureMemo()
    #: The reference: each node's last remembered verdict (True: it fits), recounted at every step.
    remembered: dict[str, bool] = {}
    landed = 0
    for step in steps:
        if step[0] == "change":
            landed += 1
            cache.add_pod(builders.pod(f"p{landed}", node_name=f"n{step[1] % count}"))
            continue
        _, start, length, answers, nominated = step
        cache.update_snapshot(snapshot)
        lister = as_node_table_lister(snapshot.node_infos())
        assert lister is not None
        nodes = lister.rotated(start % count).window(0, length)
        excluded = [nominated[int(info.name[1:])] for info in nodes]
        memo.filter(nodes, excluded, _answers(answers, nominated, remembered))
        expected = len(remembered) == count and not any(remembered.values())
        assert memo.predicts_failure() == expected


def _answers(answers: list[str], nominated: list[bool],
             remembered: dict[str, bool]) -> Callable[[NodeSet], list[Status | None]]:
    """Filter's answer for each node ``n<i>``, noting in ``remembered`` what a memo keeps of it."""
    def evaluate(asked: NodeSet) -> list[Status | None]:
        verdicts: list[Status | None] = []
        for info in asked:
            i = int(info.name[1:])
            verdicts.append(None if answers[i] == "fit" else FAILS if answers[i] == "fail" else ERROR)
            if answers[i] != "error" and not nominated[i]:
                remembered[info.name] = answers[i] == "fit"
        return verdicts
    return evaluate


class _Table:
    def list(self) -> list[Any]:
        return []

    def node_set(self, nodes: Any) -> Any:
        return nodes

    def rotated(self, first: int) -> Any:
        return first


class _NoRotation:
    def list(self) -> list[Any]:
        return []

    def node_set(self, nodes: Any) -> Any:
        return nodes


@settings(deadline=None)
@given(st.lists(st.sampled_from([_Table, _NoRotation, Snapshot, dict, int]), max_size=6))
def test_the_table_lister_is_found_as_isinstance_finds_it(kinds: list[type]) -> None:
    for kind in kinds:
        lister = kind() if kind is not Snapshot else Snapshot().node_infos()
        found = as_node_table_lister(lister)
        assert (found is lister) == isinstance(lister, NodeTableLister)
        assert found is None or found is lister


_CONDITIONS = st.lists(st.tuples(st.sampled_from([POD_SCHEDULED, "Ready"]),
                                 st.sampled_from(["False", "True"]),
                                 st.sampled_from(["Unschedulable", "SchedulerError"]),
                                 st.sampled_from(["0/3 nodes are available.", "other"])), max_size=2)


@settings(deadline=None)
@given(_CONDITIONS, st.sampled_from(["", "node-a"]), st.sampled_from(["Unschedulable", "SchedulerError"]),
       st.sampled_from(["0/3 nodes are available.", "other"]),
       st.sampled_from([None, "", "node-a", "node-b"]))
def test_the_condition_is_copied_exactly_when_writing_it_changes_the_status(
        conditions: list[tuple[str, str, str, str]], nominated: str, reason: str, message: str,
        nominate: str | None) -> None:
    pod = builders.pod("p")
    pod.status.nominated_node_name = nominated
    for type_, status, why, text in conditions:
        pod.status.conditions.add(type=type_, status=status, reason=why, message=text)
    updated = with_failure_status(pod, reason, message, nominate)
    # The reference: set the condition and the nomination on a copy, and see whether anything moved.
    reference = objects_pb2.Pod()
    reference.CopyFrom(pod)
    if nominate is not None:
        reference.status.nominated_node_name = nominate
    condition = next((c for c in reference.status.conditions if c.type == POD_SCHEDULED), None)
    if condition is None:
        condition = reference.status.conditions.add(type=POD_SCHEDULED)
    condition.status, condition.reason, condition.message = "False", reason, message
    assert (updated is not None) == (reference.status != pod.status)
    if updated is not None:
        written = next(c for c in updated.status.conditions if c.type == POD_SCHEDULED)
        assert (written.status, written.reason, written.message) == ("False", reason, message)
        assert updated.status.nominated_node_name == (nominated if nominate is None else nominate)
