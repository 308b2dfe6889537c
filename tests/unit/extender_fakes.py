"""An in-memory stand-in for an HTTP extender (the ``Extender`` protocol), for unit tests of the rules
the scheduler applies around extenders. The real HTTP extender is tested against real servers in
tests/integration."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cluster.api import objects_pb2
from scheduler.extender.interface import ExtenderError, FilterOutcome, HostPriority, Victims
from scheduler.framework import NodeInfo, NodeInfoLister


@dataclass
class FakeExtender:
    """Turns down the nodes in ``failed`` / ``unresolvable``, scores by ``scores``, keeps the preemption
    candidates ``preempt`` returns, binds into ``bound``. ``error`` makes every call fail with it; the
    verbs present are the ones given a behaviour. ``calls`` records (verb, node names) per call."""

    name: str = "http://fake/ext"
    ignorable: bool = False
    failed: Mapping[str, str] = field(default_factory=dict)
    unresolvable: Mapping[str, str] = field(default_factory=dict)
    scores: Mapping[str, int] | None = None
    weight: int = 1
    preempt: Callable[[Mapping[str, Victims]], dict[str, Victims]] | None = None
    binds: bool = False
    filters: bool = True
    error: str = ""
    interested: Callable[[objects_pb2.Pod], bool] = lambda pod: True
    calls: list[tuple[str, list[str]]] = field(default_factory=list)
    bound: list[tuple[str, str]] = field(default_factory=list)
    closed: bool = False

    @property
    def is_filter(self) -> bool:
        return self.filters

    @property
    def is_prioritizer(self) -> bool:
        return self.scores is not None

    @property
    def is_binder(self) -> bool:
        return self.binds

    @property
    def supports_preemption(self) -> bool:
        return self.preempt is not None

    def is_interested(self, pod: objects_pb2.Pod) -> bool:
        return self.interested(pod)

    def _call(self, verb: str, names: Sequence[str]) -> None:
        self.calls.append((verb, list(names)))
        if self.error:
            raise ExtenderError(f"extender {self.name}: {verb} failed: {self.error}")

    async def filter(self, pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]) -> FilterOutcome:
        self._call("filter", [n.name for n in nodes])
        rejected = {*self.failed, *self.unresolvable}
        return FilterOutcome(
            [n for n in nodes if n.name not in rejected],
            {k: v for k, v in self.failed.items()},
            {k: v for k, v in self.unresolvable.items()},
        )

    async def prioritize(
        self, pod: objects_pb2.Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[HostPriority], int]:
        self._call("prioritize", [n.name for n in nodes])
        scores = self.scores or {}
        return [HostPriority(n.name, scores[n.name]) for n in nodes if n.name in scores], self.weight

    async def process_preemption(
        self, pod: objects_pb2.Pod, victims: Mapping[str, Victims], nodes: NodeInfoLister
    ) -> dict[str, Victims]:
        self._call("preempt", sorted(victims))
        assert self.preempt is not None
        return self.preempt(victims)

    async def bind(self, pod: objects_pb2.Pod, node_name: str) -> None:
        self._call("bind", [node_name])
        self.bound.append((pod.metadata.name, node_name))

    async def close(self) -> None:
        self.closed = True
