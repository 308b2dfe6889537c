"""What a replay reports of a trace's pod groups: a gang placed once its minimum was bound, a basic group
once any pod was, the rack domains of a constrained group's bound pods (read with the trace's key even
when the replay dropped the constraint), the summary's counts, and the trace without its constraints."""

from __future__ import annotations

from pathlib import Path

from cluster.api import objects_pb2
from cluster.simulate.replay.groups import NO_DOMAIN, group_outcomes, without_topology_constraints
from cluster.simulate.replay.ledger import PodRecord
from cluster.simulate.trace import Trace
from tests.unit.test_trace_groups import RACK, load

PODS = [f"a0,1,a,2,{RACK}", f"a1,1,a,2,{RACK}", f"b0,1,b,2,{RACK}", f"b1,1,b,2,{RACK}", "c0,1,c,,",
        "c1,1,c,,", f"d0,1,d,1,{RACK}", "e0,1,e,2,", "e1,1,e,2,"]
NODES = [f"n1,8,32Gi,{RACK}=r1", f"n2,8,32Gi,{RACK}=r1", f"n3,8,32Gi,{RACK}=r2", "n4,8,32Gi,"]


def trace(tmp_path: Path) -> Trace:
    return load(tmp_path, PODS, NODES)


def bound(name: str, node: str | None) -> PodRecord:
    return PodRecord(f"default/{name}", 0.0, None if node is None else 1.0, node)


def test_outcomes_by_group(tmp_path: Path) -> None:
    records = [bound("a0", "n1"), bound("a1", "n2"), bound("b0", "n1"), bound("b1", "n3"), bound("c0", "n4"),
               bound("c1", None), bound("d0", "n4"), bound("e0", "n1")]
    outcomes = {o.name: o for o in group_outcomes(trace(tmp_path), records)}
    assert [(o.min_count, o.topology_key, o.pods, o.bound, o.placed, o.domains, o.in_one_domain)
            for o in outcomes.values()] == [
        (2, RACK, 2, 2, True, ("r1",), True),
        (2, RACK, 2, 2, True, ("r1", "r2"), False),
        (0, "", 2, 1, True, (), None),
        (1, RACK, 1, 1, True, (NO_DOMAIN,), False),
        (2, "", 2, 1, False, (), None)]
    assert list(outcomes) == ["default/a", "default/b", "default/c", "default/d", "default/e"]


def test_a_trace_without_groups_has_no_outcomes(tmp_path: Path) -> None:
    assert group_outcomes(load(tmp_path, ["p,1,,,"], NODES), [bound("p", "n1")]) == []


def test_dropping_the_constraints_keeps_everything_else(tmp_path: Path) -> None:
    original = trace(tmp_path)
    dropped = without_topology_constraints(original)
    assert [o.spec.scheduling_constraints.topology[0].key for o in original.objects
            if isinstance(o, objects_pb2.PodGroup) and o.spec.scheduling_constraints.topology] == [RACK] * 3
    assert not any(isinstance(o, objects_pb2.PodGroup) and o.HasField("spec")
                   and o.spec.HasField("scheduling_constraints") for o in dropped.objects)
    assert [o.metadata.name for o in dropped.objects] == [o.metadata.name for o in original.objects]
    assert [o.spec.scheduling_policy for o in dropped.objects] == [o.spec.scheduling_policy
                                                                    for o in original.objects]
    assert dropped.pods == original.pods and dropped.nodes == original.nodes
    # What the replay reads its domains from is left as the trace gave it.
    assert group_outcomes(original, [bound("a0", "n1"), bound("a1", "n3")])[0].in_one_domain is False
