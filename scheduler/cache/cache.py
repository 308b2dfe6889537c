"""The scheduler's cache: every node with the pods bound or assumed to it, as kube-scheduler's cache.

What it holds:
- a ``NodeInfo`` per node name. Pods may be seen before their node (the pod and node watches are
  independent), so a NodeInfo can exist without a Node object; and a deleted node whose pods have not
  been deleted yet keeps its NodeInfo (a "ghost", never in a snapshot) until the last pod goes.
- the state of every pod it knows, by key: bound (confirmed by the watch) or *assumed*.
- a ``NodeTree`` of the live nodes, which gives snapshots their zone-interleaved node order.

Assumed pods (kube-scheduler's pod state machine): when a scheduling cycle picks a node, the scheduler
``assume_pod``s the pod there, so the next cycles see its resources taken while the binding runs
asynchronously. Then either
- the watch delivers the bound pod: ``add_pod`` confirms it (on the node the API says, which may differ).
  On the node it was assumed on, the bound pod takes the assumed one's place in one change of the node
  (one generation, the node's aggregates counted again only if its requests changed), and what the
  scheduler derives from a pod is reused when the fields it comes from are unchanged;
- the binding fails: ``forget_pod`` takes it back off the node;
- with an ``assumed_pod_ttl_s`` (none by default, as in kube-scheduler), the binding succeeded
  (``finish_binding``) but no watch event confirms it within the TTL: ``cleanup_expired_assumed_pods``
  (run every second by ``run()``) drops it. The TTL starts only when the binding has finished, because a
  slow binding is not a lost event.

Snapshots in O(changed nodes): every change to a NodeInfo bumps its ``generation`` (a process-wide
counter) and moves the node to the end of ``_nodes``, an OrderedDict (a doubly linked list, as
kube-scheduler's list of NodeInfos) kept in recency order. ``update_snapshot`` walks it backwards from
the most recent change and stops at the first node no newer than the snapshot: the nodes that did not
change are never looked at. The node list and the affinity lists are rebuilt (O(nodes)) only when a
node is added, removed or changes zone; a node that starts or stops having pods with affinity terms is
added to or dropped from the affinity lists in place.

Errors: as kube-scheduler, a call that does not fit the pod's state (assuming a pod the cache already
has, adding a pod twice, updating an unknown or an assumed pod, removing an unknown pod or node,
forgetting a confirmed pod) raises ``CacheError`` and changes nothing; the event handlers log it. Where
kube-scheduler declares the cache corrupted and exits (a bound pod updated or deleted on another node
than the one the cache has it on), this cache logs the error and follows the API's version instead.

Concurrency: everything runs on the event loop's thread (informer handlers, the scheduling cycle and
``run()``), so no lock is needed; no method awaits.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from cluster.api import objects_pb2
from scheduler.cache.node_tree import NodeTree
from scheduler.cache.snapshot import Snapshot
from scheduler.clock import Clock, SystemClock
from scheduler.framework import ImageState, ImageStateSummary, NodeInfo, PodInfo, pod_key

log = logging.getLogger(__name__)

#: How long a pod whose binding finished may stay assumed without the watch confirming it; 0, the
#: default, means never, as kube-scheduler has it since Kubernetes issue 106361: under load the watch
#: can lag the binds by more than any TTL, and an expired pod's resources given to the next pods
#: overcommit the node (podsched bench's PreemptionAsync at 5000 nodes did, with 30 s). A lost event then
#: holds the resources until the pod is seen again (the next relist).
DEFAULT_ASSUMED_POD_TTL_S = 0.0

#: How often ``run()`` looks for expired assumed pods (kube-scheduler's cleanAssumedPeriod).
CLEANUP_PERIOD_S = 1.0


class CacheError(Exception):
    """A call that does not fit the state the cache has for the pod or node; the cache is unchanged."""


@dataclass(slots=True)
class _PodState:
    pod_info: PodInfo
    assumed: bool = False
    #: Set by finish_binding: from then on an assumed pod may expire.
    binding_finished: bool = False
    #: When an assumed pod whose binding finished expires (clock time), None for never.
    deadline: float | None = None

    @property
    def node_name(self) -> str:
        return self.pod_info.pod.spec.node_name


class Cache:
    def __init__(self, *, clock: Clock, assumed_pod_ttl_s: float = DEFAULT_ASSUMED_POD_TTL_S) -> None:
        if assumed_pod_ttl_s < 0:
            raise ValueError(f"assumed_pod_ttl_s must not be negative (got {assumed_pod_ttl_s})")
        self._clock = clock
        self._ttl_s = assumed_pod_ttl_s
        #: NodeInfos by node name, least recently changed first (see the module docstring).
        self._nodes: OrderedDict[str, NodeInfo] = OrderedDict()
        self._tree = NodeTree()
        #: Every image name some live node reports, with its size and those nodes (kube-scheduler's
        #: imageStates), kept as nodes come, change and go: a snapshot never counts over the nodes.
        self._images: dict[str, ImageState] = {}
        self._pods: dict[str, _PodState] = {}
        #: Keys of the assumed pods: the cleanup looks only at these.
        self._assumed: set[str] = set()

    # ------------------------------------------------------------------------------------ nodes

    def add_node(self, node: objects_pb2.Node) -> None:
        name = node.metadata.name
        info = self._nodes.get(name)
        if info is None:
            info = self._nodes[name] = NodeInfo()
        if name in self._tree:
            self._tree.update_node(node)
        else:
            self._tree.add_node(node)
        if info.node is not None:
            self._remove_image_states(info.node)
        info.set_node(node)
        info.image_states = self._add_image_states(node)
        self._touch(name)

    def update_node(self, old: objects_pb2.Node, new: objects_pb2.Node) -> None:
        """Replace the node object (a node the cache has not seen is added, as kube-scheduler does). The
        NodeTree remembers each node's zone, so ``old`` is not needed to move it between zones."""
        self.add_node(new)

    def remove_node(self, node: objects_pb2.Node) -> None:
        """The node is gone. Its pods' delete events come through another watch and may come later, so a
        node that still has pods keeps its NodeInfo, without a node, until the last of them goes."""
        name = node.metadata.name
        info = self._nodes.get(name)
        if info is None:
            raise CacheError(f"node {name} is not in the scheduler cache, so it cannot be removed")
        self._tree.remove_node(name)
        if info.node is not None:
            self._remove_image_states(info.node)
        info.remove_node()
        if info.pods:
            self._touch(name)
        else:
            del self._nodes[name]

    def image_states(self) -> dict[str, ImageState]:
        """The images of the live nodes by name (read-only for callers; for tests and tools)."""
        return self._images

    def _add_image_states(self, node: objects_pb2.Node) -> dict[str, ImageState | ImageStateSummary]:
        """Count ``node`` in the state of every image name it reports; its NodeInfo's image states."""
        name = node.metadata.name
        states: dict[str, ImageState | ImageStateSummary] = {}
        for image in node.status.images:
            for image_name in image.names:
                state = self._images.get(image_name)
                if state is None:
                    state = self._images[image_name] = ImageState(image.size_bytes)
                state.nodes.add(name)
                states.setdefault(image_name, state)
        return states

    def _remove_image_states(self, node: objects_pb2.Node) -> None:
        """Stop counting ``node`` for the images it reported; an image no node has any more is dropped."""
        name = node.metadata.name
        for image in node.status.images:
            for image_name in image.names:
                state = self._images.get(image_name)
                if state is None:
                    continue
                state.nodes.discard(name)
                if not state.nodes:
                    del self._images[image_name]

    def node_count(self) -> int:
        """The live nodes (with a Node object): the nodes a snapshot has."""
        return self._tree.num_nodes

    # ------------------------------------------------------------------------------------- pods

    def assume_pod(self, pod_info: PodInfo) -> None:
        """Put a pod on the node the scheduling cycle chose (``pod_info.pod.spec.node_name``) before it
        is bound."""
        key = pod_info.key
        if not pod_info.pod.spec.node_name:
            raise CacheError(f"pod {key} cannot be assumed without a node name")
        if key in self._pods:
            raise CacheError(f"pod {key} is in the scheduler cache, so it cannot be assumed")
        self._add(_PodState(pod_info, assumed=True))
        self._assumed.add(key)

    def finish_binding(self, pod: objects_pb2.Pod) -> None:
        """The binding of an assumed pod is over (it worked): start its expiry countdown."""
        state = self._pods.get(pod_key(pod))
        if state is None or not state.assumed:
            return
        state.binding_finished = True
        state.deadline = self._clock.now() + self._ttl_s if self._ttl_s > 0 else None

    def forget_pod(self, pod: objects_pb2.Pod) -> None:
        """Undo ``assume_pod`` (the binding failed). A pod the cache no longer has (it expired, or its
        deletion was seen) is nothing to forget."""
        key = pod_key(pod)
        state = self._pods.get(key)
        if state is None:
            return
        if state.node_name != pod.spec.node_name:
            raise CacheError(
                f"pod {key} was assumed on {state.node_name} but forgotten on {pod.spec.node_name}"
            )
        if not state.assumed:
            raise CacheError(f"pod {key} is not assumed (it is bound), so it cannot be forgotten")
        self._remove(state)

    def add_pod(self, pod: objects_pb2.Pod) -> None:
        """A bound pod seen by the watch. For an assumed pod this is the confirmation: the cache now
        holds the API's object, on the API's node (moved if it was assumed elsewhere)."""
        key = pod_key(pod)
        state = self._pods.get(key)
        if state is not None and not state.assumed:
            raise CacheError(f"pod {key} was already added to the scheduler cache")
        if state is None:
            self._add(_PodState(PodInfo(pod)))
        elif state.node_name == pod.spec.node_name:
            self._replace(state, pod)
        else:
            log.info("pod %s was assumed on node %s but bound to node %s", key, state.node_name,
                     pod.spec.node_name)
            self._remove(state)
            self._add(_PodState(PodInfo(pod)))

    def update_pod(self, old: objects_pb2.Pod, new: objects_pb2.Pod) -> None:
        """A bound pod changed (labels, requests, deletion started...)."""
        key = pod_key(old)
        state = self._pods.get(key)
        if state is None:
            raise CacheError(f"pod {key} is not in the scheduler cache, so it cannot be updated")
        # An assumed pod is confirmed by an add (or an update that binds it, which the handlers turn
        # into an add) before any update of the bound pod can come.
        if state.assumed:
            raise CacheError(f"pod {key} is assumed, so it cannot be updated")
        if state.node_name == new.spec.node_name:
            self._replace(state, new)
            return
        log.error("pod %s was updated on node %s but the scheduler cache has it on node %s; "
                  "following the API", key, new.spec.node_name, state.node_name)
        self._remove(state)
        self._add(_PodState(PodInfo(new)))

    def remove_pod(self, pod: objects_pb2.Pod) -> None:
        """A bound (or assumed) pod is gone from the API."""
        key = pod_key(pod)
        state = self._pods.get(key)
        if state is None:
            raise CacheError(f"pod {key} is not in the scheduler cache, so it cannot be removed")
        # An empty node name is the last state the informer knew of a pod whose deletion it missed.
        if pod.spec.node_name and state.node_name != pod.spec.node_name:
            log.error("pod %s was deleted from node %s but the scheduler cache has it on node %s",
                      key, pod.spec.node_name, state.node_name)
        self._remove(state)

    def is_assumed(self, key: str) -> bool:
        return key in self._assumed

    def get_pod(self, key: str) -> objects_pb2.Pod | None:
        """The pod as the cache has it (an assumed pod with its chosen node), or None."""
        state = self._pods.get(key)
        return state.pod_info.pod if state is not None else None

    def pod_count(self) -> int:
        """Pods bound or assumed, including those on deleted nodes."""
        return len(self._pods)

    def cleanup_expired_assumed_pods(self) -> None:
        """Drop the assumed pods whose binding finished more than the TTL ago without confirmation."""
        now = self._clock.now()
        expired = [
            (state, deadline) for key in self._assumed
            if (state := self._pods[key]).binding_finished and (deadline := state.deadline) is not None
            and now > deadline
        ]
        for state, deadline in expired:
            log.warning("assumed pod %s expired: bound to node %s %.0fs ago and never confirmed by the "
                        "watch; its resources are released", state.pod_info.key, state.node_name,
                        now - deadline + self._ttl_s)
            self._remove(state)

    async def run(self) -> None:
        """Expire assumed pods every CLEANUP_PERIOD_S, forever (until cancelled)."""
        while True:
            await self._clock.sleep(CLEANUP_PERIOD_S)
            try:
                self.cleanup_expired_assumed_pods()
            except Exception:
                log.exception("cleaning up expired assumed pods failed")

    # ------------------------------------------------------------------------------- snapshots

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date: copy the NodeInfos changed since its generation, drop the
        nodes deleted since, and rebuild its node list only if its membership or order changed."""
        rebuild_list = False
        newest = snapshot.generation
        for name in reversed(self._nodes):
            info = self._nodes[name]
            if info.generation <= snapshot.generation:
                break  # this one and every older one are already in the snapshot
            newest = max(newest, info.generation)
            if info.node is None:
                continue  # a ghost: its stale entry, if any, goes below
            clone = info.clone()
            if name in snapshot._by_name:
                snapshot._replace(clone)
            else:
                snapshot._add(clone)
                rebuild_list = True
        snapshot.generation = newest

        # The snapshot can only have more nodes than the tree if some of them were deleted since.
        if len(snapshot._by_name) > self._tree.num_nodes:
            for name in [n for n in snapshot._by_name if n not in self._tree]:
                snapshot._drop(name)
            rebuild_list = True

        if rebuild_list or snapshot.tree_version != self._tree.version:
            snapshot._rebuild_node_list(self._tree.list(), self._tree.version)

    # -------------------------------------------------------------------------------- internals

    def _touch(self, name: str) -> None:
        """Mark the node as the most recently changed (its generation was just bumped)."""
        self._nodes.move_to_end(name)

    def _add(self, state: _PodState) -> None:
        name = state.node_name
        info = self._nodes.get(name)
        if info is None:
            info = self._nodes[name] = NodeInfo()  # the pod came before its node
        info.add_pod(state.pod_info)
        self._touch(name)
        self._pods[state.pod_info.key] = state

    def _replace(self, state: _PodState, pod: objects_pb2.Pod) -> None:
        """The bound version ``pod`` of a pod the cache has on the same node (an assumed pod confirmed, a
        bound pod updated): one change of the node, as ``_remove`` then ``_add`` leave it."""
        key = state.pod_info.key
        pod_info = state.pod_info.with_pod(pod)
        name = state.node_name
        self._nodes[name].replace_pod(pod_info)
        self._touch(name)
        self._pods[key] = _PodState(pod_info)
        self._assumed.discard(key)

    def _remove(self, state: _PodState) -> None:
        key = state.pod_info.key
        name = state.node_name
        info = self._nodes.get(name)
        if info is not None:
            info.remove_pod(key)
            if info.node is None and not info.pods:
                del self._nodes[name]  # the last pod of a deleted node
            else:
                self._touch(name)
        del self._pods[key]
        self._assumed.discard(key)


def snapshot_of(nodes: Iterable[objects_pb2.Node], pods: Iterable[objects_pb2.Pod] = ()) -> Snapshot:
    """A snapshot of the given nodes with the given bound pods on them, built exactly as the scheduler
    builds its own (for tests and tools; kube-scheduler's NewSnapshot)."""
    cache = Cache(clock=SystemClock())
    for node in nodes:
        cache.add_node(node)
    for pod in pods:
        cache.add_pod(pod)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot
