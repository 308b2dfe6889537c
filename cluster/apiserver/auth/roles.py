"""Roles: what an identity may do, as RBAC rules (verbs, resources, optionally object names), and the four
built-in roles with the groups they are bound to; grants: a role held where a binding's scope says.

A rule's resources name a kind's plural ("pods") or one of its subresources ("pods/status",
"pods/binding"); "pods" does not grant its subresources (kube's RBAC), "*" grants every resource and
subresource, and a "*" verb every verb. Rules only grant; nothing denies except the absence of a rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster.api.kinds import KINDS
from cluster.apiserver.auth.identity import RequestInfo

#: The verbs a rule may name (Kubernetes' verbs for the calls the API serves).
VERBS = ("create", "get", "list", "watch", "update", "patch", "delete", "deletecollection")
READ_VERBS = ("get", "list", "watch")
#: The resources a rule may name: every kind's plural and the subresources the API serves.
RESOURCES = (
    *(kind.plural for kind in KINDS), "pods/status", "pods/binding", "pods/eviction", "podgroups/status",
    "compositepodgroups/status", "nodes/status", "namespaces/status", "resourcequotas/status",
    "poddisruptionbudgets/status", "resourceclaims/status", "persistentvolumes/status",
    "persistentvolumeclaims/status",
)
ALL = "*"


@dataclass(frozen=True, slots=True)
class Rule:
    verbs: frozenset[str]
    resources: frozenset[str]
    #: Object names the rule is limited to; empty means every object.
    resource_names: frozenset[str] = frozenset()

    def allows(self, request: RequestInfo, resource: str) -> bool:
        """Whether the rule grants ``request``, whose ``full_resource`` is ``resource``."""
        if ALL not in self.verbs and request.verb not in self.verbs:
            return False
        if ALL not in self.resources and resource not in self.resources:
            return False
        return not self.resource_names or request.name in self.resource_names


def rule(verbs: tuple[str, ...], resources: tuple[str, ...], names: tuple[str, ...] = ()) -> Rule:
    return Rule(frozenset(verbs), frozenset(resources), frozenset(names))


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a binding grants its role (kube's RoleBinding versus ClusterRoleBinding).

    ``namespaces`` None is cluster-wide: every namespace, the cluster-scoped kinds and calls across all
    namespaces, except the namespaces in ``excluded``. A set of names is a RoleBinding in each of them: only
    requests addressed to one of those namespaces, never a cluster-scoped kind or a list or watch across
    every namespace (their namespace is "", which no binding names).
    """

    namespaces: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()

    def covers(self, namespace: str) -> bool:
        """Whether the scope includes a request addressed to ``namespace`` ("" for the cluster scope)."""
        if self.namespaces is None:
            return namespace not in self.excluded
        return namespace in self.namespaces


CLUSTER_WIDE = Scope()
#: Kubernetes' own namespaces, which the built-in `client` binding leaves to admins.
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})


@dataclass(frozen=True, slots=True)
class Grant:
    """A role held in a scope: what one binding gives a user or group."""

    role: str
    scope: Scope = CLUSTER_WIDE


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    rules: tuple[Rule, ...]

    def allows(self, request: RequestInfo, resource: str) -> bool:
        """Whether a rule of the role grants ``request``, whose ``full_resource`` is ``resource``."""
        return any(one.allows(request, resource) for one in self.rules)


ADMIN = Role("admin", (rule((ALL,), (ALL,)),))
#: kube's system:kube-scheduler, cut to what podsched's scheduler calls: it reads everything (informers),
#: binds, writes pod status (conditions, nominatedNodeName), PodGroup status (PodGroupInitiallyScheduled),
#: CompositePodGroup status and
#: ResourceClaim status (the devices it allocated, the pods it reserved them for), creates and deletes the
#: ResourceClaims of pods' extended resources backed by DRA,
#: deletes preemption victims, records events (an event series is updated in place), holds its Lease and
#: keeps its LeaseCandidate, and in PreBind binds PersistentVolumes to claims (claimRef) and annotates the
#: claims it provisions for with the node it chose.
SCHEDULER = Role("scheduler", (
    rule(READ_VERBS, (ALL,)),
    rule(("create",), ("pods/binding",)),
    rule(("update", "patch"),
         ("pods/status", "podgroups/status", "compositepodgroups/status", "resourceclaims/status")),
    rule(("delete",), ("pods",)),
    rule(("update", "patch"), ("persistentvolumes", "persistentvolumeclaims")),
    # The claim for a pod's extended resources that DeviceClasses serve: made in PreBind, deleted on failure.
    rule(("create", "delete"), ("resourceclaims",)),
    rule(("create", "update", "patch"), ("events",)),
    rule(("get", "create", "update", "patch"), ("leases",)),
    rule(("create", "update", "patch", "delete", *READ_VERBS), ("leasecandidates",)),
))
#: A user who runs workloads: pods, their PodGroups and CompositePodGroups, the Workloads they are made
#: from (whose gangs' counts scale), and the Services and workload controllers that select
#: them in full (except binding pods and writing status), the ResourceClaims, templates and
#: PersistentVolumeClaims its pods name, evicting its pods; nodes, RuntimeClasses, DeviceClasses,
#: ResourceSlices, StorageClasses and PersistentVolumes (what its pods and claims name or may get) to read.
CLIENT = Role("client", (
    rule(("create", "delete", "deletecollection", *READ_VERBS), ("pods", "podgroups", "compositepodgroups")),
    rule(("create",), ("pods/eviction",)),
    rule(("create", "update", "patch", "delete", "deletecollection", *READ_VERBS),
         ("services", "replicasets", "statefulsets", "replicationcontrollers", "resourceclaims",
          "resourceclaimtemplates", "workloads", "persistentvolumeclaims")),
    rule(READ_VERBS, ("nodes", "runtimeclasses", "deviceclasses", "resourceslices", "storageclasses",
                      "persistentvolumes")),
))
READONLY = Role("readonly", (rule(READ_VERBS, (ALL,)),))

BUILTIN_ROLES: dict[str, Role] = {role.name: role for role in (ADMIN, SCHEDULER, CLIENT, READONLY)}

#: The groups bound to the built-in roles whatever the policy file says (`podsched certs` writes these
#: as the O of its client certificates). system:masters is kube's group of unrestricted users. Clients
#: hold their role everywhere but in the system namespaces, so a workload user cannot create, delete or
#: read pods in kube-system (nor preempt from there with its system priority classes).
MASTERS_GROUP = "system:masters"
BUILTIN_GROUP_BINDINGS: dict[str, Grant] = {
    MASTERS_GROUP: Grant(ADMIN.name),
    "podsched:schedulers": Grant(SCHEDULER.name),
    "podsched:clients": Grant(CLIENT.name, Scope(excluded=SYSTEM_NAMESPACES)),
    "podsched:readonly": Grant(READONLY.name),
}
