"""Is what the scheduler did correct? Checks of a workload's final placements, run after every workload
(a fast scheduler that places pods wrongly must not pass as fast).

Every workload is checked for: every measured pod seen bound; no node holding more than its allocatable
CPU, memory and pod count; and, by what its pods ask for, required node affinity (only on matching
nodes), required pod anti-affinity (no two matching pods in one topology domain) and DoNotSchedule
topology spreading (skew within maxSkew). With churn (PreemptionAsync) also: every arriving
high-priority pod bound, and at least one low-priority victim deleted for each.

With gangs (GangScheduling), for each PodGroup with a gang policy (v1alpha3 gang.minCount, Coscheduling
minMember) and its member pods (spec.schedulingGroup.podGroupName, else the pod-group label):
* all or nothing: the members bound number 0 or at least the minimum;
* no gang left waiting with room for it: a gang with members unbound must not fit, those members taken
  largest first onto the first node with room for each, into what the bound pods leave of the nodes'
  allocatable CPU, memory and pod count (a fit found that way is a fit; bench gangs have no other
  constraint). Each gang is judged alone against the final placements, so of two gangs that competed for
  room for one, the one placed has taken it and the other rightly waits;
* bound in one transaction: at least the minimum of its members were bound at one resourceVersion, the
  gang's first (the group bind writes them in one store transaction, which gives every key one revision;
  each pod's version is the one it had when the bench's watch first saw it bound). For the bench's gangs,
  whose minimum is their size, that is every member.

Selectors are read as the workloads write them: ``matchLabels``, and node-selector terms with In, NotIn,
Exists and DoesNotExist.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from cluster.api import containers, objects_pb2
from cluster.api.podgroups import group_name_of, min_count
from cluster.api.quantity import milli_value
from cluster.bench.workloads import CHURN, INIT, MEASURED, ROLE_LABEL

#: At most this many problems of one kind are quoted.
MAX_QUOTED = 5


@dataclass
class Placements:
    """The cluster as the bench found it after a workload."""

    nodes: Sequence[objects_pb2.Node]
    pods: Sequence[objects_pb2.Pod]
    #: Names of the pods the bench created, by role (init, measured, churn).
    created: dict[str, set[str]] = field(default_factory=dict)
    #: Names of the pods seen bound at some point (preemption may have deleted some since).
    seen_bound: set[str] = field(default_factory=set)
    pod_groups: Sequence[objects_pb2.PodGroup] = ()
    #: The resourceVersion of each pod when first seen bound, by pod name (else its listed one counts).
    bound_versions: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def by_node(self) -> dict[str, list[objects_pb2.Pod]]:
        """The pods bound and not being deleted, by node name (nodes or not)."""
        by_node: dict[str, list[objects_pb2.Pod]] = defaultdict(list)
        for pod in self.pods:
            if _on_node(pod):
                by_node[pod.spec.node_name].append(pod)
        return by_node

    @cached_property
    def placed(self) -> list[objects_pb2.Pod]:
        """Every pod of ``by_node``."""
        return [pod for pods in self.by_node.values() for pod in pods]

    @cached_property
    def labels_of(self) -> dict[str, Mapping[str, str]]:
        """Each node's labels, by node name."""
        return {node.metadata.name: node.metadata.labels for node in self.nodes}


def _on_node(pod: objects_pb2.Pod) -> bool:
    return bool(pod.spec.node_name) and not pod.metadata.HasField("deletion_timestamp")


def check(placements: Placements) -> list[str]:
    """Every problem found; empty when the placements are correct."""
    problems: list[str] = []
    for find in (_unbound_measured, _over_allocatable, _node_affinity, _pod_anti_affinity, _spreading,
                 _preemption, _gangs):
        problems.extend(_quoted(find.__name__.strip("_").replace("_", " "), list(find(placements))))
    return problems


def _quoted(kind: str, found: list[str]) -> list[str]:
    if len(found) <= MAX_QUOTED:
        return [f"{kind}: {problem}" for problem in found]
    return [f"{kind}: {problem}" for problem in found[:MAX_QUOTED]] + [
        f"{kind}: ... and {len(found) - MAX_QUOTED} more"
    ]


def _unbound_measured(p: Placements) -> Iterable[str]:
    missing = p.created.get(MEASURED, set()) - p.seen_bound
    for name in sorted(missing):
        yield f"measured pod {name} was never bound"


def _requests(pod: objects_pb2.Pod) -> tuple[int, int]:
    """(CPU millicores, memory bytes) the pod takes of its node, as Kubernetes counts them
    (``containers.pod_total``: init containers one at a time, sidecars beside everything after them),
    plus the pod overhead."""
    cpu, memory = containers.pod_total(
        pod, lambda container: _cpu_and_memory(container.resources.requests),
        lambda a, b: (a[0] + b[0], a[1] + b[1]),
        lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
        (0, 0),
    )
    overhead_cpu, overhead_memory = _cpu_and_memory(pod.spec.overhead)
    return cpu + overhead_cpu, memory + overhead_memory


def _cpu_and_memory(quantities: Mapping[str, str]) -> tuple[int, int]:
    return milli_value(quantities.get("cpu", "0")), milli_value(quantities.get("memory", "0")) // 1000


def _allocatable(node: objects_pb2.Node) -> tuple[int, int, int]:
    """(CPU millicores, memory bytes, pods) the node can hold."""
    allocatable = node.status.allocatable
    return (milli_value(allocatable.get("cpu", "0")), milli_value(allocatable.get("memory", "0")) // 1000,
            milli_value(allocatable.get("pods", "0")) // 1000)


def _used(pods: Sequence[objects_pb2.Pod]) -> tuple[int, int, int]:
    """(CPU millicores, memory bytes, pods) that ``pods`` take of a node."""
    requests = list(map(_requests, pods))
    return sum(cpu for cpu, _ in requests), sum(memory for _, memory in requests), len(pods)


def _over_allocatable(p: Placements) -> Iterable[str]:
    by_node = p.by_node
    for node in p.nodes:
        used = _used(by_node.get(node.metadata.name, []))
        for resource, taken, available in zip(("cpu (m)", "memory", "pods"), used, _allocatable(node),
                                              strict=True):
            if taken > available:
                yield f"node {node.metadata.name}: {resource} {taken} > allocatable {available}"
    known = {node.metadata.name for node in p.nodes}
    for name in sorted(by_node.keys() - known):
        yield f"{len(by_node[name])} pods bound to {name}, which is no node"


def _selected(labels: Mapping[str, str], match_labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in match_labels.items())


def _term_matches(labels: Mapping[str, str], term: objects_pb2.NodeSelectorTerm) -> bool:
    for requirement in term.match_expressions:
        value = labels.get(requirement.key)
        operator = requirement.operator
        if operator == "In" and value not in requirement.values:
            return False
        if operator == "NotIn" and value in requirement.values:
            return False
        if operator == "Exists" and value is None:
            return False
        if operator == "DoesNotExist" and value is not None:
            return False
    return True


def _node_affinity(p: Placements) -> Iterable[str]:
    nodes = {node.metadata.name: node for node in p.nodes}
    for name, pods in sorted(p.by_node.items()):
        node = nodes.get(name)
        if node is None:
            continue
        for pod in pods:
            required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
            terms = required.node_selector_terms
            if terms and not any(_term_matches(node.metadata.labels, term) for term in terms):
                yield f"pod {pod.metadata.namespace}/{pod.metadata.name} on {name}, outside its node affinity"


def _pod_anti_affinity(p: Placements) -> Iterable[str]:
    labels_of, placed = p.labels_of, p.placed
    # topology key -> domain -> pods there: each term looks only at its own domain.
    domains: dict[str, dict[str, list[objects_pb2.Pod]]] = {}
    for pod in placed:
        for term in pod.spec.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution:
            key = term.topology_key
            if key not in domains:
                domains[key] = defaultdict(list)
                for other in placed:
                    value = labels_of.get(other.spec.node_name, {}).get(key)
                    if value is not None:
                        domains[key][value].append(other)
            domain = labels_of.get(pod.spec.node_name, {}).get(key)
            namespaces = set(term.namespaces) or {pod.metadata.namespace}
            for other in domains[key].get(domain, []) if domain is not None else []:
                if (other is not pod and other.metadata.namespace in namespaces
                        and _selected(other.metadata.labels, term.label_selector.match_labels)):
                    yield (f"pod {pod.metadata.namespace}/{pod.metadata.name} and "
                           f"{other.metadata.namespace}/{other.metadata.name} share {key}={domain}")


def _spreading(p: Placements) -> Iterable[str]:
    labels_of, placed = p.labels_of, p.placed
    seen: set[tuple[str, str, str]] = set()
    for pod in placed:
        for constraint in pod.spec.topology_spread_constraints:
            if constraint.when_unsatisfiable != "DoNotSchedule":
                continue
            selector = tuple(sorted(constraint.label_selector.match_labels.items()))
            key = (pod.metadata.namespace, constraint.topology_key, repr(selector))
            if key in seen:
                continue
            seen.add(key)
            counts: Counter[str] = Counter(
                {labels[constraint.topology_key]: 0 for labels in labels_of.values()
                 if constraint.topology_key in labels})
            for other in placed:
                domain = labels_of.get(other.spec.node_name, {}).get(constraint.topology_key)
                if (domain is not None and other.metadata.namespace == pod.metadata.namespace
                        and _selected(other.metadata.labels, constraint.label_selector.match_labels)):
                    counts[domain] += 1
            if counts and max(counts.values()) - min(counts.values()) > constraint.max_skew:
                yield (f"{constraint.topology_key} skew {max(counts.values()) - min(counts.values())} > "
                       f"maxSkew {constraint.max_skew}: {dict(sorted(counts.items()))}")


def _preemption(p: Placements) -> Iterable[str]:
    arrived = p.created.get(CHURN, set())
    if not arrived:
        return
    for name in sorted(arrived - p.seen_bound):
        yield f"high-priority pod {name} was never bound"
    remaining = {pod.metadata.name for pod in p.pods if pod.metadata.labels.get(ROLE_LABEL) == INIT}
    victims = len(p.created.get(INIT, set()) - remaining)
    bound_arrivals = len(arrived & p.seen_bound)
    if victims < bound_arrivals:
        yield f"{bound_arrivals} high-priority pods bound but only {victims} low-priority pods deleted"


def _free(p: Placements) -> dict[str, list[int]]:
    """Each node's free CPU millicores, memory bytes and pod count."""
    free = {}
    for node in p.nodes:
        used = _used(p.by_node.get(node.metadata.name, []))
        free[node.metadata.name] = [have - took for have, took in zip(_allocatable(node), used, strict=True)]
    return free


def _fits(pods: Sequence[objects_pb2.Pod], free: dict[str, list[int]]) -> bool:
    """Whether ``pods`` go, largest first, each onto the first node with room for it (``free``: each
    node's free CPU, memory and pod count, used up as they go)."""
    free = {name: list(room) for name, room in free.items()}
    for pod in sorted(pods, key=_requests, reverse=True):
        need = (*_requests(pod), 1)
        room = next((room for room in free.values() if all(n <= r for n, r in zip(need, room, strict=True))),
                    None)
        if room is None:
            return False
        for i, n in enumerate(need):
            room[i] -= n
    return True


def _gangs(p: Placements) -> Iterable[str]:
    members: dict[tuple[str, str], list[objects_pb2.Pod]] = defaultdict(list)
    for pod in p.pods:
        if group_name := group_name_of(pod):
            members[(pod.metadata.namespace, group_name)].append(pod)
    free = _free(p)
    for group in sorted(p.pod_groups, key=lambda g: (g.metadata.namespace, g.metadata.name)):
        minimum = min_count(group)
        if minimum < 1:
            continue
        name = f"{group.metadata.namespace}/{group.metadata.name}"
        pods = members.get((group.metadata.namespace, group.metadata.name), [])
        bound = [pod for pod in pods if _on_node(pod)]
        waiting = [pod for pod in pods if not pod.spec.node_name]
        of = f"of {len(pods)} members"
        if 0 < len(bound) < minimum:
            yield f"gang {name}: {len(bound)} {of} bound, fewer than its minimum {minimum}"
        if waiting and len(bound) + len(waiting) >= minimum and _fits(waiting, free):
            yield f"gang {name}: {len(waiting)} {of} unbound though the nodes have room for them"
        versions = Counter(int(p.bound_versions.get(pod.metadata.name) or pod.metadata.resource_version)
                           for pod in bound)
        if versions and len(bound) >= minimum:
            first = min(versions)
            if versions[first] < minimum:
                yield (f"gang {name}: {versions[first]} members bound at its first resourceVersion {first}, "
                       f"fewer than its minimum {minimum} (bound at {len(versions)} resourceVersions, "
                       f"{first} to {max(versions)})")
