"""Which nodes a pod failed on and why, by node name (kube-scheduler's NodeToStatus).

A ``NodeToStatus`` is a mutable mapping from node name to the Status Filter gave the node. Filter hands
it whole batches of verdicts (``record``): a pod that fits on none of thousands of nodes is recorded
without a per-node dict, and the count of each distinct Status (what the FitError message and
preemption read) is taken once per attempt from the batches, where plugins' shared Status objects make
it a count by identity. The per-node dict is built the first time a node is looked up by name, and
from then on the mapping is that dict.
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import ItemsView, Iterator, KeysView, Mapping, MutableMapping, Sequence, ValuesView
from typing import Protocol, cast

from scheduler.framework.status import Status, counted_by_identity

_NONES = itertools.repeat(None)


class Named(Protocol):
    @property
    def name(self) -> str: ...


_name_of = operator.attrgetter("name")


class _Batch:
    """Verdicts on ``nodes`` (None: the node fits) and each distinct Status among them with its count.
    ``verdicts`` may be shorter than ``nodes``: the nodes past its end were not recorded."""

    __slots__ = ("counted", "nodes", "verdicts")

    def __init__(self, nodes: Sequence[Named], verdicts: Sequence[Status | None],
                 counted: list[tuple[Status, int]]) -> None:
        self.nodes = nodes
        self.verdicts = verdicts
        self.counted = counted


class NodeToStatus(MutableMapping[str, Status]):
    """Node name -> the Status of a node the pod does not fit on, in the order recorded."""

    __slots__ = ("_batches", "_counted", "_entries", "_size")

    def __init__(self, entries: Mapping[str, Status] | None = None) -> None:
        self._entries: dict[str, Status] = dict(entries or {})
        #: Batches recorded but not yet written into ``_entries``, which is empty while there are any.
        self._batches: list[_Batch] = []
        self._size = len(self._entries)
        self._counted: list[tuple[Status, int]] | None = None

    def record(self, nodes: Sequence[Named], verdicts: Sequence[Status | None],
               counted: list[tuple[Status, int]]) -> None:
        """The verdict of each node of ``nodes`` (None where it fits; a shorter list leaves the rest
        unrecorded), whose distinct Status objects and their counts are ``counted``. The nodes must be
        new to this mapping."""
        failures = sum(times for _, times in counted)
        if not failures:
            return
        self._counted = None
        batch = _Batch(nodes, verdicts, counted)
        if self._entries:  # the mapping is a dict already: keep to it
            self._write(batch)
            self._size = len(self._entries)
        else:
            self._batches.append(batch)
            self._size += failures

    def counted(self) -> list[tuple[Status, int]]:
        """Each distinct Status object with how many nodes have it, in no particular order."""
        counted = self._counted
        if counted is not None:
            return counted
        if self._entries:
            counted = counted_by_identity(list(self._entries.values()))
        elif len(self._batches) == 1:
            counted = self._batches[0].counted
        else:
            objects: dict[int, Status] = {}
            times: Counter[int] = Counter()
            for batch in self._batches:
                for status, count in batch.counted:
                    objects.setdefault(id(status), status)
                    times[id(status)] += count
            counted = [(status, times[ident]) for ident, status in objects.items()]
        self._counted = counted
        return counted

    def _materialize(self) -> None:
        for batch in self._batches:
            self._write(batch)
        self._batches.clear()

    def _write(self, batch: _Batch) -> None:
        verdicts = batch.verdicts
        named = cast("Iterator[tuple[str, Status]]", zip(map(_name_of, batch.nodes), verdicts, strict=False))
        self._entries.update(itertools.compress(named, map(operator.is_not, verdicts, _NONES)))

    def __getitem__(self, name: str) -> Status:
        if self._batches:
            self._materialize()
        return self._entries[name]

    def __setitem__(self, name: str, status: Status) -> None:
        if self._batches:
            self._materialize()
        self._counted = None
        self._entries[name] = status
        self._size = len(self._entries)

    def __delitem__(self, name: str) -> None:
        if self._batches:
            self._materialize()
        self._counted = None
        del self._entries[name]
        self._size = len(self._entries)

    def __iter__(self) -> Iterator[str]:
        if self._batches:
            self._materialize()
        return iter(self._entries)

    def keys(self) -> KeysView[str]:
        self._materialize()
        return self._entries.keys()

    def values(self) -> ValuesView[Status]:
        self._materialize()
        return self._entries.values()

    def items(self) -> ItemsView[str, Status]:
        self._materialize()
        return self._entries.items()

    def __len__(self) -> int:
        return self._size

    def __contains__(self, name: object) -> bool:
        if self._batches:
            self._materialize()
        return name in self._entries

    def __repr__(self) -> str:
        return f"NodeToStatus({dict(self)!r})"


def count_statuses(node_to_status: Mapping[str, Status]) -> list[tuple[Status, int]]:
    """Each distinct Status object of ``node_to_status`` with how many nodes have it, in no particular
    order: ``NodeToStatus.counted`` when it is one, else counted here."""
    if isinstance(node_to_status, NodeToStatus):
        return node_to_status.counted()
    return counted_by_identity(list(node_to_status.values()))
