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
  whose minimum is their size, that is every member;
* with a topology constraint (TopologyGangScheduling: ``schedulingConstraints.topology[0].key``), inside
  one domain: every bound member on a node whose label of that key has one value, the same for all; and
  "room for it" above means room inside one domain (the domain of its bound members, if any).

With DRA claims (the DRA workloads), over the ResourceClaims and ResourceSlices listed at the end:
* devices allocated once: no device is in two allocations (nor twice in one), unless its slice lets it
  be allocated many times (``allowMultipleAllocations``), where each allocation has a shareID of its own;
  an allocation with admin access takes nothing; and every allocated device is one some slice publishes;
* claims on the pod's node: every claim of every placed pod (``resourceClaimName``, else the name its
  ``status.resourceClaimStatuses`` gives) exists, is allocated, reserved for the pod, its allocation's
  node selector admits the pod's node, and each of its devices is published for that node.

Where pods were deleted during the run (SteadyStateClusterResourceClaimTemplate deletes each batch once
scheduled, and their claims go with them), the end state no longer shows them; what the bench saw on
the way is judged instead:
* devices held at once: no device was seen in two allocations at one revision of the store;
* claims of deleted pods: each deleted pod, as first seen bound, had every claim allocated, reserved for
  it and on its node, as the claim was last seen allocated and reserved.

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
    resource_claims: Sequence[objects_pb2.ResourceClaim] = ()
    resource_slices: Sequence[objects_pb2.ResourceSlice] = ()
    #: Where pods were deleted (a steady run): each pod as first seen bound, each claim as last seen
    #: allocated and reserved, and each (device, claim holding it, claim allocated it too) seen at one
    #: revision of the store.
    pods_seen_bound: Sequence[objects_pb2.Pod] = ()
    claims_seen: Sequence[objects_pb2.ResourceClaim] = ()
    devices_held_twice: Sequence[tuple[str, str, str]] = ()

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
                 _preemption, _gangs, _devices_allocated_once, _claims_on_the_pods_node,
                 _devices_held_at_once, _claims_of_deleted_pods):
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
    """(CPU millicores, memory bytes) the pod holds on its node, as Kubernetes counts it
    (``containers.pair_total``: init containers one at a time, sidecars beside the rest), plus overhead."""

    def amount(resources: Mapping[str, str]) -> tuple[int, int]:
        return milli_value(resources.get("cpu", "0")), milli_value(resources.get("memory", "0")) // 1000

    cpu, memory = containers.pair_total(pod, lambda container: amount(container.resources.requests))
    overhead_cpu, overhead_memory = amount(pod.spec.overhead)
    return cpu + overhead_cpu, memory + overhead_memory


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


def _domains(p: Placements, key: str, nodes: Iterable[str]) -> set[str | None]:
    """The values of the label ``key`` of ``nodes`` (None for a node without it)."""
    labels = p.labels_of
    return {labels.get(node, {}).get(key) for node in nodes}


def _room(p: Placements, free: dict[str, list[int]], key: str,
          bound: Sequence[objects_pb2.Pod]) -> list[dict[str, list[int]]]:
    """Where a gang's unbound members may go: all the nodes, or with a topology ``key`` the nodes of
    each domain (only its bound members' domain when it has some)."""
    if not key:
        return [free]
    by_domain: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for node, room in free.items():
        if (value := p.labels_of.get(node, {}).get(key)) is not None:
            by_domain[value][node] = room
    taken = _domains(p, key, (pod.spec.node_name for pod in bound))
    return [nodes for value, nodes in by_domain.items() if not bound or taken == {value}]


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
        key = _topology_key(group)
        pods = members.get((group.metadata.namespace, group.metadata.name), [])
        bound = [pod for pod in pods if _on_node(pod)]
        waiting = [pod for pod in pods if not pod.spec.node_name]
        of = f"of {len(pods)} members"
        if 0 < len(bound) < minimum:
            yield f"gang {name}: {len(bound)} {of} bound, fewer than its minimum {minimum}"
        domains = _domains(p, key, (pod.spec.node_name for pod in bound)) if key else set()
        if len(domains) > 1 or None in domains:
            shown = sorted(value or f"(no {key})" for value in domains)
            more = f", ... ({len(shown)} in all)" if len(shown) > MAX_QUOTED else ""
            yield (f"gang {name}: {len(bound)} {of} bound across {len(shown)} domains of {key}: "
                   f"{', '.join(shown[:MAX_QUOTED])}{more}")
        if waiting and len(bound) + len(waiting) >= minimum and any(
                _fits(waiting, room) for room in _room(p, free, key, bound)):
            where = f"one domain of {key} has" if key else "the nodes have"
            yield f"gang {name}: {len(waiting)} {of} unbound though {where} room for them"
        versions = Counter(int(p.bound_versions.get(pod.metadata.name) or pod.metadata.resource_version)
                           for pod in bound)
        if versions and len(bound) >= minimum:
            first = min(versions)
            if versions[first] < minimum:
                yield (f"gang {name}: {versions[first]} members bound at its first resourceVersion {first}, "
                       f"fewer than its minimum {minimum} (bound at {len(versions)} resourceVersions, "
                       f"{first} to {max(versions)})")


def _topology_key(group: objects_pb2.PodGroup) -> str:
    """The node label a v1alpha3 PodGroup must sit in one domain of ("" for none)."""
    constraints = group.spec.scheduling_constraints.topology
    return constraints[0].key if constraints else ""


# -- DRA ---------------------------------------------------------------------------------------------

DeviceKey = tuple[str, str, str]
"""(driver, pool, device): a device as an allocation names it."""


def _published(p: Placements) -> dict[DeviceKey, tuple[objects_pb2.ResourceSlice, objects_pb2.Device]]:
    """Every device the slices publish, with its slice."""
    return {(s.spec.driver, s.spec.pool.name, device.name): (s, device)
            for s in p.resource_slices for device in s.spec.devices}


def _devices_allocated_once(p: Placements) -> Iterable[str]:
    published = _published(p)
    holders: dict[DeviceKey, list[str]] = defaultdict(list)
    shares: dict[DeviceKey, Counter[str]] = defaultdict(Counter)
    for claim in sorted(p.resource_claims, key=lambda c: (c.metadata.namespace, c.metadata.name)):
        name = f"{claim.metadata.namespace}/{claim.metadata.name}"
        for result in claim.status.allocation.devices.results:
            if result.admin_access:
                continue
            key = (result.driver, result.pool, result.device)
            if key not in published:
                yield f"claim {name}: device {'/'.join(key)} is published by no ResourceSlice"
                continue
            holders[key].append(name)
            shares[key][result.share_id] += 1
    for key, claims in sorted(holders.items()):
        device = "/".join(key)
        if not published[key][1].allow_multiple_allocations:
            if len(claims) > 1:
                yield f"device {device} allocated {len(claims)} times: {', '.join(claims)}"
        elif twice := sorted(share for share, count in shares[key].items() if count > 1):
            yield f"device {device}, which allows multiple allocations, has shareID {twice[0]!r} " \
                  f"{shares[key][twice[0]]} times: {', '.join(claims)}"


def _claim_names(pod: objects_pb2.Pod) -> Iterable[tuple[str, str | None]]:
    """(the pod's name for a claim, the ResourceClaim's name or None when none was made yet)."""
    generated = {status.name: status.resource_claim_name for status in pod.status.resource_claim_statuses
                 if status.HasField("resource_claim_name")}
    for pod_claim in pod.spec.resource_claims:
        if pod_claim.HasField("resource_claim_name"):
            yield pod_claim.name, pod_claim.resource_claim_name
        else:
            yield pod_claim.name, generated.get(pod_claim.name)


def _selector_admits(selector: objects_pb2.NodeSelector, node: objects_pb2.Node) -> bool:
    fields = {"metadata.name": node.metadata.name}
    return any(_term_matches(node.metadata.labels, term)
               and _term_matches(fields, objects_pb2.NodeSelectorTerm(match_expressions=term.match_fields))
               for term in selector.node_selector_terms)


def _available_on(
    slice_: objects_pb2.ResourceSlice, device: objects_pb2.Device, node: objects_pb2.Node
) -> bool:
    """Whether the slice publishes ``device`` for ``node`` (per device when the slice says so)."""
    where: objects_pb2.ResourceSliceSpec | objects_pb2.Device = (
        device if slice_.spec.per_device_node_selection else slice_.spec)
    if where.all_nodes:
        return True
    if where.HasField("node_name"):
        return where.node_name == node.metadata.name
    return where.HasField("node_selector") and _selector_admits(where.node_selector, node)


def _claims_on_the_pods_node(p: Placements) -> Iterable[str]:
    if not p.resource_claims and not any(pod.spec.resource_claims for pod in p.placed):
        return
    yield from _claims_on_their_nodes(p, p.placed, p.resource_claims)


def _claims_of_deleted_pods(p: Placements) -> Iterable[str]:
    listed = {(pod.metadata.namespace, pod.metadata.name) for pod in p.pods}
    deleted = [pod for pod in p.pods_seen_bound if (pod.metadata.namespace, pod.metadata.name) not in listed]
    yield from _claims_on_their_nodes(p, deleted, p.claims_seen)


def _devices_held_at_once(p: Placements) -> Iterable[str]:
    for device, holder, other in p.devices_held_twice:
        yield f"device {device} of {holder} allocated to {other} too"


def _claims_on_their_nodes(p: Placements, pods: Iterable[objects_pb2.Pod],
                           resource_claims: Iterable[objects_pb2.ResourceClaim]) -> Iterable[str]:
    """Every claim of each of ``pods`` (on their nodes) is one of ``resource_claims``, allocated, reserved
    for the pod, on its node."""
    nodes = {node.metadata.name: node for node in p.nodes}
    claims = {(c.metadata.namespace, c.metadata.name): c for c in resource_claims}
    published = _published(p)
    for pod in sorted(pods, key=lambda pod: (pod.metadata.namespace, pod.metadata.name)):
        node = nodes.get(pod.spec.node_name)
        if node is None:
            continue  # _over_allocatable names pods on no node
        where = f"pod {pod.metadata.namespace}/{pod.metadata.name} on {node.metadata.name}"
        for pod_claim, claim_name in _claim_names(pod):
            claim = claims.get((pod.metadata.namespace, claim_name or ""))
            if claim is None:
                made = f"ResourceClaim {claim_name} does not exist" if claim_name else "no ResourceClaim made"
                yield f"{where}: claim {pod_claim}: {made}"
                continue
            if not claim.status.HasField("allocation"):
                yield f"{where}: claim {claim_name} is not allocated"
                continue
            if pod.metadata.uid not in {ref.uid for ref in claim.status.reserved_for}:
                yield f"{where}: claim {claim_name} is not reserved for it"
            allocation = claim.status.allocation
            if allocation.HasField("node_selector") and not _selector_admits(allocation.node_selector, node):
                yield f"{where}: claim {claim_name} is allocated for other nodes"
            for result in allocation.devices.results:
                found = published.get((result.driver, result.pool, result.device))
                if found is not None and not _available_on(*found, node):
                    yield (f"{where}: claim {claim_name} holds device "
                           f"{result.driver}/{result.pool}/{result.device}, not published for its node")
