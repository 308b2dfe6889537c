"""The nominator: pending pods nominated to a node, which other pods' Filter must account for.

A pod is nominated by preemption (``add_nominated_pod``, before the API write of
status.nominatedNodeName lands, so that the next cycles already see it) or by the
status.nominatedNodeName of a pending pod the informer delivers. Entries are keyed by "namespace/name"
and grouped by node, so every operation is O(1); ``for_node`` returns the pods in nomination order.
"""

from __future__ import annotations

from collections.abc import Collection

from cluster.api import objects_pb2
from scheduler.framework import PodInfo, pod_key


class Nominator:
    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        #: node name -> pod key -> the nominated pod's info.
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        #: pod key -> the node it is nominated to.
        self._node_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._node_of)

    def node_of(self, key: str) -> str | None:
        return self._node_of.get(key)

    def add(self, pod_info: PodInfo, node_name: str | None = None) -> None:
        """Nominate the pod to ``node_name``, or, when None, to its status.nominatedNodeName. An empty
        node name only clears the pod's nomination; a pod already bound is not nominated."""
        self.delete(pod_info.key)
        if node_name is None:
            node_name = pod_info.pod.status.nominated_node_name
        if not node_name or pod_info.pod.spec.node_name:
            return
        self._node_of[pod_info.key] = node_name
        self._by_node.setdefault(node_name, {})[pod_info.key] = pod_info

    def update(self, old_pod: objects_pb2.Pod | None, new_pod_info: PodInfo) -> None:
        """Replace the pod's entry with its new version. An update in which neither version carries a
        nominatedNodeName keeps the in-memory nomination: preemption nominated the pod and its API
        write has not come back yet (kube-scheduler's UpdateNominatedPod)."""
        keep: str | None = None
        old_nominated = old_pod.status.nominated_node_name if old_pod is not None else ""
        if not old_nominated and not new_pod_info.pod.status.nominated_node_name:
            keep = self._node_of.get(pod_key(old_pod) if old_pod is not None else new_pod_info.key)
        if old_pod is not None:
            self.delete(pod_key(old_pod))
        self.add(new_pod_info, keep)

    def delete(self, key: str) -> None:
        node_name = self._node_of.pop(key, None)
        if node_name is None:
            return
        pods = self._by_node[node_name]
        del pods[key]
        if not pods:
            del self._by_node[node_name]

    def nodes(self) -> Collection[str]:
        """The nodes with at least one nominated pod (a live view)."""
        return self._by_node.keys()

    def for_node(self, node_name: str) -> list[PodInfo]:
        # Filter asks this for every node it checks, and nearly all have no nominated pods.
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []
