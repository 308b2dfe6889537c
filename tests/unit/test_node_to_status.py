"""NodeToStatus (framework/node_to_status.py) against its reference, a plain dict filled node by node and
counted by identity: whatever mix of recorded batches and single entries, the same mapping, in the same
order, with the same counts."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from scheduler.framework import NodeToStatus, Status, count_statuses, counted_by_identity
from scheduler.framework.verdicts import Verdicts

#: Two equal statuses that are distinct objects: counts go by object, as plugins share one per verdict.
STATUSES = [Status.unschedulable("Insufficient cpu"), Status.unschedulable("Insufficient cpu"),
            Status.unresolvable("node(s) didn't match Pod's node affinity/selector"),
            Status.unschedulable("Insufficient nvidia.com/gpu")]


@dataclass(frozen=True)
class Node:
    name: str


def identities(counted: list[tuple[Status, int]]) -> list[tuple[int, int]]:
    """``counted`` comparable whatever its order: by object, with the count."""
    return sorted((id(status), times) for status, times in counted)


def _record(mapping: NodeToStatus, nodes: list[Node], verdicts: list[Status | None]) -> None:
    mapping.record(nodes, verdicts, Verdicts(verdicts).counted_failures())


verdict = st.one_of(st.none(), st.sampled_from(range(len(STATUSES))))
#: ("record", verdicts, how many of them are kept) or ("set", node index, status index).
operation = st.one_of(
    st.tuples(st.just("record"), st.lists(verdict, max_size=12), st.integers(0, 12)),
    st.tuples(st.just("set"), st.integers(0, 40), st.sampled_from(range(len(STATUSES)))),
)


@given(st.lists(operation, max_size=8), st.booleans())
def test_matches_a_dict_filled_node_by_node(operations: list[tuple], look_up_midway: bool) -> None:
    mapping = NodeToStatus()
    reference: dict[str, Status] = {}
    fresh = 0  # recorded nodes are new to the mapping, as Filter's batches are
    for step, (kind, first, second) in enumerate(operations):
        if kind == "record":
            nodes = [Node(f"n{fresh + i}") for i in range(len(first))]
            fresh += len(first)
            verdicts = [None if index is None else STATUSES[index] for index in first][:second]
            _record(mapping, nodes, verdicts)
            reference.update((node.name, status) for node, status in zip(nodes, verdicts, strict=False)
                             if status is not None)
        else:
            mapping[f"n{first}"] = reference[f"n{first}"] = STATUSES[second]
        assert len(mapping) == len(reference)
        if look_up_midway and step == len(operations) // 2:
            assert ("n0" in mapping) == ("n0" in reference)
    expected = identities(counted_by_identity(list(reference.values())))
    assert identities(count_statuses(mapping)) == expected
    assert list(mapping.items()) == list(reference.items())
    assert mapping == reference
    assert identities(mapping.counted()) == expected


def test_a_prefix_of_verdicts_records_only_those_nodes() -> None:
    mapping = NodeToStatus()
    cpu, gpu = STATUSES[0], STATUSES[3]
    _record(mapping, [Node("a"), Node("b"), Node("c")], [cpu, None])
    _record(mapping, [Node("d"), Node("e")], [gpu, cpu])
    assert len(mapping) == 3
    assert identities(mapping.counted()) == identities([(cpu, 2), (gpu, 1)])
    assert dict(mapping) == {"a": cpu, "d": gpu, "e": cpu}
    assert "c" not in mapping


def test_an_entry_after_batches_is_counted_and_overrides() -> None:
    mapping = NodeToStatus()
    cpu, affinity = STATUSES[0], STATUSES[2]
    _record(mapping, [Node("a"), Node("b")], [cpu, cpu])
    assert mapping.counted() == [(cpu, 2)]
    mapping["b"] = affinity
    assert identities(mapping.counted()) == identities([(cpu, 1), (affinity, 1)])
    _record(mapping, [Node("c")], [affinity])
    assert len(mapping) == 3
    assert identities(mapping.counted()) == identities([(cpu, 1), (affinity, 2)])
    del mapping["a"]
    assert list(mapping) == ["b", "c"]


def test_count_statuses_of_a_plain_mapping() -> None:
    cpu = STATUSES[0]
    assert count_statuses({"a": cpu, "b": cpu}) == [(cpu, 2)]
