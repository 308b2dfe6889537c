"""Is what the scheduler did correct? Checks of a workload's final placements, run after every workload
(a fast scheduler that places pods wrongly must not pass as fast).

Every workload is checked for: every measured pod seen bound; no node holding more than its allocatable
CPU, memory and pod count; and, by what its pods ask for, required node affinity (only on matching
nodes), required pod anti-affinity (no two matching pods in one topology domain) and DoNotSchedule
topology spreading (skew within maxSkew). With churn (PreemptionAsync) also: every arriving
high-priority pod bound, and at least one low-priority victim deleted for each.

Selectors are read as the workloads write them: ``matchLabels``, and node-selector terms with In, NotIn,
Exists and DoesNotExist.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from cluster.api import objects_pb2
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

    @cached_property
    def by_node(self) -> dict[str, list[objects_pb2.Pod]]:
        """The pods bound and not being deleted, by node name (nodes or not)."""
        by_node: dict[str, list[objects_pb2.Pod]] = defaultdict(list)
        for pod in self.pods:
            if pod.spec.node_name and not pod.metadata.HasField("deletion_timestamp"):
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


def check(placements: Placements) -> list[str]:
    """Every problem found; empty when the placements are correct."""
    problems: list[str] = []
    for find in (_unbound_measured, _over_allocatable, _node_affinity, _pod_anti_affinity, _spreading,
                 _preemption):
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
    """(CPU millicores, memory bytes) requested by the pod's containers."""
    cpu = memory = 0
    for container in pod.spec.containers:
        requests = container.resources.requests
        cpu += milli_value(requests.get("cpu", "0"))
        memory += milli_value(requests.get("memory", "0")) // 1000
    return cpu, memory


def _over_allocatable(p: Placements) -> Iterable[str]:
    by_node = p.by_node
    for node in p.nodes:
        pods = by_node.get(node.metadata.name, [])
        allocatable = node.status.allocatable
        requests = list(map(_requests, pods))
        cpu = sum(cpu for cpu, _ in requests)
        memory = sum(memory for _, memory in requests)
        limits = (
            ("cpu (m)", cpu, milli_value(allocatable.get("cpu", "0"))),
            ("memory", memory, milli_value(allocatable.get("memory", "0")) // 1000),
            ("pods", len(pods), milli_value(allocatable.get("pods", "0")) // 1000),
        )
        for resource, used, available in limits:
            if used > available:
                yield f"node {node.metadata.name}: {resource} {used} > allocatable {available}"
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
