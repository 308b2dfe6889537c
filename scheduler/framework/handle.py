"""``FrameworkHandle``: the one implementation of ``Handle``, built alike by the scheduler, ``podsched
simulate`` (which runs the scheduler) and tests.

One handle per profile, as kube-scheduler gives each profile's framework its own: what it shares with the
other profiles' handles (snapshot, nominator, client, recorder, PDBs, extenders, waiting pods, dispatcher,
random source, pod groups, namespaces, workloads, DRA manager, storage objects, clock) it is given whole at
construction; its plugins runner (and the profile's device ranker) is the framework built with it, which
attaches itself when it is made, since the plugins that framework runs are made with the handle.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from cluster.api import objects_pb2
from scheduler.clock import Clock, SystemClock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.dra_manager import DRAManager
from scheduler.framework.interface import (
    APIClient,
    APIDispatcher,
    DeviceRankPlugin,
    EventRecorder,
    NamespaceLister,
    PluginsRunner,
    PodGroupLister,
    PodNominator,
    SharedLister,
    StorageLister,
    WorkloadLister,
)
from scheduler.framework.status import Status
from scheduler.framework.types import NodeInfo, PodInfo, PreFilterResult
from scheduler.framework.waiting_pods import WaitingPods

if TYPE_CHECKING:
    from scheduler.extender.interface import Extender


class ProfileRunner(PluginsRunner, Protocol):
    """The framework a handle serves: its plugins, run as the cycle runs them, and which one ranks
    devices."""

    def device_ranker(self) -> DeviceRankPlugin | None: ...

    def running_filter_plugins(self, state: CycleState) -> list[str]: ...

    def running_pre_filter_extensions(self, state: CycleState) -> list[str]: ...


class FrameworkHandle:
    """What one profile's plugins may use; see ``Handle`` for each member."""

    def __init__(
        self,
        *,
        snapshot: SharedLister,
        nominator: PodNominator,
        client: APIClient,
        event_recorder: EventRecorder,
        pod_disruption_budgets: Callable[[], Sequence[objects_pb2.PodDisruptionBudget]],
        extenders: Sequence[Extender],
        waiting_pods: WaitingPods,
        api_dispatcher: APIDispatcher,
        rng: random.Random,
        pod_groups: PodGroupLister,
        namespaces: NamespaceLister,
        workloads: WorkloadLister,
        dra_manager: DRAManager,
        storage: StorageLister,
        clock: Clock | None = None,
    ) -> None:
        self._snapshot = snapshot
        self._nominator = nominator
        self._client = client
        self._event_recorder = event_recorder
        self._pod_disruption_budgets = pod_disruption_budgets
        self._extenders = extenders
        self._waiting_pods = waiting_pods
        self._api_dispatcher = api_dispatcher
        self._rng = rng
        self._pod_groups = pod_groups
        self._namespaces = namespaces
        self._workloads = workloads
        self._dra_manager = dra_manager
        self._storage = storage
        self._clock = clock or SystemClock()
        self._runner: ProfileRunner | None = None

    def attach(self, runner: ProfileRunner) -> None:
        """Make ``runner`` (the framework being built with this handle) the plugins it runs."""
        if self._runner is not None:
            raise ValueError("this handle already serves a framework: each profile needs its own handle")
        self._runner = runner

    def snapshot(self) -> SharedLister:
        return self._snapshot

    @property
    def nominator(self) -> PodNominator:
        return self._nominator

    @property
    def client(self) -> APIClient:
        return self._client

    @property
    def event_recorder(self) -> EventRecorder:
        return self._event_recorder

    @property
    def extenders(self) -> Sequence[Extender]:
        return self._extenders

    def pod_disruption_budgets(self) -> Sequence[objects_pb2.PodDisruptionBudget]:
        return self._pod_disruption_budgets()

    @property
    def waiting_pods(self) -> WaitingPods:
        return self._waiting_pods

    @property
    def api_dispatcher(self) -> APIDispatcher:
        return self._api_dispatcher

    @property
    def rng(self) -> random.Random:
        return self._rng

    @property
    def pod_groups(self) -> PodGroupLister:
        return self._pod_groups

    @property
    def namespaces(self) -> NamespaceLister:
        return self._namespaces

    @property
    def workloads(self) -> WorkloadLister:
        return self._workloads

    @property
    def dra_manager(self) -> DRAManager:
        return self._dra_manager

    @property
    def storage(self) -> StorageLister:
        return self._storage

    @property
    def clock(self) -> Clock:
        return self._clock

    # ------------------------------------------------------------------------ the profile's plugins

    def device_ranker(self) -> DeviceRankPlugin | None:
        # A plugin made outside a profile (a unit test's) has no Score plugins to rank with.
        return None if self._runner is None else self._runner.device_ranker()

    def running_filter_plugins(self, state: CycleState) -> list[str]:
        return self._plugins().running_filter_plugins(state)

    def running_pre_filter_extensions(self, state: CycleState) -> list[str]:
        return self._plugins().running_pre_filter_extensions(state)

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._plugins().run_filter_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._plugins().run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._plugins().run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)

    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> tuple[PreFilterResult | None, Status | None]:
        return self._plugins().run_pre_filter(state, pod)

    def run_filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._plugins().run_filter(state, pod, node_info)

    def _plugins(self) -> ProfileRunner:
        if self._runner is None:
            raise RuntimeError("the handle's framework is still being built: plugins run only after")
        return self._runner
