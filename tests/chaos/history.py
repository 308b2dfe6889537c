"""Judging a recorded store history: the chaos tests' oracle.

The recorder (``recorder.py``) keeps every store event the API servers caused, in revision order, each
with the object decoded and the local monotonic time it arrived. The functions here take that list and
return the problems they find, one readable line each (an empty list means the rule held), so a failing
chaos run names the pod, the node, the revision and the holder at fault.

The rules are checked from the store's own history, not from what any component says about itself:

* ``check_bound_once``: every pod is bound exactly once and its nodeName never changes afterwards.
* ``check_never_over_allocatable``: replaying every revision, the pods bound to a node and not finished
  never request more cpu, memory or pod slots than the node's allocatable.
* ``check_gangs_never_partly_bound``: replaying every revision, no gang (a PodGroup with a gang policy)
  ever has some of its pods bound but fewer than its minCount (minMember): all or nothing.
* ``check_gangs_in_one_domain``: replaying every revision, no group with a topology constraint
  (``schedulingConstraints.topology[0].key``) ever has pods bound on nodes of two domains of its key, or
  on a node without that label.
* ``check_devices_allocated_once``: replaying every revision (the last one is the final state), no
  device is held by two ResourceClaim allocations (nor twice by one), unless its ResourceSlice lets it be
  allocated many times, where no two allocations share a shareID; an allocation with admin access holds
  nothing, and a device no slice publishes is a problem too.
* ``check_volumes_bound_once``: replaying every revision, no PersistentVolume is the volume of two bound
  claims, and no bound claim's volume names another claim in its claimRef.
* ``check_claims_on_their_pods_nodes``: in the final state, every claim of every bound pod (its
  ``resourceClaimName``, else the name its status records) exists, is allocated and reserved for the pod,
  and holds only devices its node's slices publish.
* ``check_fenced_binds``: every bind carries the API server's ``bound-under-fence`` annotation, and the
  lease, as it stood at the bind's revision, was held by that holder in the tenure that token names.
* ``check_fenced_events``: every event write of a scheduler carries the API server's
  ``written-under-fence`` annotation, and the lease, as it stood at the write's revision, was held in the
  tenure it names: no event of a term landed after the next term began. (The controllers' events are no
  leader's, and unfenced.)
* ``check_no_writes_after``: a deposed holder wrote nothing (no bind, no event, no lease write) after a
  revision.

One store transaction can write several keys in one revision (a gang's pods are bound together), so the
replaying checks apply every event of a revision before they judge the state it left: a revision is
never seen half-applied (``revisions``).

The pod-request arithmetic, and how a pod names its group and a PodGroup its minimum, are written out
here rather than borrowed from the scheduler or the API, so the scheduler is never judged by its own code.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

from google.protobuf.message import Message

from cluster.api import containers, objects_pb2
from cluster.api.fencing import (
    BOUND_UNDER_FENCE_ANNOTATION,
    FENCING_TOKEN_ANNOTATION,
    WRITTEN_UNDER_FENCE_ANNOTATION,
)
from cluster.api.kinds import (
    EVENT,
    LEASE,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    POD_GROUP,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
)
from cluster.api.quantity import int_value, milli_value
from store.base import EventType

#: The annotation the API server puts on a pod it bound under a fence: "<holder>@<token>".
BOUND_UNDER_FENCE = BOUND_UNDER_FENCE_ANNOTATION
#: The annotation the API server puts on an event written under a fence: "<holder>@<token>".
WRITTEN_UNDER_FENCE = WRITTEN_UNDER_FENCE_ANNOTATION
#: The annotation the API server keeps on a lease renewed within one tenure: the tenure's token.
FENCING_TOKEN = FENCING_TOKEN_ANNOTATION
#: The component the chaos run's schedulers report their events as (their one profile's name).
SCHEDULER_COMPONENT = "default-scheduler"
#: The scheduler's lease by default (kube-system/kube-scheduler).
SCHEDULER_LEASE_KEY = LEASE.key("kube-system", "kube-scheduler")

#: The annotation the PV controller puts on a claim once it bound it (written out, as the other rules are).
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: Pod phases after which a pod holds nothing on its node.
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
PODS = "pods"
#: The node resources checked, with how to read a quantity of each (cpu in milli-units).
PARSERS = {"cpu": milli_value, "memory": int_value, PODS: int_value}
#: The resources a pod requests through its containers (a pod slot it takes by being there).
REQUESTED = ("cpu", "memory")
#: scheduler-plugins' Coscheduling: the label a pod names its PodGroup with, and that PodGroup's apiVersion.
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
COSCHEDULING_API_VERSION = "scheduling.x-k8s.io/v1alpha1"


@dataclass(frozen=True, slots=True)
class Recorded:
    """One store event as the recorder received it."""

    revision: int
    type: EventType
    key: str
    #: PUT: the object as written (resourceVersion = ``revision``). DELETE: the object as it was.
    obj: Message
    #: ``time.monotonic()`` in the recording process when the event arrived.
    arrived: float


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The scheduler lease as one write left it."""

    revision: int
    arrived: float
    #: "" when released (or deleted).
    holder: str
    #: The token of the tenure this write belongs to: the annotation when present, else the revision.
    token: int


def revisions(events: Iterable[Recorded]) -> Iterator[tuple[int, list[Recorded]]]:
    """The events grouped by revision, in order: each group is everything one store transaction wrote."""
    for revision, group in groupby(events, key=lambda event: event.revision):
        yield revision, list(group)


# ------------------------------------------------------------------------------------------ leases


def lease_records(events: Iterable[Recorded], lease_key: str = SCHEDULER_LEASE_KEY) -> list[LeaseRecord]:
    """Every write of the lease at ``lease_key``, in order, with its holder and tenure token."""
    records = []
    for event in events:
        if event.key != lease_key:
            continue
        if event.type is EventType.DELETE:
            records.append(LeaseRecord(event.revision, event.arrived, "", event.revision))
            continue
        lease = event.obj
        assert isinstance(lease, objects_pb2.Lease)
        records.append(LeaseRecord(event.revision, event.arrived, lease.spec.holder_identity,
                                   _tenure_token(lease, event.revision)))
    return records


def _tenure_token(lease: objects_pb2.Lease, revision: int) -> int:
    annotation = lease.metadata.annotations.get(FENCING_TOKEN)
    return int(annotation) if annotation is not None else revision


def takeover_after(
    events: Iterable[Recorded], since: float, old_holder: str, lease_key: str = SCHEDULER_LEASE_KEY
) -> LeaseRecord | None:
    """The first lease write that arrived after local time ``since`` and names a holder other than
    ``old_holder`` (an empty holder, a release, does not count): the end of a failover."""
    for record in lease_records(events, lease_key):
        if record.arrived >= since and record.holder and record.holder != old_holder:
            return record
    return None


# -------------------------------------------------------------------------------------------- pods


@dataclass(frozen=True, slots=True)
class Binding:
    """A pod write that gave the pod a node."""

    revision: int
    key: str
    node: str
    #: The bound-under-fence annotation ("" when absent).
    fence: str


def bindings(events: Iterable[Recorded]) -> list[Binding]:
    """Every write that took a pod from no node to a node, in order."""
    node_of: dict[str, str] = {}
    found = []
    for event in events:
        if not event.key.startswith(POD.key_prefix()):
            continue
        if event.type is EventType.DELETE:
            node_of.pop(event.key, None)
            continue
        pod = event.obj
        assert isinstance(pod, objects_pb2.Pod)
        if pod.spec.node_name and not node_of.get(event.key):
            found.append(Binding(event.revision, event.key, pod.spec.node_name,
                                 pod.metadata.annotations.get(BOUND_UNDER_FENCE, "")))
        node_of[event.key] = pod.spec.node_name
    return found


def check_bound_once(events: Sequence[Recorded], submitted: Iterable[str] = ()) -> list[str]:
    """Every pod in the history (and every key in ``submitted``, the pods a client was told it created)
    was created, bound exactly once, and kept its node until the history ends or it was deleted; a
    pod deleted and created again under the same key is judged per incarnation (by uid)."""
    problems = []
    # key -> [uid, node, times bound] of the incarnation alive now.
    alive: dict[str, list] = {}
    seen: set[str] = set()

    def finish(key: str, uid: str, times_bound: int, why: str) -> None:
        if times_bound == 0:
            problems.append(f"pod {key} (uid {uid}) was never bound ({why})")

    for event in events:
        if not event.key.startswith(POD.key_prefix()):
            continue
        seen.add(event.key)
        pod = event.obj
        assert isinstance(pod, objects_pb2.Pod)
        state = alive.get(event.key)
        if event.type is EventType.DELETE:
            if state is not None:
                finish(event.key, state[0], state[2], f"deleted at revision {event.revision}")
                del alive[event.key]
            continue
        if state is not None and state[0] != pod.metadata.uid:
            problems.append(f"pod {event.key} changed uid from {state[0]} to {pod.metadata.uid} without a "
                            f"deletion (revision {event.revision})")
            state = None
        if state is None:
            state = alive[event.key] = [pod.metadata.uid, "", 0]
        node = pod.spec.node_name
        if node != state[1]:
            if state[1]:
                problems.append(f"pod {event.key} moved from node {state[1]} to {node or '(none)'} at "
                                f"revision {event.revision}")
            if node:
                state[2] += 1
                if state[2] > 1:
                    problems.append(f"pod {event.key} was bound {state[2]} times (to {node} at revision "
                                    f"{event.revision})")
            state[1] = node
    for key, (uid, _node, times_bound) in alive.items():
        finish(key, uid, times_bound, "at the end of the history")
    for key in sorted(set(submitted) - seen):
        problems.append(f"pod {key} was submitted but never appears in the store's history")
    return problems


# ------------------------------------------------------------------------------------------- nodes


def _quantity(quantities: Mapping[str, str], resource: str) -> int:
    text = quantities.get(resource)
    return PARSERS[resource](text) if text else 0


def pod_need(pod: objects_pb2.Pod) -> dict[str, int]:
    """What a pod holds on its node, as Kubernetes counts it (``containers.pod_total``: init containers
    one at a time, sidecars beside everything after them), plus the pod overhead; and one pod slot."""
    need = {}
    for resource in REQUESTED:
        total = containers.pod_total(
            pod, lambda c, resource=resource: _quantity(c.resources.requests, resource),
            operator.add, max, 0,
        )
        need[resource] = total + _quantity(pod.spec.overhead, resource)
    need[PODS] = 1
    return need


def check_never_over_allocatable(events: Sequence[Recorded]) -> list[str]:
    """Replay the history: after every revision (all of its events applied), each node it touched holds
    pods (bound, not in a terminal phase, not yet deleted) whose needs fit its allocatable cpu, memory
    and pods (a resource the node does not list is 0, as the scheduler's fit check reads it). Pods bound
    to a node the store does not hold are a problem too."""
    problems = []
    allocatable: dict[str, dict[str, int]] = {}
    #: pod key -> (node, need) for every pod holding room now.
    holding: dict[str, tuple[str, dict[str, int]]] = {}
    used: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(PARSERS, 0))

    for revision, written in revisions(events):
        #: The nodes this revision changed or placed pods on, in the order it first touched them.
        touched: dict[str, None] = {}
        for event in written:
            if event.key.startswith(NODE.key_prefix()):
                name = event.obj.metadata.name  # type: ignore[attr-defined]
                touched[name] = None
                if event.type is EventType.DELETE:
                    allocatable.pop(name, None)
                else:
                    status = event.obj.status  # type: ignore[attr-defined]
                    allocatable[name] = {r: _quantity(status.allocatable, r) for r in PARSERS}
            elif event.key.startswith(POD.key_prefix()):
                previous = holding.pop(event.key, None)
                if previous is not None:
                    for resource, amount in previous[1].items():
                        used[previous[0]][resource] -= amount
                pod = event.obj
                assert isinstance(pod, objects_pb2.Pod)
                holds = pod.spec.node_name and pod.status.phase not in TERMINAL_PHASES
                if event.type is EventType.PUT and holds:
                    node = pod.spec.node_name
                    touched[node] = None
                    holding[event.key] = (node, pod_need(pod))
                    for resource, amount in holding[event.key][1].items():
                        used[node][resource] += amount
        for node in touched:
            if used[node][PODS] == 0:
                continue
            limits = allocatable.get(node)
            if limits is None:
                problems.append(f"revision {revision}: pods are bound to node {node}, which the store does "
                                f"not hold")
                continue
            for resource, limit in limits.items():
                if used[node][resource] > limit:
                    problems.append(f"revision {revision}: node {node} is over allocatable {resource}: "
                                    f"{used[node][resource]} requested > {limit}")
    return problems


# ------------------------------------------------------------------------------------------- gangs


def pod_group_of(pod: objects_pb2.Pod) -> str:
    """The name of the PodGroup a pod belongs to (in its namespace), "" for none: its
    spec.schedulingGroup.podGroupName, else its label scheduling.x-k8s.io/pod-group."""
    return pod.spec.scheduling_group.pod_group_name or pod.metadata.labels.get(POD_GROUP_LABEL, "")


def gang_min_count(group: objects_pb2.PodGroup) -> int | None:
    """How many of a PodGroup's pods must be placed together, None when it is no gang:
    scheduling.x-k8s.io's spec.minMember (a gang from 1 up); scheduling.k8s.io's
    spec.schedulingPolicy.gang.minCount (a basic policy is no gang)."""
    if group.api_version == COSCHEDULING_API_VERSION:
        return group.spec.min_member if group.spec.min_member >= 1 else None
    if group.spec.scheduling_policy.HasField("gang"):
        return group.spec.scheduling_policy.gang.min_count
    return None


def gang_bindings(events: Iterable[Recorded]) -> dict[str, list[Binding]]:
    """The binds of every pod that names a PodGroup, by "namespace/group", in order."""
    group_of: dict[str, str] = {}
    for event in events:
        if event.key.startswith(POD.key_prefix()) and event.type is EventType.PUT:
            pod = event.obj
            assert isinstance(pod, objects_pb2.Pod)
            if name := pod_group_of(pod):
                group_of[event.key] = f"{pod.metadata.namespace}/{name}"
    found: dict[str, list[Binding]] = defaultdict(list)
    for binding in bindings(events):
        if binding.key in group_of:
            found[group_of[binding.key]].append(binding)
    return dict(found)


def check_gangs_never_partly_bound(events: Sequence[Recorded]) -> list[str]:
    """Replay the history revision by revision: whenever a revision changes how many pods of a group
    are bound (a bind, or a bound pod's deletion), a gang then has none of its pods bound or at least its
    minCount (minMember), as its PodGroup stands at that revision. A pod bound at a revision where the
    store holds no PodGroup of its name is a problem too (a gang's pods wait for their group).

    "Bound" is a pod that exists with a node, so a gang whose members are deleted one by one, or partly
    evicted, reads as partly bound as well."""
    problems = []
    #: "namespace/name" -> the PodGroup as it stands now.
    groups: dict[str, objects_pb2.PodGroup] = {}
    #: pod key -> "namespace/group" of every pod bound now that names a group.
    bound_in: dict[str, str] = {}
    #: "namespace/group" -> the names of its pods bound now.
    bound: dict[str, set[str]] = defaultdict(set)

    for revision, written in revisions(events):
        #: group -> how many of its pods were bound before this revision, for the groups it changes.
        before: dict[str, int] = {}
        newly_bound: dict[str, list[str]] = defaultdict(list)
        for event in written:
            if event.key.startswith(POD_GROUP.key_prefix()):
                meta = event.obj.metadata  # type: ignore[attr-defined]
                name = f"{meta.namespace}/{meta.name}"
                if event.type is EventType.DELETE:
                    groups.pop(name, None)
                else:
                    assert isinstance(event.obj, objects_pb2.PodGroup)
                    groups[name] = event.obj
                continue
            if not event.key.startswith(POD.key_prefix()):
                continue
            pod = event.obj
            assert isinstance(pod, objects_pb2.Pod)
            was = bound_in.pop(event.key, None)
            if was is not None:
                before.setdefault(was, len(bound[was]))
                bound[was].discard(pod.metadata.name)
            group_name = pod_group_of(pod)
            if event.type is EventType.PUT and pod.spec.node_name and group_name:
                group = f"{pod.metadata.namespace}/{group_name}"
                before.setdefault(group, len(bound[group]))
                if pod.metadata.name not in bound[group]:
                    newly_bound[group].append(pod.metadata.name)
                bound[group].add(pod.metadata.name)
                bound_in[event.key] = group
        for group, count_before in before.items():
            count = len(bound[group])
            if count == count_before:
                continue
            if group not in groups:
                if newly_bound[group]:
                    problems.append(f"revision {revision}: pods {', '.join(sorted(newly_bound[group]))} of "
                                    f"group {group} were bound, but the store holds no PodGroup {group}")
                continue
            minimum = gang_min_count(groups[group])
            if minimum is not None and 0 < count < minimum:
                names = ", ".join(sorted(bound[group]))
                problems.append(f"revision {revision}: gang {group} has {count} of its pods bound, fewer "
                                f"than its minCount {minimum} (bound: {names})")
    return problems


def group_topology_key(group: objects_pb2.PodGroup) -> str:
    """The node label a scheduling.k8s.io PodGroup must sit in one domain of ("" for none)."""
    constraints = group.spec.scheduling_constraints.topology
    return constraints[0].key if constraints else ""


def check_gangs_in_one_domain(events: Sequence[Recorded]) -> list[str]:
    """Replay the history revision by revision: after every revision, each group with a topology
    constraint (as its PodGroup stands then) has its bound pods on nodes that all carry its key with one
    value. A problem is reported once per group, at the first revision that splits it."""
    problems = []
    groups: dict[str, objects_pb2.PodGroup] = {}
    labels: dict[str, Mapping[str, str]] = {}
    #: "namespace/group" -> {pod name: node} of its pods bound now.
    bound: dict[str, dict[str, str]] = defaultdict(dict)
    split: set[str] = set()
    for revision, written in revisions(events):
        for event in written:
            if event.key.startswith(NODE.key_prefix()) and event.type is EventType.PUT:
                assert isinstance(event.obj, objects_pb2.Node)
                labels[event.obj.metadata.name] = dict(event.obj.metadata.labels)
            elif event.key.startswith(POD_GROUP.key_prefix()):
                meta = event.obj.metadata  # type: ignore[attr-defined]
                name = f"{meta.namespace}/{meta.name}"
                if event.type is EventType.DELETE:
                    groups.pop(name, None)
                else:
                    assert isinstance(event.obj, objects_pb2.PodGroup)
                    groups[name] = event.obj
            elif event.key.startswith(POD.key_prefix()):
                pod = event.obj
                assert isinstance(pod, objects_pb2.Pod)
                if group_name := pod_group_of(pod):
                    members = bound[f"{pod.metadata.namespace}/{group_name}"]
                    if event.type is EventType.PUT and pod.spec.node_name:
                        members[pod.metadata.name] = pod.spec.node_name
                    else:
                        members.pop(pod.metadata.name, None)
        for name, group in groups.items():
            key = group_topology_key(group)
            if not key or name in split or not bound[name]:
                continue
            domains = {labels.get(node, {}).get(key) for node in bound[name].values()}
            if len(domains) > 1 or None in domains:
                split.add(name)
                where = ", ".join(f"{pod} on {node} ({key}={labels.get(node, {}).get(key, '(none)')})"
                                  for pod, node in sorted(bound[name].items()))
                problems.append(f"revision {revision}: group {name} is bound across domains of {key}: "
                                f"{where}")
    return problems


# ----------------------------------------------------------------------------------------- devices

#: A device as an allocation names it: (driver, pool, device).
DeviceKey = tuple[str, str, str]


def claim_allocations(claim: objects_pb2.ResourceClaim) -> list[tuple[DeviceKey, str]]:
    """The devices a claim's allocation holds, each with its shareID ("" for none); admin access holds
    none."""
    return [((r.driver, r.pool, r.device), r.share_id) for r in claim.status.allocation.devices.results
            if not r.admin_access]


def check_devices_allocated_once(events: Sequence[Recorded]) -> list[str]:
    """Replay the history: after every revision, each device whose holders it changed is held by at
    most one allocation of one claim, or, if the slice publishing it allows multiple allocations, by
    allocations with distinct shareIDs; and every device allocated is published by a slice of the store
    at that revision. A claim's deletion, or its allocation cleared, lets its devices go."""
    problems = []
    #: slice key -> {device: allows multiple allocations} of every slice stored now.
    slices: dict[str, dict[DeviceKey, bool]] = {}
    #: claim key -> what its allocation holds now.
    held: dict[str, list[tuple[DeviceKey, str]]] = {}
    #: device -> [(claim key, shareID)] of every allocation holding it now.
    holders: dict[DeviceKey, list[tuple[str, str]]] = defaultdict(list)

    for revision, written in revisions(events):
        touched: dict[DeviceKey, None] = {}
        for event in written:
            if event.key.startswith(RESOURCE_SLICE.key_prefix()):
                published = event.obj
                assert isinstance(published, objects_pb2.ResourceSlice)
                spec = published.spec
                if event.type is EventType.DELETE:
                    slices.pop(event.key, None)
                else:
                    slices[event.key] = {(spec.driver, spec.pool.name, device.name):
                                         device.allow_multiple_allocations for device in spec.devices}
                continue
            if not event.key.startswith(RESOURCE_CLAIM.key_prefix()):
                continue
            for device, share in held.pop(event.key, []):
                holders[device].remove((event.key, share))
                touched[device] = None
            claim = event.obj
            assert isinstance(claim, objects_pb2.ResourceClaim)
            if event.type is EventType.PUT and (allocated := claim_allocations(claim)):
                held[event.key] = allocated
                for device, share in allocated:
                    holders[device].append((event.key, share))
                    touched[device] = None
        if not touched:
            continue
        shareable: dict[DeviceKey, bool] = {}
        for devices in slices.values():
            shareable.update(devices)
        for device in touched:
            claims = holders[device]
            if not claims:
                continue
            name = "/".join(device)
            if device not in shareable:
                owners = ", ".join(sorted({c for c, _ in claims}))
                problems.append(f"revision {revision}: device {name}, allocated to {owners}, is published by "
                                "no ResourceSlice")
            elif not shareable[device] and len(claims) > 1:
                problems.append(f"revision {revision}: device {name} is allocated {len(claims)} times: "
                                f"{', '.join(sorted(c for c, _ in claims))}")
            elif shareable[device]:
                shares = [share for _, share in claims]
                if twice := sorted({share for share in shares if shares.count(share) > 1}):
                    problems.append(f"revision {revision}: device {name}, which allows multiple allocations, "
                                    f"has shareID {twice[0]!r} in {shares.count(twice[0])} allocations: "
                                    f"{', '.join(sorted(c for c, s in claims if s == twice[0]))}")
    return problems


# ----------------------------------------------------------------------------------------- volumes


def check_volumes_bound_once(events: Sequence[Recorded]) -> list[str]:
    """Replay the history: after every revision, no PersistentVolume is the bound volume of two claims (a
    claim is bound to the volume its spec.volumeName names once it carries the bind-completed
    annotation), and no bound claim's volume names another claim (by uid) in its claimRef. A claim's
    deletion lets its volume go."""
    problems = []
    #: claim key -> (uid, the volume it is bound to) of every bound claim now.
    bound: dict[str, tuple[str, str]] = {}
    #: volume name -> the uid its claimRef names ("" for none) of every volume stored now.
    claim_ref_uid: dict[str, str] = {}
    for revision, written in revisions(events):
        touched: dict[str, None] = {}
        for event in written:
            if event.key.startswith(PERSISTENT_VOLUME.key_prefix()):
                volume = event.obj
                assert isinstance(volume, objects_pb2.PersistentVolume)
                if event.type is EventType.DELETE:
                    claim_ref_uid.pop(volume.metadata.name, None)
                else:
                    claim_ref_uid[volume.metadata.name] = volume.spec.claim_ref.uid
                touched[volume.metadata.name] = None
                continue
            if not event.key.startswith(PERSISTENT_VOLUME_CLAIM.key_prefix()):
                continue
            if (before := bound.pop(event.key, None)) is not None:
                touched[before[1]] = None
            claim = event.obj
            assert isinstance(claim, objects_pb2.PersistentVolumeClaim)
            if (event.type is EventType.PUT and claim.spec.volume_name
                    and BIND_COMPLETED in claim.metadata.annotations):
                bound[event.key] = (claim.metadata.uid, claim.spec.volume_name)
                touched[claim.spec.volume_name] = None
        if not touched:
            continue
        claims_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for key, (uid, volume_name) in bound.items():
            if volume_name in touched:
                claims_of[volume_name].append((key, uid))
        for volume_name, claims in sorted(claims_of.items()):
            if len(claims) > 1:
                problems.append(f"revision {revision}: PersistentVolume {volume_name} is bound to "
                                f"{len(claims)} claims: {', '.join(sorted(key for key, _ in claims))}")
                continue
            [(key, uid)] = claims
            owner = claim_ref_uid.get(volume_name, "")
            if owner and owner != uid:
                problems.append(f"revision {revision}: claim {key} is bound to PersistentVolume "
                                f"{volume_name}, whose claimRef names the claim with uid {owner}")
    return problems


def _final(events: Iterable[Recorded], prefix: str) -> dict[str, Message]:
    """The objects under ``prefix`` as the history leaves them, by key."""
    final: dict[str, Message] = {}
    for event in events:
        if event.key.startswith(prefix):
            if event.type is EventType.DELETE:
                final.pop(event.key, None)
            else:
                final[event.key] = event.obj
    return final


def claimed_pods(events: Sequence[Recorded]) -> dict[str, objects_pb2.Pod]:
    """The pods the history ends with that claim devices, by key."""
    final = _final(events, POD.key_prefix())
    return {key: pod for key, pod in final.items()
            if isinstance(pod, objects_pb2.Pod) and pod.spec.resource_claims}


def check_claims_on_their_pods_nodes(events: Sequence[Recorded]) -> list[str]:
    """In the state the history ends with: every claim of every bound pod exists, is allocated, is
    reserved for that pod, and each of its devices is published by a slice of the pod's node."""
    problems = []
    claims = _final(events, RESOURCE_CLAIM.key_prefix())
    node_of_device: dict[DeviceKey, str] = {}
    for published in _final(events, RESOURCE_SLICE.key_prefix()).values():
        assert isinstance(published, objects_pb2.ResourceSlice)
        spec = published.spec
        for published_device in spec.devices:
            node_of_device[(spec.driver, spec.pool.name, published_device.name)] = spec.node_name
    for key, pod in sorted(claimed_pods(events).items()):
        if not pod.spec.node_name:
            continue
        generated = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses
                     if s.HasField("resource_claim_name")}
        for pod_claim in pod.spec.resource_claims:
            name = (pod_claim.resource_claim_name if pod_claim.HasField("resource_claim_name")
                    else generated.get(pod_claim.name))
            where = f"pod {key} on {pod.spec.node_name}: claim {pod_claim.name}"
            claim = claims.get(RESOURCE_CLAIM.key(pod.metadata.namespace, name)) if name else None
            if claim is None:
                problems.append(f"{where}: {f'ResourceClaim {name} does not exist' if name else 'none made'}")
                continue
            assert isinstance(claim, objects_pb2.ResourceClaim)
            if not claim.status.HasField("allocation"):
                problems.append(f"{where}: ResourceClaim {name} is not allocated")
                continue
            if pod.metadata.uid not in {ref.uid for ref in claim.status.reserved_for}:
                problems.append(f"{where}: ResourceClaim {name} is not reserved for the pod")
            for device, _share in claim_allocations(claim):
                if node_of_device.get(device) != pod.spec.node_name:
                    problems.append(f"{where}: ResourceClaim {name} holds device {'/'.join(device)} of node "
                                    f"{node_of_device.get(device) or '(none)'}")
    return problems


# --------------------------------------------------------------------------------------- fencing


@dataclass(frozen=True, slots=True)
class EventWrite:
    """One write (create or update) of an Event."""

    revision: int
    key: str
    reason: str
    #: The written-under-fence annotation ("" when absent).
    fence: str


def event_writes(events: Iterable[Recorded]) -> list[EventWrite]:
    """Every write of an Event a scheduler reported (its deletions aside), in order. The controllers'
    events (a claim waiting for its first consumer, a volume provisioned) are no leader's: unfenced."""
    found = []
    for event in events:
        if not event.key.startswith(EVENT.key_prefix()) or event.type is EventType.DELETE:
            continue
        written = event.obj
        assert isinstance(written, objects_pb2.Event)
        if written.reporting_component != SCHEDULER_COMPONENT:
            continue
        found.append(EventWrite(event.revision, event.key, written.reason,
                                written.metadata.annotations.get(WRITTEN_UNDER_FENCE, "")))
    return found


def _check_fenced_writes(
    writes: Iterable[tuple[int, str, str]], annotation: str, leases: Sequence[LeaseRecord]
) -> list[str]:
    """For each (revision, what was written, its fence annotation) in revision order: the annotation is
    <holder>@<token> and at that revision the lease was held by <holder> in the tenure of <token>."""
    problems = []
    position, current = 0, None
    for revision, where, fence in writes:
        while position < len(leases) and leases[position].revision < revision:
            current = leases[position]
            position += 1
        holder, at, token_text = fence.rpartition("@")
        if not fence:
            problems.append(f"{where} carries no {annotation} annotation")
            continue
        if not at or not holder or not token_text.isdigit():
            problems.append(f"{where}: {annotation} is {fence!r}, not <holder>@<token>")
            continue
        if current is None:
            problems.append(f"{where} under fence {fence}, before the lease existed")
        elif current.holder != holder or current.token != int(token_text):
            problems.append(
                f"{where} under fence {fence}, but the lease was then held by "
                f"{current.holder or '(nobody)'} in the tenure of token {current.token} "
                f"(lease revision {current.revision})"
            )
    return problems


def check_fenced_binds(events: Sequence[Recorded], lease_key: str = SCHEDULER_LEASE_KEY) -> list[str]:
    """Every bind carries ``bound-under-fence: <holder>@<token>``, and at the bind's revision the lease
    was held by <holder> in the tenure that began at revision <token>."""
    writes = ((b.revision, f"pod {b.key} bound to {b.node} at revision {b.revision}", b.fence)
              for b in bindings(events))
    return _check_fenced_writes(writes, BOUND_UNDER_FENCE, lease_records(events, lease_key))


def check_fenced_events(events: Sequence[Recorded], lease_key: str = SCHEDULER_LEASE_KEY) -> list[str]:
    """Every event write carries ``written-under-fence: <holder>@<token>``, and at its revision the lease
    was held by <holder> in the tenure that began at revision <token>: no term's event landed after the
    next term began (of the events the schedulers reported)."""
    writes = ((w.revision, f"event {w.key} ({w.reason}) written at revision {w.revision}", w.fence)
              for w in event_writes(events))
    return _check_fenced_writes(writes, WRITTEN_UNDER_FENCE, lease_records(events, lease_key))


def check_no_writes_after(
    events: Sequence[Recorded], holder: str, revision: int, lease_key: str = SCHEDULER_LEASE_KEY
) -> list[str]:
    """Nothing written on behalf of ``holder`` landed after ``revision``: no bind and no event under its
    fence, and no lease write naming it as holder."""
    problems = []
    for binding in bindings(events):
        if binding.revision > revision and binding.fence.rpartition("@")[0] == holder:
            problems.append(f"pod {binding.key} was bound to {binding.node} under {holder}'s fence at "
                            f"revision {binding.revision}, after revision {revision}")
    for write in event_writes(events):
        if write.revision > revision and write.fence.rpartition("@")[0] == holder:
            problems.append(f"event {write.key} ({write.reason}) was written under {holder}'s fence at "
                            f"revision {write.revision}, after revision {revision}")
    for record in lease_records(events, lease_key):
        if record.revision > revision and record.holder == holder:
            problems.append(f"the lease was written with holder {holder} at revision {record.revision}, "
                            f"after revision {revision}")
    return problems
