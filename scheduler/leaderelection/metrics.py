"""The leader election's Prometheus metrics, under client-go's names, read from the elector at scrape
time (nothing to keep in step)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector


class ElectionState(Protocol):
    """What the collector reads of an elector."""

    @property
    def name(self) -> str: ...

    @property
    def is_leader(self) -> bool: ...

    @property
    def slowpath_total(self) -> int: ...

    @property
    def observed_transitions(self) -> int: ...


class LeaderElectionCollector(Collector):
    """leader_election_master_status, leader_election_slowpath_total and the observed lease transitions of
    one elector, labelled with its lease's name."""

    def __init__(self, elector: ElectionState) -> None:
        self._elector = elector

    def collect(self) -> Iterator[Metric]:
        name = self._elector.name
        status = GaugeMetricFamily(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, "
            "1 indicates master. 'name' is the string used to identify the lease. Please make sure to "
            "group by name.",
            labels=["name"],
        )
        status.add_metric([name], 1 if self._elector.is_leader else 0)
        yield status
        slowpath = CounterMetricFamily(
            "leader_election_slowpath",
            "Total number of slow path exercised in renewing leader leases. 'name' is the string used to "
            "identify the lease. Please make sure to group by name.",
            labels=["name"],
        )
        slowpath.add_metric([name], self._elector.slowpath_total)
        yield slowpath
        transitions = GaugeMetricFamily(
            "podsched_leader_election_lease_transitions",
            "The lease's leaseTransitions as this replica last observed it: how many times it changed hands.",
            labels=["name"],
        )
        transitions.add_metric([name], self._elector.observed_transitions)
        yield transitions
