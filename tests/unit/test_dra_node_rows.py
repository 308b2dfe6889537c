"""How the per-device tables meet a cycle's nodes (scheduler/dra/node_rows.py): each node table row's
name, looked up in a layout once and again only after a rename or for another layout."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduler.dra.node_rows import Ints, NodeRows
from scheduler.framework.nodedata import NodeSet
from tests.builders import node, node_info
from tests.unit.framework_fakes import node_set


class Lookups:
    """A layout's lookup of names (their positions in ``known``, -1 for others), counting its calls."""

    def __init__(self, *known: str) -> None:
        self.known = list(known)
        self.calls = 0

    def __call__(self, names: Sequence[str]) -> Ints:
        self.calls += 1
        return np.asarray([self.known.index(name) if name in self.known else -1 for name in names],
                          dtype=np.int64)


def test_rows_are_looked_up_once_per_rename_and_layout() -> None:
    infos = [node_info(node(name)) for name in ("a", "b", "c")]
    nodes = node_set(infos)
    rows, lookup, layout = NodeRows(), Lookups("c", "a"), object()
    mapped = rows.of(nodes, layout, lookup)
    assert mapped is not None and mapped.tolist() == [1, -1, 0]
    found = rows.of(nodes.subset([2, 0]), layout, lookup)
    assert found is not None and found.tolist() == [0, 1]
    assert lookup.calls == 1
    assert nodes.table is not None
    nodes.nodes[1] = infos[1] = node_info(node("c"))
    nodes.table.set_row(1, infos[1])
    mapped = rows.of(nodes, layout, lookup)
    assert mapped is not None and mapped.tolist() == [1, 0, 0]
    assert lookup.calls == 2
    other = Lookups("a")
    mapped = rows.of(nodes, object(), other)
    assert mapped is not None and mapped.tolist() == [0, -1, -1]
    assert other.calls == 1


def test_a_node_gone_from_its_row_has_no_name_and_nodes_without_rows_none() -> None:
    infos = [node_info(node("a")), node_info(node("b"))]
    infos[1].remove_node()
    rows, lookup = NodeRows(), Lookups("a", "b", "")
    mapped = rows.of(node_set(infos), object(), lookup)
    assert mapped is not None and mapped.tolist() == [0, 2]
    assert rows.of(NodeSet(infos), object(), lookup) is None
