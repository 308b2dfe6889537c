"""The web view's model: the contract's objects (docs/ui.md), kept current one change at a time by the
informers' handlers, and what changed since the last delta.

Every change costs what it touches, never the size of the cluster: a pod's change re-reads that pod and
moves its requests between at most two nodes' sums (and its PodGroup's counts); the summary's counts and
sums are kept the same way. Each collection keeps a dirty set of keys; ``take_delta`` turns them into
upserts and removals (a node is upserted whole) and empties them, so a browser gets the whole model once
and then only what changed.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.message import Message

from cluster.api import objects_pb2, timeutil
from cluster.api.fencing import SCHEDULER_LEASE, observed_tenure_token
from cluster.api.kinds import metadata_of
from cluster.client import LeaderChange
from cluster.client.informer import discard_indexed
from cluster.ui import serialize
from cluster.ui.devices import DeviceIndex
from cluster.ui.serialize import Amounts, Json

#: The events the model keeps (the newest), and the page shows.
EVENTS_KEPT = 200
#: The leader changes the timeline keeps (the newest).
TIMELINE_KEPT = 100
#: Event reasons of pods pushed off their nodes: the page's preemptions panel. Only Preempted counts
#: toward ``summary.preemptions``.
PREEMPTED = "Preempted"

#: The lease duration liveness is judged by until the Lease says its own (kube-scheduler's default).
DEFAULT_LEASE_DURATION_S = 15
#: A holder renews every retry period, which the Lease does not carry: its cadence is the gap between its
#: last two renewals seen. It is late after this many of those gaps and RENEW_SLACK_S without a renewal
#: (or once the lease duration has passed, before a gap is seen).
LATE_RENEWAL_GAPS = 2
RENEW_SLACK_S = 1.0
#: A replica renews its LeaseCandidate once per lease duration: late after this many durations and
#: RENEW_SLACK_S (and stale, no longer a replica, after twice the duration and a second).
LATE_CANDIDATE_DURATIONS = 1.1

NODES, PODS, PDBS, POD_GROUPS = "nodes", "pods", "pdbs", "podGroups"
_COLLECTIONS = (NODES, PODS, PDBS, POD_GROUPS)


class ViewModel:
    """The view of one cluster; fed by ``on_*`` handlers, read by ``state`` and ``take_delta``."""

    def __init__(
        self,
        server: str,
        *,
        lease_namespace: str = SCHEDULER_LEASE.namespace,
        lease_name: str = SCHEDULER_LEASE.name,
        now: Callable[[], datetime] = timeutil.utc_now,
    ) -> None:
        self.server = server
        self.revision = 0
        self._lease_namespace, self._lease_name = lease_namespace, lease_name
        self._now = now
        #: Each node's own fields (serialize.node_view), by name.
        self._nodes: dict[str, Json] = {}
        self._pods: dict[str, Json] = {}
        self._pdbs: dict[str, Json] = {}
        self._groups: dict[str, objects_pb2.PodGroup] = {}
        #: Node name -> keys of the non-terminal pods bound to it, and what they request (known node or
        #: not: a pod may be seen before its node).
        self._node_pods: dict[str, set[str]] = {}
        self._node_requested: dict[str, Amounts] = {}
        #: Pod key -> (node, requests) of each pod counted on a node: bound and not terminal.
        self._holds: dict[str, tuple[str, Amounts]] = {}
        #: PodGroup key -> keys of the pods that name it.
        self._group_pods: dict[str, set[str]] = {}
        #: Each node's devices (ResourceSlices) and who holds them (ResourceClaims).
        self._devices = DeviceIndex()
        self._ready_nodes = 0
        self._allocatable: Amounts = {}
        self._requested: Amounts = {}
        self._bound = 0
        self._pending = 0
        self._preemptions = 0
        #: The newest events, oldest first, as ((time, revision), key) for ordering and by key.
        self._event_order: list[tuple[tuple[str, int], str]] = []
        self._events: dict[str, Json] = {}
        self._lease: objects_pb2.Lease | None = None
        self._timeline: list[Json] = []
        #: The LeaseCandidates of the watched Lease, by name, and the live ones as last sent.
        self._candidates: dict[str, objects_pb2.LeaseCandidate] = {}
        self._live: frozenset[str] = frozenset()
        #: The holder's last renewal seen, the gap before it (None until two of one holder are seen), and
        #: what was last sent of who renews late (the holder first, by its Lease; then the candidates).
        self._holder_renewal: tuple[str, datetime] | None = None
        self._holder_gap_s: float | None = None
        self._late: tuple[bool, frozenset[str]] = (False, frozenset())
        #: The leaseDurationSeconds of the last held version of the Lease (a released one says 1).
        self._lease_duration_s = DEFAULT_LEASE_DURATION_S
        self._dirty: dict[str, set[str]] = {name: set() for name in _COLLECTIONS}
        self._leadership_dirty = False
        #: Whether the API server answers the web view, and since when (wall time) it does or does not.
        self._api_server: Json = {"reachable": True, "since": None, "error": ""}
        self._api_server_dirty = False
        self._new_events: set[str] = set()

    # ----------------------------------------------------------------------------------- handlers

    def _seen(self, obj: Message) -> None:
        version = metadata_of(obj).resource_version
        if version:
            self.revision = max(self.revision, int(version))

    def on_node(self, node: objects_pb2.Node) -> None:
        self._seen(node)
        name = node.metadata.name
        old = self._nodes.get(name)
        new = serialize.node_view(node)
        if old is not None:
            self._node_gone(old)
        self._nodes[name] = new
        self._ready_nodes += new["ready"]
        serialize.add_into(self._allocatable, new["allocatable"])
        self._dirty[NODES].add(name)

    def on_node_deleted(self, node: objects_pb2.Node) -> None:
        self._seen(node)
        old = self._nodes.pop(node.metadata.name, None)
        if old is not None:
            self._node_gone(old)
            self._dirty[NODES].add(node.metadata.name)

    def _node_gone(self, view: Json) -> None:
        self._ready_nodes -= view["ready"]
        serialize.add_into(self._allocatable, view["allocatable"], -1)

    def on_pod(self, pod: objects_pb2.Pod) -> None:
        self._seen(pod)
        key = serialize.pod_key(pod)
        self._set_pod(key, serialize.pod_view(pod), holds=not serialize.is_terminal(pod))

    def on_pod_deleted(self, pod: objects_pb2.Pod) -> None:
        self._seen(pod)
        self._set_pod(serialize.pod_key(pod), None, holds=False)

    def _set_pod(self, key: str, new: Json | None, *, holds: bool) -> None:
        old = self._pods.pop(key, None)
        old_hold = self._holds.pop(key, None)
        new_hold = (new["node"], new["requests"]) if new is not None and new["node"] and holds else None
        if new_hold is not None:
            self._holds[key] = new_hold
        if old_hold != new_hold:
            if old_hold is not None:
                self._release(key, *old_hold)
            if new_hold is not None:
                self._hold(key, *new_hold)
        for view, sign in ((old, -1), (new, 1)):
            if view is not None:
                self._bound += sign * bool(view["node"])
                self._pending += sign * view["pending"]
        old_group, new_group = (view["podGroup"] if view else "" for view in (old, new))
        if old_group != new_group:
            if old_group:
                discard_indexed(self._group_pods, old_group, key)
            if new_group:
                self._group_pods.setdefault(new_group, set()).add(key)
        for group in {old_group, new_group} - {""}:
            if group in self._groups:
                self._dirty[POD_GROUPS].add(group)
        if new is not None:
            self._pods[key] = new
        self._dirty[PODS].add(key)

    def _hold(self, key: str, node: str, requests: Amounts) -> None:
        self._node_pods.setdefault(node, set()).add(key)
        one = {**requests, "pods": requests.get("pods", 0) + 1}
        serialize.add_into(self._node_requested.setdefault(node, {}), one)
        serialize.add_into(self._requested, one)
        self._dirty[NODES].add(node)

    def _release(self, key: str, node: str, requests: Amounts) -> None:
        discard_indexed(self._node_pods, node, key)
        one = {**requests, "pods": requests.get("pods", 0) + 1}
        requested = self._node_requested.get(node, {})
        serialize.add_into(requested, one, -1)
        if not requested:
            self._node_requested.pop(node, None)
        serialize.add_into(self._requested, one, -1)
        self._dirty[NODES].add(node)

    def on_pdb(self, pdb: objects_pb2.PodDisruptionBudget) -> None:
        self._seen(pdb)
        view = serialize.pdb_view(pdb)
        self._pdbs[view["key"]] = view
        self._dirty[PDBS].add(view["key"])

    def on_pdb_deleted(self, pdb: objects_pb2.PodDisruptionBudget) -> None:
        self._seen(pdb)
        key = f"{pdb.metadata.namespace}/{pdb.metadata.name}"
        self._pdbs.pop(key, None)
        self._dirty[PDBS].add(key)

    def on_pod_group(self, group: objects_pb2.PodGroup) -> None:
        self._seen(group)
        key = f"{group.metadata.namespace}/{group.metadata.name}"
        self._groups[key] = group
        self._dirty[POD_GROUPS].add(key)

    def on_pod_group_deleted(self, group: objects_pb2.PodGroup) -> None:
        self._seen(group)
        key = f"{group.metadata.namespace}/{group.metadata.name}"
        self._groups.pop(key, None)
        self._dirty[POD_GROUPS].add(key)

    def on_resource_slice(self, resource_slice: objects_pb2.ResourceSlice) -> None:
        self._seen(resource_slice)
        self._dirty[NODES] |= self._devices.on_slice(resource_slice, resource_slice.metadata.name)

    def on_resource_slice_deleted(self, resource_slice: objects_pb2.ResourceSlice) -> None:
        self._seen(resource_slice)
        self._dirty[NODES] |= self._devices.on_slice(None, resource_slice.metadata.name)

    def on_resource_claim(self, claim: objects_pb2.ResourceClaim) -> None:
        self._seen(claim)
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        self._dirty[NODES] |= self._devices.on_claim(claim, key)

    def on_resource_claim_deleted(self, claim: objects_pb2.ResourceClaim) -> None:
        self._seen(claim)
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        self._dirty[NODES] |= self._devices.on_claim(None, key)

    def on_event(self, event: objects_pb2.Event, *, new: bool = True) -> None:
        """An event written (``new``) or updated (a repeat counted): it takes its place by time among the
        newest. A deleted event stays in the stream: it happened."""
        self._seen(event)
        view = serialize.event_view(event)
        key = view["key"]
        if key in self._events:
            self._event_order.remove(next(entry for entry in self._event_order if entry[1] == key))
            del self._events[key]
        if new and event.reason == PREEMPTED:
            self._preemptions += 1
        entry = ((view["time"] or "", int(event.metadata.resource_version or 0)), key)
        bisect.insort(self._event_order, entry)
        self._events[key] = view
        self._new_events.add(key)
        if len(self._event_order) > EVENTS_KEPT:
            _, oldest = self._event_order.pop(0)
            del self._events[oldest]
            self._new_events.discard(oldest)

    def on_lease(self, lease: objects_pb2.Lease | None) -> None:
        """The scheduler's Lease as it is now (None once deleted): renewals and holders."""
        if lease is not None:
            self._seen(lease)
        self._lease = lease
        if lease is not None and lease.spec.holder_identity and lease.spec.HasField("lease_duration_seconds"):
            self._lease_duration_s = lease.spec.lease_duration_seconds
        self._observe_holder_renewal(lease)
        self._leadership_dirty = True

    def _observe_holder_renewal(self, lease: objects_pb2.Lease | None) -> None:
        """Learn the holder's cadence from two of its renewals in a row; a new holder starts again."""
        if lease is None or not lease.spec.holder_identity or not timeutil.is_set(lease.spec.renew_time):
            self._holder_renewal, self._holder_gap_s = None, None
            return
        holder, renewed = lease.spec.holder_identity, timeutil.to_datetime(lease.spec.renew_time)
        previous = self._holder_renewal
        if previous is None or previous[0] != holder:
            self._holder_gap_s = None
        elif renewed > previous[1]:
            self._holder_gap_s = (renewed - previous[1]).total_seconds()
        self._holder_renewal = (holder, renewed)

    def on_lease_candidate(self, candidate: objects_pb2.LeaseCandidate) -> None:
        """A replica's LeaseCandidate, created or renewed; those of other Leases are not ours."""
        if (candidate.metadata.namespace != self._lease_namespace
                or candidate.spec.lease_name != self._lease_name):
            return
        self._seen(candidate)
        self._candidates[candidate.metadata.name] = candidate
        self._leadership_dirty = True

    def on_lease_candidate_deleted(self, candidate: objects_pb2.LeaseCandidate) -> None:
        if self._candidates.pop(candidate.metadata.name, None) is not None:
            self._leadership_dirty = True

    def mark_stale_candidates(self) -> bool:
        """Re-judge each candidate's liveness by the clock; True when one changed (the leadership object is
        then part of the next delta). Called on a timer: a replica that stops renewing writes nothing."""
        if self._live_candidates() == self._live:
            return False
        self._leadership_dirty = True
        return True

    def mark_late_renewals(self) -> bool:
        """Re-judge by the clock who renews late; True when that changed (the leadership object is then
        part of the next delta). Called on a timer: a replica killed writes nothing."""
        if self._late_renewals() == self._late:
            return False
        self._leadership_dirty = True
        return True

    def _late_renewals(self) -> tuple[bool, frozenset[str]]:
        """Whether the holder is late renewing the Lease, and the candidates late renewing themselves."""
        now = self._now()
        holder_late = False
        if self._holder_renewal is not None:
            expected: float = self._lease_duration_s
            if self._holder_gap_s is not None:
                expected = min(expected, LATE_RENEWAL_GAPS * self._holder_gap_s + RENEW_SLACK_S)
            holder_late = now - self._holder_renewal[1] > timedelta(seconds=expected)
        oldest = now - timedelta(seconds=LATE_CANDIDATE_DURATIONS * self._lease_duration_s + RENEW_SLACK_S)
        late = frozenset(
            name for name, candidate in self._candidates.items()
            if not timeutil.is_set(candidate.spec.renew_time)
            or timeutil.to_datetime(candidate.spec.renew_time) < oldest
        )
        return holder_late, late

    def _live_candidates(self) -> frozenset[str]:
        """The candidates renewed within twice the lease duration and a second of now: a live replica
        renews once per lease duration."""
        oldest = self._now() - timedelta(seconds=2 * self._lease_duration_s + 1)
        return frozenset(
            name for name, candidate in self._candidates.items()
            if timeutil.is_set(candidate.spec.renew_time)
            and timeutil.to_datetime(candidate.spec.renew_time) >= oldest
        )

    def on_leader_change(self, change: LeaderChange) -> None:
        """A change of holder, as LeadershipWatch reports it (with how long nobody led).

        The first holder seen was there before this process watched: how long nobody led before it is
        unknown. A holder killed without releasing the lease is not seen to go, so its successor has no
        measured leaderless time; the time since the predecessor's last renewal bounds it from above
        (the predecessor may have led until just before it was killed)."""
        previous = self._lease
        since_renewal = None
        if (change.holder and previous is not None and change.previous
                and previous.spec.holder_identity == change.previous
                and timeutil.is_set(previous.spec.renew_time)):
            renewed = timeutil.to_datetime(previous.spec.renew_time)
            since_renewal = round(max(0.0, (change.seen_wall.astimezone(UTC) - renewed).total_seconds()), 3)
        measured = change.leaderless_s if self._timeline else None
        self._timeline.append({
            "holder": change.holder,
            "previous": change.previous,
            "token": change.token,
            "at": serialize.iso_datetime(change.seen_wall),
            "leaderlessSeconds": round(measured, 3) if measured is not None else None,
            "sinceLastRenewalSeconds": since_renewal,
        })
        del self._timeline[:-TIMELINE_KEPT]
        self._leadership_dirty = True

    def on_api_server(self, reachable: bool, error: str, now: datetime) -> bool:
        """What the last probe of the API server found; True when that is news (it changed)."""
        if reachable == self._api_server["reachable"]:
            return False
        self._api_server = {"reachable": reachable, "since": serialize.iso_datetime(now),
                            "error": "" if reachable else error}
        self._api_server_dirty = True
        return True

    # ------------------------------------------------------------------------------------ reading

    def node(self, name: str) -> Json:
        """The contract's NODE: its own fields, what its pods request, their keys sorted, and its
        devices."""
        return {
            **self._nodes[name],
            "requested": dict(self._node_requested.get(name, {})),
            "pods": sorted(self._node_pods.get(name, ())),
            "devices": self._devices.devices_of(name),
        }

    def pod(self, key: str) -> Json | None:
        return self._pods.get(key)

    def pod_group(self, key: str) -> Json:
        members = [self._pods[pod] for pod in self._group_pods.get(key, ())]
        return serialize.group_view(
            self._groups[key],
            members=len(members),
            scheduled=sum(1 for pod in members if pod["node"]),
            running=sum(1 for pod in members if pod["phase"] == "Running"),
        )

    def leadership(self) -> Json:
        lease = self._lease
        token = observed_tenure_token(lease) if lease is not None else 0
        view = serialize.lease_view(lease, token)
        live = self._live_candidates()
        holder_late, late = self._late_renewals()
        candidates = [serialize.candidate_view(self._candidates[name], live=name in live,
                                               renewing=name not in late)
                      for name in sorted(self._candidates)]
        replicas = sorted({candidate["identity"] for candidate in candidates if candidate["live"]})
        if view["holder"] and view["holder"] not in replicas:
            replicas.append(view["holder"])
        return {
            "lease": f"{self._lease_namespace}/{self._lease_name}",
            **view,
            "holderRenewing": not holder_late,
            "timeline": list(self._timeline),
            "candidates": candidates,
            "replicas": replicas,
        }

    def events(self) -> list[Json]:
        return [self._events[key] for _, key in self._event_order]

    def summary(self) -> Json:
        return {
            "nodes": len(self._nodes),
            "readyNodes": self._ready_nodes,
            "pods": len(self._pods),
            "bound": self._bound,
            "pending": self._pending,
            "preemptions": self._preemptions,
            "allocatable": dict(self._allocatable),
            "requested": dict(self._requested),
        }

    def state(self) -> Json:
        """The whole model (the contract's snapshot)."""
        return {
            "revision": self.revision,
            "server": self.server,
            NODES: {name: self.node(name) for name in self._nodes},
            PODS: dict(self._pods),
            "leadership": self.leadership(),
            "apiServer": dict(self._api_server),
            PDBS: dict(self._pdbs),
            POD_GROUPS: {key: self.pod_group(key) for key in self._groups},
            "events": self.events(),
            "summary": self.summary(),
        }

    def take_delta(self) -> Json | None:
        """What changed since the last call (None when nothing did), and forget it."""
        if not (self._leadership_dirty or self._api_server_dirty or self._new_events
                or any(self._dirty.values())):
            return None
        readers: dict[str, Callable[[str], Any]] = {
            NODES: self.node, PODS: self._pods.__getitem__,
            PDBS: self._pdbs.__getitem__, POD_GROUPS: self.pod_group,
        }
        present: dict[str, Callable[[str], bool]] = {
            NODES: self._nodes.__contains__, PODS: self._pods.__contains__,
            PDBS: self._pdbs.__contains__, POD_GROUPS: self._groups.__contains__,
        }
        delta: Json = {"revision": self.revision}
        for name in _COLLECTIONS:
            keys = self._dirty[name]
            if not keys:
                continue
            delta[name] = {
                "upsert": {key: readers[name](key) for key in sorted(keys) if present[name](key)},
                "remove": sorted(key for key in keys if not present[name](key)),
            }
            keys.clear()
        if self._leadership_dirty:
            self._live = self._live_candidates()
            self._late = self._late_renewals()
            delta["leadership"] = self.leadership()
            self._leadership_dirty = False
        if self._api_server_dirty:
            delta["apiServer"] = dict(self._api_server)
            self._api_server_dirty = False
        if self._new_events:
            delta["events"] = [self._events[key] for _, key in self._event_order if key in self._new_events]
            self._new_events.clear()
        delta["summary"] = self.summary()
        return delta

