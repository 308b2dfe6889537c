"""Scenario files (docs/scenario-format.md) into the objects a simulation creates, in creation order.

A scenario is multi-document YAML of Nodes, Pods, PriorityClasses, PodDisruptionBudgets, PodGroups
(both spellings: scheduling.k8s.io/v1alpha3 and scheduling.x-k8s.io/v1alpha1), the objects of
Dynamic Resource Allocation (DeviceClasses, ResourceSlices, ResourceClaimTemplates, ResourceClaims) and of
storage (StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities, PersistentVolumes and their claims),
read by the same loader as ``podsched apply`` (``cluster.api.manifest``): fields scheduling does not
model are dropped with a warning, never a failure. Everything else that is wrong is found here, before
anything runs, and reported as ``<file>: document <n> (<Kind> <name>): <field>: <problem>``: kinds a
scenario cannot hold, missing or duplicate names, invalid quantities and the rest of the API's validation
(a malformed PodGroup included), pods on nodes the scenario does not define, unknown priority classes,
priorities that contradict their class, pods that RuntimeClass admission would refuse (a class the
scenario lacks, an overhead that is not their class's). A pod that names a PodGroup the scenario lacks
is no error: it waits for its group, as it would in a cluster. Nor is a claim that names a missing
DeviceClass, or a pod that names a missing ResourceClaim or template: the scheduler reports them on the
pod, as in a cluster.

What the scenario leaves out is filled in as docs/scenario-format.md says: a node's
``kubernetes.io/hostname`` label is its name and its allocatable ``pods`` is 110 (allocatable defaults
to capacity first, as the API does).

``spec.priority`` without a class: the API's priority admission (Kubernetes') computes a pod's
priority from its class and refuses a ``spec.priority`` that differs, so a bare number would be refused
or, without a class, become 0. A scenario means "this pod runs at that priority", so the simulator
creates one hidden PriorityClass per distinct (value, preemptionPolicy) — ``simulate-priority-<value>``
(``-minus-<n>`` for negative values, ``-never`` for preemptionPolicy Never) — and names it in the pod.
Admission then resolves exactly the number the scenario gave. The ``simulate-priority-`` prefix is
reserved; a value equal to a system class's (2000000000, 2000001000) uses that system class. A
scheduling.k8s.io PodGroup that gives ``spec.priority`` without a class gets the same treatment (its
admission is a pod's), with the policy PreemptLowerPriority and at most a user priority.

PodDisruptionBudget status: a PDB that gives ``status.disruptionsAllowed`` is *pinned*: the simulation
keeps that status as given, and the disruption controller computes every other PDB's. The API types'
int32 cannot tell ``disruptionsAllowed: 0`` from no value, so a PDB counts as giving it when its manifest
has a ``status``: Kubernetes writes disruptionsAllowed into every status it serializes, and a status
that leaves it out says 0, as the API would read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from google.protobuf.message import Message

from cluster.api import kinds, objects_pb2, runtimeclass, validation, workloadrefs
from cluster.api.manifest import Manifest, ManifestError, load_paths
from cluster.apiserver.registry import strategy_of

#: Dynamic Resource Allocation's kinds, in the order they are created: a claim's class and the devices
#: it may get exist before the claim, and claims and templates before the pods that name them.
DRA_KINDS = (kinds.DEVICE_CLASS, kinds.RESOURCE_SLICE, kinds.RESOURCE_CLAIM_TEMPLATE, kinds.RESOURCE_CLAIM)
#: The storage kinds, in the order they are created: a claim gets the default class at its create, and
#: what the scheduler checks a claim's volumes against exists before the claim.
STORAGE_KINDS = (kinds.STORAGE_CLASS, kinds.CSI_DRIVER, kinds.CSI_NODE, kinds.CSI_STORAGE_CAPACITY,
                 kinds.PERSISTENT_VOLUME, kinds.PERSISTENT_VOLUME_CLAIM)
SCENARIO_KINDS = (kinds.NODE, kinds.POD, kinds.PRIORITY_CLASS, kinds.POD_DISRUPTION_BUDGET, kinds.POD_GROUP,
                  kinds.NAMESPACE, kinds.RUNTIME_CLASS,
                  kinds.SERVICE, kinds.REPLICA_SET, kinds.STATEFUL_SET, kinds.REPLICATION_CONTROLLER,
                  *DRA_KINDS, kinds.WORKLOAD, kinds.COMPOSITE_POD_GROUP, *STORAGE_KINDS)
HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_MAX_PODS = "110"
DEFAULT_NAMESPACE = "default"
HIDDEN_CLASS_PREFIX = "simulate-priority-"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
NEVER = "Never"
#: The highest priority a user-defined PriorityClass may have (the API refuses more).
HIGHEST_USER_PRIORITY = 1_000_000_000
#: The built-in classes the API server creates at start, by name (their values are fixed by Kubernetes).
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


class ScenarioError(Exception):
    """The scenario cannot be simulated; ``problems`` lists every error, each naming file, document,
    object and field."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(slots=True)
class Entry:
    """One object of the scenario and where it was written."""

    source: str
    index: int
    obj: Message

    @property
    def kind(self) -> kinds.Kind:
        return kinds.kind_of(self.obj)

    @property
    def where(self) -> str:
        """``file: document n (Kind name)``, the prefix of every message about this object."""
        identity = " ".join(part for part in (self.kind.name, self.obj.metadata.name) if part)
        return f"{self.source}: document {self.index} ({identity})"


@dataclass(slots=True)
class Scenario:
    #: Namespaces, created first (a system namespace the server made already is updated instead).
    namespaces: list[Entry] = field(default_factory=list)
    priority_classes: list[Entry] = field(default_factory=list)
    #: RuntimeClasses, created before any pod (admission reads the class a pod names).
    runtime_classes: list[Entry] = field(default_factory=list)
    nodes: list[Entry] = field(default_factory=list)
    pdbs: list[Entry] = field(default_factory=list)
    #: scheduling.k8s.io Workloads: the templates the groups below name (checked at their create).
    group_templates: list[Entry] = field(default_factory=list)
    #: CompositePodGroups, in file order (``creation_order`` puts each parent before its children).
    composite_groups: list[Entry] = field(default_factory=list)
    pod_groups: list[Entry] = field(default_factory=list)
    #: Services, ReplicaSets, StatefulSets and ReplicationControllers: their selectors spread pods.
    workloads: list[Entry] = field(default_factory=list)
    #: DeviceClasses, ResourceSlices, ResourceClaimTemplates and ResourceClaims, in file order
    #: (``creation_order`` puts them in DRA_KINDS' order).
    resources: list[Entry] = field(default_factory=list)
    #: StorageClasses, CSI objects, PersistentVolumes and claims, in file order (``creation_order`` puts
    #: them in STORAGE_KINDS' order).
    storage: list[Entry] = field(default_factory=list)
    #: Pods with spec.nodeName: already running on that node.
    running_pods: list[Entry] = field(default_factory=list)
    #: Pods to schedule, in file order.
    pending_pods: list[Entry] = field(default_factory=list)
    #: Unknown or duplicate fields dropped by the loader, each with its location.
    warnings: list[str] = field(default_factory=list)

    def creation_order(self) -> list[Entry]:
        """Namespaces, RuntimeClasses, PriorityClasses, Nodes, PDBs, StorageClasses, CSIDrivers, CSINodes,
        CSIStorageCapacities, PersistentVolumes, PersistentVolumeClaims, DeviceClasses, ResourceSlices,
        ResourceClaimTemplates, ResourceClaims, Workloads, CompositePodGroups (parents first), PodGroups
        (whose claims come from those templates), Services and workload controllers, running pods, then
        pending pods in file order."""
        storage = sorted(self.storage, key=lambda entry: STORAGE_KINDS.index(entry.kind))
        resources = sorted(self.resources, key=lambda entry: DRA_KINDS.index(entry.kind))
        return [*self.namespaces, *self.runtime_classes, *self.priority_classes, *self.nodes, *self.pdbs,
                *storage, *resources, *self.group_templates, *_parents_first(self.composite_groups),
                *self.pod_groups, *self.workloads, *self.running_pods, *self.pending_pods]

    @property
    def pods(self) -> list[Entry]:
        return [*self.running_pods, *self.pending_pods]

    def pinned_pdbs(self) -> frozenset[str]:
        """``namespace/name`` of the PDBs whose status the scenario gives (see the module docstring)."""
        return frozenset(f"{entry.obj.metadata.namespace}/{entry.obj.metadata.name}"
                         for entry in self.pdbs if entry.obj.HasField("status"))


def _parents_first(groups: Sequence[Entry]) -> list[Entry]:
    """CompositePodGroups ordered so that a parent the scenario holds comes before its children (by
    depth; a parent the scenario lacks counts as a root, its group waiting for it as in a cluster)."""
    parents = {entry.obj.metadata.name: entry.obj.spec.parent_composite_pod_group_name
               for entry in groups if entry.obj.spec.HasField("parent_composite_pod_group_name")}

    def depth(name: str) -> int:
        seen = set()
        while name in parents and name not in seen:  # a cycle stops; the scheduler reports it
            seen.add(name)
            name = parents[name]
        return len(seen)

    return sorted(groups, key=lambda entry: depth(entry.obj.metadata.name))


def load_scenario(paths: Sequence[str]) -> Scenario:
    """Read and check the scenario in ``paths`` (files, directories, ``-``); raise ScenarioError."""
    try:
        manifests = load_paths(paths)
    except ManifestError as exc:
        raise ScenarioError(exc.problems) from None
    return build_scenario(manifests)


def build_scenario(manifests: Iterable[Manifest]) -> Scenario:
    scenario = Scenario()
    problems: list[str] = []
    seen: dict[tuple[str, str, str], Entry] = {}
    for manifest in manifests:
        entry = Entry(manifest.source, manifest.index, manifest.obj)
        scenario.warnings += [f"{entry.where}: {warning}" for warning in manifest.warnings]
        if manifest.kind not in SCENARIO_KINDS:
            served = ", ".join(kind.name for kind in SCENARIO_KINDS)
            problems.append(f"{entry.where}: kind: Unsupported value: {manifest.kind.name}: a scenario holds "
                            f"{served}")
            continue
        own = _normalize(entry)
        if own:
            problems += [f"{entry.where}: {problem}" for problem in own]
            continue
        meta = entry.obj.metadata
        identity = (manifest.kind.name, meta.namespace, meta.name)
        if identity in seen:
            first = seen[identity]
            problems.append(f'{entry.where}: metadata.name: Duplicate value: "{meta.name}": already defined '
                            f"in {first.source}: document {first.index}")
            continue
        seen[identity] = entry
        _file(scenario, entry)
    problems += _check_references(scenario)
    if problems:
        raise ScenarioError(problems)
    hidden = _hidden_priority_classes(scenario.pods)
    scenario.priority_classes += _hidden_group_classes(scenario.pod_groups, hidden)
    return scenario


def _normalize(entry: Entry) -> list[str]:
    """Apply the scenario defaults to one object and return its field errors."""
    obj, kind = entry.obj, entry.kind
    meta = obj.metadata
    if not meta.name:
        # Outcomes are reported by name, so a generated name could not be expected in a result.
        return [validation.required("metadata.name", "every object of a scenario is named")]
    if kind.namespaced:
        meta.namespace = meta.namespace or DEFAULT_NAMESPACE
    elif meta.namespace:
        return [validation.forbidden("metadata.namespace", f"a {kind.name} is not namespaced")]
    if isinstance(obj, objects_pb2.Node):
        _default_node(obj)
    problems = validation.validate_object(_defaulted(kind, obj))
    if isinstance(obj, objects_pb2.PriorityClass) and obj.metadata.name.startswith(HIDDEN_CLASS_PREFIX):
        problems.append(validation.forbidden(
            "metadata.name", f"the prefix '{HIDDEN_CLASS_PREFIX}' is reserved for the classes the simulator "
            "creates for pods that give spec.priority without a class"))
    if isinstance(obj, objects_pb2.PriorityClass) and obj.metadata.name in SYSTEM_PRIORITY_CLASSES:
        problems.append(validation.forbidden(
            "metadata.name", "system priority classes exist from the start; do not define them"))
    return problems


def _defaulted(kind: kinds.Kind, obj: Message) -> Message:
    """A copy of ``obj`` with the defaults the API server gives its kind before validating it (a claim's
    allocationMode ExactCount, ...); the scenario creates the object as written, and the server defaults
    it again."""
    defaults = strategy_of(kind).defaults
    if defaults is None:
        return obj
    copy = type(obj)()
    copy.CopyFrom(obj)
    defaults(copy)
    return copy


def _default_node(node: objects_pb2.Node) -> None:
    node.metadata.labels.setdefault(HOSTNAME_LABEL, node.metadata.name)
    allocatable = node.status.allocatable
    if not allocatable:
        for resource, quantity in node.status.capacity.items():
            allocatable[resource] = quantity
    allocatable.setdefault("pods", DEFAULT_MAX_PODS)


def _file(scenario: Scenario, entry: Entry) -> None:
    obj = entry.obj
    if isinstance(obj, objects_pb2.PriorityClass):
        scenario.priority_classes.append(entry)
    elif isinstance(obj, objects_pb2.Node):
        scenario.nodes.append(entry)
    elif isinstance(obj, objects_pb2.PodDisruptionBudget):
        scenario.pdbs.append(entry)
    elif isinstance(obj, objects_pb2.PodGroup):
        scenario.pod_groups.append(entry)
    elif isinstance(obj, objects_pb2.Workload):
        scenario.group_templates.append(entry)
    elif isinstance(obj, objects_pb2.CompositePodGroup):
        scenario.composite_groups.append(entry)
    elif isinstance(obj, objects_pb2.Namespace):
        scenario.namespaces.append(entry)
    elif isinstance(obj, objects_pb2.RuntimeClass):
        scenario.runtime_classes.append(entry)
    elif isinstance(obj, (objects_pb2.Service, objects_pb2.ReplicaSet, objects_pb2.StatefulSet,
                          objects_pb2.ReplicationController)):
        scenario.workloads.append(entry)
    elif entry.kind in DRA_KINDS:
        scenario.resources.append(entry)
    elif entry.kind in STORAGE_KINDS:
        scenario.storage.append(entry)
    elif obj.spec.node_name:
        scenario.running_pods.append(entry)
    else:
        scenario.pending_pods.append(entry)


def _check_references(scenario: Scenario) -> list[str]:
    """What the API would refuse (or silently get wrong) about objects naming each other."""
    problems = []
    defaults = [entry for entry in scenario.priority_classes if entry.obj.global_default]
    problems += [
        f"{entry.where}: globalDefault: Forbidden: PriorityClass {defaults[0].obj.metadata.name} is already "
        "marked as default. Only one default can exist"
        for entry in defaults[1:]
    ]
    classes = dict(SYSTEM_PRIORITY_CLASSES)
    classes.update({entry.obj.metadata.name: entry.obj.value for entry in scenario.priority_classes})
    policies = {entry.obj.metadata.name: entry.obj.preemption_policy for entry in scenario.priority_classes
                if entry.obj.HasField("preemption_policy")}
    nodes = {entry.obj.metadata.name for entry in scenario.nodes}
    runtime_classes = {entry.obj.metadata.name: entry.obj for entry in scenario.runtime_classes}
    for entry in scenario.pod_groups:
        problems += _check_group_priority(entry, classes)
    workloads = {(e.obj.metadata.namespace, e.obj.metadata.name): e.obj for e in scenario.group_templates}
    for entry in [*scenario.composite_groups, *scenario.pod_groups]:
        problems += _check_workload_ref(entry, workloads)
    for entry in scenario.pods:
        problems += _check_runtime_class(entry, runtime_classes)
        spec = entry.obj.spec
        if spec.node_name and spec.node_name not in nodes:
            problems.append(f"{entry.where}: spec.nodeName: Not found: \"{spec.node_name}\": the scenario "
                            "defines no such Node (a pod with spec.nodeName runs on a node of the scenario)")
        if spec.priority_class_name:
            value = classes.get(spec.priority_class_name)
            if value is None:
                problems.append(f"{entry.where}: spec.priorityClassName: Not found: "
                                f"\"{spec.priority_class_name}\": no PriorityClass with this name in the "
                                "scenario")
                continue
            if spec.HasField("priority") and spec.priority != value:
                problems.append(f"{entry.where}: spec.priority: Invalid value: {spec.priority}: "
                                f"PriorityClass {spec.priority_class_name} has value {value}; give one or "
                                "the other")
            policy = policies.get(spec.priority_class_name, PREEMPT_LOWER_PRIORITY)
            if spec.HasField("preemption_policy") and spec.preemption_policy != policy:
                problems.append(f"{entry.where}: spec.preemptionPolicy: Invalid value: "
                                f"\"{spec.preemption_policy}\": PriorityClass {spec.priority_class_name} has "
                                f"preemptionPolicy {policy}")
        elif spec.HasField("priority") and spec.priority > HIGHEST_USER_PRIORITY and not (
            spec.priority in SYSTEM_PRIORITY_CLASSES.values() and _policy(spec) == PREEMPT_LOWER_PRIORITY
        ):
            problems.append(f"{entry.where}: spec.priority: Invalid value: {spec.priority}: must be at most "
                            f"{HIGHEST_USER_PRIORITY} (or, with preemptionPolicy {PREEMPT_LOWER_PRIORITY}, a "
                            "system class's value)")
    return problems


def _check_workload_ref(entry: Entry, workloads: dict[tuple[str, str], objects_pb2.Workload]) -> list[str]:
    """What PodGroupWorkloadExists admission would refuse about a group: a Workload or a template the
    scenario lacks."""
    spec = entry.obj.spec
    if not spec.HasField("workload_ref"):
        return []
    workload = workloads.get((entry.obj.metadata.namespace, spec.workload_ref.workload_name))
    refused = workloadrefs.refusal(entry.obj, workload)
    return [] if refused is None else [f"{entry.where}: spec.workloadRef: {refused}"]


def _check_runtime_class(entry: Entry, classes: dict[str, objects_pb2.RuntimeClass]) -> list[str]:
    """What RuntimeClass admission would refuse about a pod: a class the scenario lacks, an overhead
    other than its class's (or without one), a nodeSelector conflicting with its class's."""
    spec = entry.obj.spec
    runtime_class = None
    if spec.HasField("runtime_class_name"):
        runtime_class = classes.get(spec.runtime_class_name)
        if runtime_class is None:
            return [f"{entry.where}: spec.runtimeClassName: Not found: \"{spec.runtime_class_name}\": no "
                    "RuntimeClass with this name in the scenario"]
    trial = objects_pb2.Pod()
    trial.CopyFrom(entry.obj)
    refused = runtimeclass.apply_runtime_class(trial, runtime_class)
    if refused is None:
        return []
    return [f"{entry.where}: {refused.field}: Forbidden: {refused.message}"]


def _check_group_priority(entry: Entry, classes: dict[str, int]) -> list[str]:
    """A PodGroup's class must exist, and a priority it gives must be its class's (or, without a class,
    a user priority: the simulator makes a class for it)."""
    spec = entry.obj.spec
    name = spec.priority_class_name
    if not name:
        if spec.HasField("priority") and spec.priority > HIGHEST_USER_PRIORITY:
            return [f"{entry.where}: spec.priority: Invalid value: {spec.priority}: must be at most "
                    f"{HIGHEST_USER_PRIORITY}"]
        return []
    if name not in classes:
        return [f"{entry.where}: spec.priorityClassName: Not found: \"{name}\": no PriorityClass with this "
                "name in the scenario"]
    if spec.HasField("priority") and spec.priority != classes[name]:
        return [f"{entry.where}: spec.priority: Invalid value: {spec.priority}: PriorityClass {name} has "
                f"value {classes[name]}; give one or the other"]
    return []


def _policy(spec: objects_pb2.PodSpec) -> str:
    return spec.preemption_policy if spec.HasField("preemption_policy") else PREEMPT_LOWER_PRIORITY


def hidden_class_name(value: int, policy: str) -> str:
    number = f"minus-{-value}" if value < 0 else str(value)
    return f"{HIDDEN_CLASS_PREFIX}{number}" + ("-never" if policy == NEVER else "")


def _hidden_group_classes(groups: Sequence[Entry], created: list[Entry]) -> list[Entry]:
    """As ``_hidden_priority_classes`` for the PodGroups that give spec.priority without a class (only
    the scheduling.k8s.io spelling has one), adding to the classes ``created`` for pods; every class to
    create."""
    classes = {kinds.metadata_of(entry.obj).name: entry for entry in created}
    for entry in groups:
        spec = entry.obj.spec
        if spec.priority_class_name or not spec.HasField("priority"):
            continue
        name = hidden_class_name(spec.priority, PREEMPT_LOWER_PRIORITY)
        spec.priority_class_name = name
        if name not in classes:
            classes[name] = Entry(entry.source, entry.index, _hidden_class(name, spec.priority,
                                                                           PREEMPT_LOWER_PRIORITY))
    return list(classes.values())


def _hidden_class(name: str, value: int, policy: str) -> objects_pb2.PriorityClass:
    return objects_pb2.PriorityClass(
        metadata=objects_pb2.ObjectMeta(name=name), value=value, preemption_policy=policy,
        description=f"created by podsched simulate for the objects that give spec.priority {value} without "
        "a class",
    )


def _hidden_priority_classes(pods: Sequence[Entry]) -> list[Entry]:
    """Name a class in every pod that gives spec.priority without one (see the module docstring), and
    return the classes to create for them."""
    created: dict[str, Entry] = {}
    system_by_value = {value: name for name, value in SYSTEM_PRIORITY_CLASSES.items()}
    for entry in pods:
        spec = entry.obj.spec
        if spec.priority_class_name or not spec.HasField("priority"):
            continue
        policy = _policy(spec)
        if spec.priority in system_by_value and policy == PREEMPT_LOWER_PRIORITY:
            spec.priority_class_name = system_by_value[spec.priority]
            continue
        name = hidden_class_name(spec.priority, policy)
        spec.priority_class_name = name
        if name not in created:
            created[name] = Entry(entry.source, entry.index, _hidden_class(name, spec.priority, policy))
    return list(created.values())
