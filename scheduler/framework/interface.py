"""The extension points: one small Protocol each, as kube-scheduler's framework/interface.go.

A plugin is a class with a ``name`` and the methods of the extension points it implements; the
framework finds them by Protocol. Filter and Score each have two forms: per node (``FilterPlugin``,
``ScorePlugin``, as kube-scheduler's) and batch (``BatchFilterPlugin``, ``BatchScorePlugin``: many nodes
in one call, for plugins with a vector path over their derived node data, framework/nodedata.py). A
plugin implements either form or both; the framework calls the batch form when it has many nodes and
the plugin has it, and the per-node form otherwise.

Plugins return ``None`` for success or a ``Status`` (see status.py); the framework stamps the plugin's
name on it. The scheduling cycle (QueueSort through Permit) is synchronous and deterministic given the
snapshot; only the binding cycle (PreBind, Bind) and PostFilter (which talks to the API for preemption)
are async. ``PodGroupPostFilterPlugin`` runs after a pod group's cycle that did not fit (workload-aware
preemption, KEP-5710); ``PlacementGeneratePlugin`` and ``PlacementScorePlugin`` run in a pod group's cycle
too: the candidate sets of nodes the group may be placed in, and which of the feasible ones is best
(topology-aware workload scheduling, KEP-5732).

Plugins see a snapshot (``SharedLister``), never the network: Filter reads only the ``NodeInfo`` it is
handed, because preemption passes modified copies.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Awaitable, Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from cluster.api import objects_pb2
from cluster.api.selectors import LabelSelector
from scheduler.clock import Clock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.dra_manager import DeviceID, DRAManager
from scheduler.framework.namespaces import NamespaceLabels
from scheduler.framework.nodedata import NodeSet
from scheduler.framework.pod_groups import GangPolicy
from scheduler.framework.status import Status
from scheduler.framework.types import (
    NodeInfo,
    NodeScore,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from scheduler.framework.waiting_pods import WaitingPods

if TYPE_CHECKING:
    # The extenders' interface is built on the framework's types: imported for annotations only.
    from scheduler.extender.interface import Extender

#: Score range of a plugin after NormalizeScore (kube-scheduler's MinNodeScore / MaxNodeScore).
MIN_NODE_SCORE = 0
MAX_NODE_SCORE = 100


class PluginError(Exception):
    """Raised by Score (which returns a plain int) when it cannot score; becomes an ERROR status."""


# ------------------------------------------------------------------------------------------ listers


class NodeInfoLister(Protocol):
    def list(self) -> Sequence[NodeInfo]:
        """Every node, in a stable order."""
        ...

    def get(self, node_name: str) -> NodeInfo:
        """The node's info; raises KeyError for an unknown node."""
        ...

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        """The nodes that run at least one pod with (anti-)affinity terms."""
        ...

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        ...

    def change_mark(self) -> int:
        """A mark of the node changes so far, for ``changed_since``."""
        ...

    def changed_since(self, mark: int) -> Sequence[str] | None:
        """The names of the nodes whose NodeInfo was replaced, added or dropped after ``mark`` (an
        earlier ``change_mark()`` of this lister), possibly repeated; every other node has
        the very same NodeInfo object as then. None when the lister no longer knows (its log is
        bounded): the caller must then look at every node."""
        ...


@runtime_checkable
class NodeTableLister(Protocol):
    """A NodeInfoLister that also hands out its nodes with their rows in its node table (its derived
    node data), for the batch Filter and Score plugins' vector paths (the scheduler's snapshot is one)."""

    def list(self) -> Sequence[NodeInfo]: ...

    def node_set(self, nodes: Sequence[NodeInfo]) -> NodeSet:
        """``nodes``, this lister's own NodeInfos, with their rows."""
        ...

    def rotated(self, first: int) -> NodeSet:
        """Every node, from position ``first`` of ``list()`` round to the one before it, with their rows."""
        ...


#: Whether instances of a type are NodeTableListers, by type (see ``as_node_table_lister``).
_TABLE_LISTER_TYPES: dict[type, bool] = {}


def as_node_table_lister(lister: object) -> NodeTableLister | None:
    """``lister`` if it is a ``NodeTableLister``, else None: ``isinstance`` decided once per type, since a
    runtime protocol's isinstance looks every member up again on each call (tens of microseconds, in
    every scheduling cycle). The listers define the members on their class, so their type decides."""
    kind = type(lister)
    table = _TABLE_LISTER_TYPES.get(kind)
    if table is None:
        table = _TABLE_LISTER_TYPES[kind] = isinstance(lister, NodeTableLister)
    return cast("NodeTableLister", lister) if table else None


class StorageInfoLister(Protocol):
    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether a pod on a node of the snapshot uses the PersistentVolumeClaim ``key``
        ("namespace/name")."""
        ...


class SharedLister(Protocol):
    """The snapshot of one scheduling cycle."""

    def node_infos(self) -> NodeInfoLister: ...

    def storage_infos(self) -> StorageInfoLister: ...


class PodNominator(Protocol):
    """Pods nominated to nodes by preemption, waiting for their victims to go."""

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]: ...

    def nominated_node_names(self) -> Collection[str]:
        """The nodes that may have nominated pods (every node with one is in it), usually none: Filter
        asks once per batch of nodes instead of once per node."""
        ...

    def delete_nominated_pod_if_exists(self, pod: objects_pb2.Pod) -> None:
        """Forget the pod's nomination (preemption took the room it was promised)."""
        ...


class PluginsRunner(Protocol):
    """The plugins of the handle's own profile, run as the scheduling cycle runs them (kube-scheduler's
    PluginsRunner and RunFilterPluginsWithNominatedPods): preemption's dry run filters with them."""

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter as the cycle runs it: a gang's preemption simulates its members' placements."""
        ...

    def run_filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None: ...


#: What plugins write the status of: a pod (its nomination), a PodGroup (preemption's DisruptionTarget),
#: a ResourceClaim (DynamicResources' allocation and reservation).
StatusObject = TypeVar("StatusObject", objects_pb2.Pod, objects_pb2.PodGroup, objects_pb2.CompositePodGroup,
                         objects_pb2.ResourceClaim)


#: What plugins update (metadata and spec): VolumeBinding's PersistentVolume claimRef and claim annotation.
SpecObject = TypeVar("SpecObject", objects_pb2.PersistentVolume, objects_pb2.PersistentVolumeClaim)


class APIClient(Protocol):
    """The API calls plugins make (``cluster.client.Client`` has them). The framework names them here
    rather than importing the client: plugins reach the network only through their handle."""

    async def get(self, kind: str, name: str, namespace: str = "") -> Any: ...

    @property
    def fence(self) -> Any:
        """The leader's fence of its term (None when not leading): update_status, delete and bind carry it
        of themselves, a create only when given it."""
        ...

    async def create(self, obj: objects_pb2.ResourceClaim, *, fence: Any = None) -> objects_pb2.ResourceClaim:
        """Create a ResourceClaim (DynamicResources' claim for a pod's extended resources)."""
        ...

    async def update_status(self, obj: StatusObject) -> StatusObject: ...

    async def update(self, obj: SpecObject, *, fence: Any = None) -> SpecObject:
        """Replace the object's metadata and spec; fenced only when given ``fence`` (the client's own
        fence does not apply to an update)."""
        ...

    async def delete(
        self, kind: str, name: str, namespace: str = "", *, grace_period_seconds: int | None = None
    ) -> Any: ...

    async def bind(self, namespace: str, name: str, node_name: str) -> objects_pb2.Pod: ...

    async def bind_group(self, bindings: Sequence[tuple[str, str, str]]) -> list[objects_pb2.Pod]:
        """Bind every (namespace, pod, node) in one transaction: all bound, or none and it raises."""
        ...


class NamespaceLister(Protocol):
    """The namespaces the scheduler knows (``scheduler.framework.namespaces.NamespaceIndex``, fed by its
    Namespace informer)."""

    def labels(self, name: str) -> Mapping[str, str] | None:
        """The labels of the Namespace object ``name``; None when there is none."""
        ...

    def snapshot(self) -> NamespaceLabels:
        """Every namespace's labels as they are now; later events do not change what it returns."""
        ...


class WorkloadLister(Protocol):
    """The Services and workload controllers the scheduler knows (``scheduler.framework.workloads.
    WorkloadIndex``, fed by its informers)."""

    def default_selector(self, pod: objects_pb2.Pod) -> LabelSelector:
        """kube-scheduler's DefaultSelector: the selectors of the pod's namespace's Services that select
        it and of its existing ReplicationController, ReplicaSet or StatefulSet controller; empty when
        none."""
        ...


class StorageLister(Protocol):
    """The storage objects the scheduler knows (``scheduler.framework.storage.StorageObjects``, fed by its
    informers): the informers' objects, never to be changed."""

    def persistent_volume(self, name: str) -> objects_pb2.PersistentVolume | None: ...

    def persistent_volumes(self) -> Iterable[objects_pb2.PersistentVolume]: ...

    def persistent_volume_claim(
        self, namespace: str, name: str
    ) -> objects_pb2.PersistentVolumeClaim | None: ...

    def storage_class(self, name: str) -> objects_pb2.StorageClass | None: ...

    def storage_classes(self) -> Iterable[objects_pb2.StorageClass]: ...

    def csi_node(self, name: str) -> objects_pb2.CSINode | None: ...

    def csi_driver(self, name: str) -> objects_pb2.CSIDriver | None: ...

    def csi_storage_capacities(self) -> Iterable[objects_pb2.CSIStorageCapacity]: ...

    async def changed(self) -> None:
        """Return at the next change the informers deliver."""
        ...


class PodGroupLister(Protocol):
    """The pod groups the scheduler knows (``scheduler.framework.pod_groups.PodGroupIndex``): each
    group's key is "namespace/name"; a pod's is ``pod_groups.group_key_of(pod)``."""

    def pod_group(self, key: str) -> objects_pb2.PodGroup | None:
        """The PodGroup, None if it does not exist (yet)."""
        ...

    def policy(self, key: str) -> GangPolicy | None:
        """The group's gang policy; None for a group scheduled pod by pod, or not known."""
        ...

    def topology_key(self, key: str) -> str:
        """The node label of the group's topology constraint, "" for none."""
        ...

    def placed(self, key: str) -> list[tuple[objects_pb2.Pod, str]]:
        """The group's pods on a node, bound or assumed, each with its node."""
        ...

    def members(self, key: str) -> Sequence[objects_pb2.Pod]:
        """Every pod of the group: pending, assumed, bound, terminating."""
        ...

    def member_count(self, key: str) -> int:
        """The group's pods that are not terminating."""
        ...

    def pending(self, key: str) -> list[objects_pb2.Pod]:
        """The group's pods waiting for a node (not assumed, not terminating)."""
        ...

    def assumed_count(self, key: str) -> int:
        """The group's pods with a binding in flight."""
        ...

    def bound_count(self, key: str) -> int:
        """The group's pods bound to a node."""
        ...

    def composite(self, key: str) -> objects_pb2.CompositePodGroup | None:
        """The CompositePodGroup, None if it does not exist (yet)."""
        ...

    def parent_of(self, key: str) -> str:
        """The key of the PodGroup's parent CompositePodGroup, "" for none."""
        ...

    def composite_root(self, key: str) -> tuple[str, str]:
        """(the topmost CompositePodGroup above the PodGroup, the first ancestor not known or "")."""
        ...

    def composite_children(self, key: str) -> tuple[list[str], list[str]]:
        """The composite's child PodGroups and child CompositePodGroups, each sorted."""
        ...

    def tree_groups(self, root: str) -> list[str]:
        """Every PodGroup under the composite, depth first."""
        ...


class EventRecorder(Protocol):
    """Where plugins file Kubernetes events (``scheduler.events.EventRecorder``); returns at once."""

    def record(
        self,
        obj: objects_pb2.Pod | objects_pb2.PodGroup,
        type_: str,
        reason: str,
        action: str,
        message: str,
        *,
        component: str,
        annotations: Mapping[str, str] | None = None,
    ) -> None: ...


#: A plugin's API calls run in the background: called with ``release`` (which ends the preemptor's hold
#: in the queue, before the call whose event should requeue it), returns None when done or an error
#: Status when an API call failed.
BackgroundCalls = Callable[[Callable[[], None]], Awaitable[Status | None]]


class APIDispatcher(Protocol):
    """Runs a preemption's API calls in the background, holding the preemptor in the queue meanwhile
    (kube-scheduler's async preemption; ``scheduler.preemptions.Preemptions``)."""

    def start(self, preemptor: PodInfo, node_name: str, evict: BackgroundCalls) -> None: ...

    def start_group(self, members: Sequence[PodInfo], group: str, evict: BackgroundCalls) -> None:
        """As ``start`` for every member of gang ``group`` at once: all are held, all released together."""
        ...


class Handle(PluginsRunner, Protocol):
    """What a plugin factory gets from the framework (kube-scheduler's framework.Handle): one handle per
    profile, everything present. ``FrameworkHandle`` (handle.py) is the one implementation, the same in
    the scheduler, ``podsched simulate`` and tests."""

    def snapshot(self) -> SharedLister:
        """The current cycle's snapshot."""
        ...

    @property
    def nominator(self) -> PodNominator: ...

    @property
    def client(self) -> APIClient:
        """The API client, for plugins that write: Bind, preemption."""
        ...

    @property
    def event_recorder(self) -> EventRecorder: ...

    @property
    def extenders(self) -> Sequence[Extender]:
        """The scheduler's HTTP extenders, in the order they are asked."""
        ...

    def pod_disruption_budgets(self) -> Sequence[objects_pb2.PodDisruptionBudget]:
        """The current PodDisruptionBudgets (the scheduler's informer)."""
        ...

    @property
    def waiting_pods(self) -> WaitingPods:
        """The pods waiting at Permit, of every profile."""
        ...

    @property
    def api_dispatcher(self) -> APIDispatcher: ...

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded random source: a seeded run makes the same random choices."""
        ...

    @property
    def pod_groups(self) -> PodGroupLister:
        """The PodGroups and their pods (the scheduler's informers)."""
        ...

    @property
    def namespaces(self) -> NamespaceLister:
        """The namespaces' labels (the scheduler's informer), for namespaceSelectors."""
        ...

    @property
    def workloads(self) -> WorkloadLister:
        """The Services' and workload controllers' selectors (the scheduler's informers), for default
        topology spreading."""
        ...

    @property
    def dra_manager(self) -> DRAManager:
        """The ResourceClaims, ResourceSlices and DeviceClasses (the scheduler's informers), with the
        devices claims hold and the allocations in flight (kube-scheduler's SharedDRAManager)."""
        ...

    @property
    def storage(self) -> StorageLister:
        """The PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities
        (the scheduler's informers), for the volume plugins."""
        ...

    @property
    def clock(self) -> Clock:
        """The scheduler's clock (``podsched simulate``'s virtual one there), for a plugin that waits."""
        ...

    def device_ranker(self) -> DeviceRankPlugin | None:
        """The profile's enabled Score plugin that ranks devices (``DeviceRankPlugin``) with the highest
        weight, the first in the profile's Score order on a tie; None when no Score plugin ranks them."""
        ...

    def running_filter_plugins(self, state: CycleState) -> list[str]:
        """The Filter plugins that run in the cycle of ``state`` (those that did not SKIP at PreFilter),
        in the profile's order: what preemption's dry run asks when it filters."""
        ...

    def running_pre_filter_extensions(self, state: CycleState) -> list[str]:
        """The PreFilter plugins whose AddPod and RemovePod run in the cycle of ``state``."""
        ...


# -------------------------------------------------------------------------------- cluster events


class EventResource(enum.Enum):
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
    POD_GROUP = "PodGroup"
    PRIORITY_CLASS = "PriorityClass"
    NAMESPACE = "Namespace"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    WILDCARD = "*"


class ActionType(enum.Flag):
    ADD = enum.auto()
    DELETE = enum.auto()
    UPDATE_NODE_ALLOCATABLE = enum.auto()
    UPDATE_NODE_LABEL = enum.auto()
    UPDATE_NODE_TAINT = enum.auto()
    UPDATE_NODE_CONDITION = enum.auto()
    UPDATE_NODE_UNSCHEDULABLE = enum.auto()
    UPDATE_POD_LABEL = enum.auto()
    UPDATE_POD_SCALE_DOWN = enum.auto()
    UPDATE_POD_TOLERATIONS = enum.auto()
    #: A pending pod's status got the name of a ResourceClaim generated for it.
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = enum.auto()
    UPDATE_OTHER = enum.auto()
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_UNSCHEDULABLE | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN
              | UPDATE_POD_TOLERATIONS | UPDATE_POD_GENERATED_RESOURCE_CLAIM | UPDATE_OTHER)
    ALL = ADD | DELETE | UPDATE


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """Something that changed in the cluster, that may make unschedulable pods schedulable."""

    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this event is one that ``registered`` (a plugin's interest) covers."""
        resource_ok = registered.resource in (self.resource, EventResource.WILDCARD) or (
            registered.resource is EventResource.POD
            and self.resource in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)
        )
        return resource_ok and bool(registered.action & self.action)


class QueueingHint(enum.Enum):
    QUEUE = "Queue"
    SKIP = "Skip"


#: (the pod waiting to be scheduled, the object before the event or None, after it or None) -> hint.
QueueingHintFn = Callable[[objects_pb2.Pod, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    #: None means always QUEUE.
    hint: QueueingHintFn | None = None


# The PodGroup events: the scheduler's event handlers send them to the group's own pods only.
POD_GROUP_ADD = ClusterEvent(EventResource.POD_GROUP, ActionType.ADD, "PodGroupAdd")
POD_GROUP_UPDATE = ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE, "PodGroupUpdate")
#: A pending pod joined a group and its group's pods reached minCount.
POD_GROUP_MEMBER_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD, "PodGroupMemberAdd")


# ----------------------------------------------------------------------------------- extension points


@runtime_checkable
class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """None to let the pod into activeQ; a rejection gates it (it waits, never popped, until an
        event this plugin registered makes the queue ask again)."""
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` is popped before ``b``."""
        ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The events that could change this plugin's verdict on a pod it rejected. A plugin that can
        reject a pod must list them: a pod it rejected is requeued only by these."""
        ...


class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state when preemption or nominated pods add or remove a pod."""

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Compute per-pod state once. UNSCHEDULABLE_AND_UNRESOLVABLE rejects the pod for every node;
        SKIP skips this plugin's Filter for the cycle."""
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        """None if the pod can run on the node; UNSCHEDULABLE if removing pods could change that,
        UNSCHEDULABLE_AND_UNRESOLVABLE if not."""
        ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[Status | None]:
        """``filter`` of each node, in one call, in the nodes' order. ``nodes`` has rows when they are
        the snapshot's own (``nodes.node_data`` then answers with the plugin's node data), none
        otherwise. The framework asks about many nodes at once when every Filter plugin of the cycle
        has this form; raising makes it ask node by node."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    async def post_filter(
        self, state: CycleState, pod: PodInfo, node_to_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Runs when no node fits (preemption). Success with a nominated node ends PostFilter."""
        ...


@dataclass(frozen=True, slots=True)
class FailedPodGroup:
    """A gang whose whole-group cycle did not fit, every placement of it already undone (and the
    snapshot showing that): what PodGroupPostFilter looks at."""

    policy: GangPolicy
    #: Members bound or being bound before the cycle.
    admitted: int
    #: The members the cycle tried, in the order it tried them.
    members: Sequence[PodInfo]

    @property
    def needed(self) -> int:
        """How many of ``members`` must find a node for the gang to reach its minimum."""
        return self.policy.min_count - self.admitted


@dataclass(frozen=True, slots=True)
class PodGroupPostFilterResult:
    """Where the gang's members are nominated (member key -> node; "" or absent clears a nomination),
    and what to add to the group's message ("preemption: ...")."""

    nominations: Mapping[str, str]
    message: str = ""


@runtime_checkable
class PodGroupPostFilterPlugin(Plugin, Protocol):
    def pod_group_post_filter(
        self, group: FailedPodGroup
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """Runs when a gang's whole-group cycle did not fit (kube-scheduler's PodGroupPostFilter,
        workload-aware preemption). Success with a result ends PodGroupPostFilter; an UNSCHEDULABLE
        status's reasons go after the group's message; a None result leaves the members' nominations."""
        ...


# ------------------------------------------------------------------------------------ placements


@dataclass(frozen=True, slots=True)
class Placement:
    """A candidate set of nodes for a pod group (kube-scheduler's fwk.Placement): the group's cycle tries
    to place the whole group on these nodes only. ``name`` is for messages ("r1", or "z1/r1" when
    several generators' placements were intersected)."""

    name: str
    nodes: tuple[NodeInfo, ...]


def placements_by_label(nodes: Iterable[NodeInfo], key: str, only: str | None = None) -> list[Placement]:
    """One placement per value of node label ``key`` among ``nodes``, named by the value, in name order
    (a node without the label is in none); only the one of value ``only`` when it is given."""
    by_domain: dict[str, list[NodeInfo]] = {}
    for info in nodes:
        labels = info.node.metadata.labels if info.node is not None else {}
        if key in labels and (only is None or labels[key] == only):
            by_domain.setdefault(labels[key], []).append(info)
    return [Placement(domain, tuple(infos)) for domain, infos in sorted(by_domain.items())]


@dataclass(frozen=True, slots=True)
class PodGroupInfo:
    """The pod group a placement cycle is about: its key ("namespace/name"), its PodGroup and the
    members this cycle places, in the order it places them."""

    key: str
    pod_group: objects_pb2.PodGroup
    pods: Sequence[PodInfo]


@dataclass(frozen=True, slots=True)
class ProposedAssignment:
    pod: PodInfo
    node_name: str


@dataclass(frozen=True, slots=True)
class PodGroupAssignments:
    """Where the simulation inside ``placement`` put each member it could place."""

    placement: Placement
    proposed: tuple[ProposedAssignment, ...]


@dataclass(slots=True)
class PlacementScore:
    """One plugin's score of one placement, rewritten in place by its normalization."""

    placement: Placement
    score: int


@runtime_checkable
class PlacementGeneratePlugin(Plugin, Protocol):
    def generate_placements(self, state: CycleState, group: PodGroupInfo,
                            parent: Placement) -> Sequence[Placement]:
        """The placements the plugin partitions ``parent`` (every node of the cluster) into; they may
        overlap, and none means nowhere fits. ``[parent]`` itself means the plugin does not constrain
        this group. Raises PluginError when it cannot tell."""
        ...


class PlacementScoreExtensions(Protocol):
    def normalize_placement_score(self, state: CycleState, group: PodGroupInfo,
                                  scores: list[PlacementScore]) -> None:
        """Rewrite ``scores`` in place into MIN_NODE_SCORE..MAX_NODE_SCORE (raises PluginError)."""
        ...


@runtime_checkable
class PlacementScorePlugin(Plugin, Protocol):
    def score_placement(self, state: CycleState, group: PodGroupInfo,
                        assignments: PodGroupAssignments) -> int:
        """The raw score of a feasible placement, given where its simulation put the members; higher is
        better (raises PluginError when it cannot score)."""
        ...

    def placement_score_extensions(self) -> PlacementScoreExtensions | None: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        """Compute per-pod scoring state once over the feasible nodes; SKIP skips this plugin's Score."""
        ...


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        """Rewrite ``scores`` in place into MIN_NODE_SCORE..MAX_NODE_SCORE."""
        ...


@runtime_checkable
class BatchNormalizeScore(Protocol):
    """ScoreExtensions that also normalize plain scores, preferred by the framework (no NodeScore per
    node)."""

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        """``normalize_score`` of plain scores, in place, in the nodes' order."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        """The node's raw score (raises PluginError when it cannot score)."""
        ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> list[int]:
        """``score`` of every node, in one call, in the nodes' order (with rows when they are the
        snapshot's own); preferred by the framework over ``score``."""
        ...


@dataclass(frozen=True, slots=True)
class DeviceCandidate:
    """A device the DRA allocator may take for one request of a pod's claims on a node."""

    #: (driver, pool, device): the allocator's DeviceID.
    device_id: DeviceID
    #: The device's position in its ResourceSlice (a GPU's index on its node).
    index: int
    #: The device's capacity, by name.
    capacity: Mapping[str, Fraction]
    #: The capacity left: what allocated claims, allocations in flight and the devices the allocation
    #: chose already for the pod's earlier requests consume taken out (nothing left of a device held
    #: whole).
    free: Mapping[str, Fraction]


@runtime_checkable
class DeviceRankPlugin(Plugin, Protocol):
    """A Score plugin that also says which devices a pod should get on the node chosen for it:
    DynamicResources asks the enabled one with the highest weight when it allocates the pod's claims for
    that node (Reserve). Ranking orders the search, it never changes whether the claims fit."""

    def rank_devices(self, state: CycleState, pod: PodInfo, node: NodeInfo,
                     candidates: Sequence[DeviceCandidate]) -> Sequence[int] | None:
        """The candidates' positions in the order the allocator should try them; None: keep its order."""
        ...


#: What a plugin makes of a pod for opportunistic batching: any hashable value, equal for two pods
#: exactly when the plugin would treat them alike.
Signature = Hashable


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    def sign(self, pod: PodInfo) -> Signature | None:
        """The parts of the pod this plugin's PreFilter, Filter, PreScore and Score look at, or None
        when it cannot promise what signing means: that, for pods with equal signatures, its Filter
        verdict and raw Score of a node depend on that NodeInfo alone (never on other nodes, other
        pods' placement elsewhere, or anything outside the snapshot). A None makes the pod unbatchable
        (kube-scheduler's SignPlugin, KEP-5598)."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Undo ``reserve``; must be idempotent and must not fail."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """None to allow, a rejection to deny, WAIT with a timeout in seconds to hold the pod."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Bind the pod; SKIP passes it to the next bind plugin."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


#: A plugin factory: the plugin's args from pluginConfig (an instance of its ``ARGS``, already defaulted
#: and validated; None when it takes none) and the framework handle. The args are Any here because each
#: plugin has its own type, which the framework does not know.
PluginFactory = Callable[[Any, Handle], Plugin]
