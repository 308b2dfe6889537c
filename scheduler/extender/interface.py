"""What the scheduler asks of an extender (kube-scheduler's framework.Extender), and the values that pass
between them. ``HTTPExtender`` (httpextender.py) is the implementation: KEP-1819's webhook over HTTP.

Every call may raise ``ExtenderError``; what that means depends on the call (calls.py applies
kube-scheduler's rules): a failed Filter fails the scheduling cycle unless the extender is ignorable, a
failed Prioritize is ignored, a failed preemption call fails PostFilter unless ignorable, a failed Bind
fails the binding unless ignorable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from cluster.api import objects_pb2
from scheduler.framework import NodeInfo, NodeInfoLister, PodInfo

#: The extender API's score range (extender/v1 MaxExtenderPriority); scaled to the framework's 0..100.
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10


class ExtenderError(Exception):
    """A call failed: the extender was unreachable or too slow, answered other than 200, sent what does
    not parse, or said so in its answer's Error field. The message names the extender and the verb."""


@dataclass(frozen=True, slots=True)
class FilterOutcome:
    """What an extender's filter left: the nodes that may run the pod (a subset of those it was given, in
    the extender's order) and the ones it turned down, with its message for each."""

    feasible: list[NodeInfo]
    failed: dict[str, str]
    #: Turned down for a reason preemption cannot change: preemption skips these nodes.
    failed_and_unresolvable: dict[str, str]


@dataclass(frozen=True, slots=True)
class HostPriority:
    host: str
    #: MIN_EXTENDER_PRIORITY..MAX_EXTENDER_PRIORITY as the extender sent it (not yet scaled or weighted).
    score: int


@dataclass(frozen=True, slots=True)
class Victims:
    """The pods preemption would evict on one node (extender/v1 Victims)."""

    pods: tuple[PodInfo, ...]
    #: How many of them are evicted in spite of a PodDisruptionBudget.
    num_pdb_violations: int


class Extender(Protocol):
    @property
    def name(self) -> str:
        """The extender's urlPrefix: how logs, events and metrics name it."""
        ...

    @property
    def ignorable(self) -> bool:
        """Whether scheduling goes on without it when it fails."""
        ...

    @property
    def is_filter(self) -> bool: ...

    @property
    def is_prioritizer(self) -> bool: ...

    @property
    def is_binder(self) -> bool: ...

    @property
    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: objects_pb2.Pod) -> bool:
        """Whether the pod goes to this extender: every pod when it manages no resources, else a pod
        whose containers or init containers request or limit one of them."""
        ...

    async def filter(self, pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]) -> FilterOutcome:
        """The nodes of ``nodes`` that the extender accepts (all of them without a filterVerb)."""
        ...

    async def prioritize(
        self, pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[HostPriority], int]:
        """The extender's scores of ``nodes`` and the weight to apply to them."""
        ...

    async def process_preemption(
        self, pod: objects_pb2.Pod, victims: Mapping[str, Victims], nodes: NodeInfoLister
    ) -> dict[str, Victims]:
        """The candidates the extender accepts, possibly with other victims: a subset of ``victims``'s
        nodes, each victim one of the pods ``nodes`` has on that node."""
        ...

    async def bind(self, pod: objects_pb2.Pod, node_name: str) -> None:
        """Have the extender bind ``pod`` to ``node_name`` (it writes the binding to the API itself)."""
        ...

    async def close(self) -> None:
        """Release connections; called once when the scheduler stops."""
        ...
