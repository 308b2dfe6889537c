"""Pod priority, as Kubernetes' Priority admission plugin and its PriorityClass rules decide it.

Pods (on create): the priority comes from the PriorityClass the pod names (an unknown name is
Forbidden); a pod naming none gets the globalDefault class, if one exists (its name is written into the
pod), else priority 0. A pod may carry spec.priority only if it equals the computed value, and
spec.preemptionPolicy only if it equals the class's; an unset policy is copied from the class
(PreemptLowerPriority without one). On update the stored priority and policy are kept.

Groups: a client may not give a group a priority it could not give a pod. An upstream
(scheduling.k8s.io) PodGroup, a CompositePodGroup, and each of a Workload's podGroupTemplates and
compositePodGroupTemplates (at every depth) get their priority the same way, and their
preemptionPolicy from the class too (PreemptLowerPriority when the class sets none; a different one
given is Forbidden), as kube-apiserver's Priority plugin with the PodGroupPreemptionPolicy feature. A
template's class is the one the PodGroups made from it carry. Coscheduling's PodGroup has none. (A
system class needs a quota that opens it, for groups as for pods: the ResourceQuota plugin's.)

PriorityClasses: at most one class may be the globalDefault. (The reserved "system-" names and the
highest user value are the PriorityClass registry's, cluster/apiserver/registry/priorityclasses.py;
immutable value and preemptionPolicy are validation's.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cluster.api import objects_pb2, podgroups
from cluster.api.kinds import COMPOSITE_POD_GROUP, POD, POD_GROUP, PRIORITY_CLASS, WORKLOAD, Kind
from cluster.apiserver import messages
from cluster.apiserver.admission.plugin import AdmissionPlugin, Rollback
from cluster.apiserver.context import Context
from cluster.apiserver.registry.priorityclasses import DEFAULT_PREEMPTION_POLICY
from cluster.apiserver.selection import Selection

if TYPE_CHECKING:
    from cluster.apiserver.watchcache import Cacher

#: A pod's priority when it names no class and no class is the globalDefault.
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS = 0


# ---------------------------------------------------------------------------------------------- pods


async def _class_priority(
    cache: Cacher, kind: Kind, name: str, class_name: str
) -> tuple[str, int, str | None]:
    """What the Priority admission plugin gives an object naming ``class_name`` (maybe ""): the class name
    to write (the globalDefault's when none is named), the priority, and the class's preemption policy
    (None when the class sets none). An unknown class is Forbidden."""
    if class_name:
        pc = await cache.get(PRIORITY_CLASS, "", class_name)
        if pc is None:
            raise messages.forbidden(kind, name, f"no PriorityClass with name {class_name} was found")
        return class_name, pc.value, pc.preemption_policy if pc.HasField("preemption_policy") else None
    default_class = await global_default_class(cache)
    if default_class is None:
        return "", DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS, DEFAULT_PREEMPTION_POLICY
    policy = default_class.preemption_policy if default_class.HasField("preemption_policy") else None
    return default_class.metadata.name, default_class.value, policy


#: What carries a priority class: a pod's or a group's spec, or a Workload's template of a group.
Prioritized = (
    objects_pb2.PodSpec | objects_pb2.PodGroupSpec | objects_pb2.CompositePodGroupSpec
    | objects_pb2.PodGroupTemplate | objects_pb2.CompositePodGroupTemplate
)


async def _admit_priority(cache: Cacher, kind: Kind, name: str, spec: Prioritized, where: str) -> str | None:
    """Write the class (the globalDefault's when none is named) and its priority into ``spec``, refusing a
    given spec.priority that differs; the class's preemption policy (None when it sets none). ``where``
    names ``spec`` in the message."""
    spec.priority_class_name, priority, policy = await _class_priority(
        cache, kind, name, spec.priority_class_name
    )
    if spec.HasField("priority") and spec.priority != priority:
        raise messages.forbidden(
            kind, name,
            f"the integer value of priority ({spec.priority}) must not be provided in {where}; priority "
            f"admission controller computed {priority} from the given PriorityClass name",
        )
    spec.priority = priority
    return policy


def _admit_preemption_policy(
    kind: Kind, name: str, spec: Prioritized, policy: str | None, where: str
) -> None:
    """Write the class's preemption policy (``policy``; None: the class sets none, and ``spec`` keeps
    its own) into ``spec``, refusing a given one that differs."""
    if policy is None:
        return
    if spec.HasField("preemption_policy") and spec.preemption_policy != policy:
        raise messages.forbidden(
            kind, name,
            f"the string value of PreemptionPolicy ({spec.preemption_policy}) must not be provided in "
            f"{where}; priority admission controller computed {policy} from the given PriorityClass name",
        )
    spec.preemption_policy = policy


async def admit_pod_create(cache: Cacher, pod: objects_pb2.Pod) -> None:
    """Resolve ``pod``'s priority and preemption policy from its class (see the module docstring); the
    classes are consistent reads from the watch cache (which asks the store when it cannot answer)."""
    spec, name = pod.spec, pod.metadata.name
    policy = await _admit_priority(cache, POD, name, spec, "pod spec")
    _admit_preemption_policy(POD, name, spec, policy, "pod spec")


def admit_pod_update(new: objects_pb2.Pod, old: objects_pb2.Pod) -> None:
    """Keep the priority and policy admission set on create when an update leaves them out (pod
    validation refuses any other change to them)."""
    if not new.spec.HasField("priority") and old.spec.HasField("priority"):
        new.spec.priority = old.spec.priority
    if not new.spec.HasField("preemption_policy") and old.spec.HasField("preemption_policy"):
        new.spec.preemption_policy = old.spec.preemption_policy


# ------------------------------------------------------------------------------------------ pod groups


async def _admit_group(cache: Cacher, kind: Kind, name: str, spec: Prioritized, where: str) -> None:
    """A group's (or a group template's) priority and preemption policy, as a pod's; a class setting no
    policy gives PreemptLowerPriority (upstream's PodGroup default)."""
    policy = await _admit_priority(cache, kind, name, spec, where)
    _admit_preemption_policy(kind, name, spec, policy or DEFAULT_PREEMPTION_POLICY, where)


def _keep_group(new: Prioritized, old: Prioritized) -> None:
    """An update keeps the priority and policy admission set on create (validation keeps the class)."""
    if old.HasField("priority"):
        new.priority = old.priority
    if old.HasField("preemption_policy") and not new.HasField("preemption_policy"):
        new.preemption_policy = old.preemption_policy


async def admit_pod_group_create(cache: Cacher, group: objects_pb2.PodGroup) -> None:
    """An upstream PodGroup's priority, as a pod's: from the class it names, else the globalDefault class
    (written into it), else 0; spec.priority only if it equals that; its preemptionPolicy the class's.
    Coscheduling's spelling has neither."""
    if podgroups.is_coscheduling(group):
        return
    await _admit_group(cache, POD_GROUP, group.metadata.name, group.spec, "podgroup spec")


def admit_pod_group_update(new: objects_pb2.PodGroup, old: objects_pb2.PodGroup) -> None:
    _keep_group(new.spec, old.spec)


async def admit_composite_pod_group_create(cache: Cacher, group: objects_pb2.CompositePodGroup) -> None:
    """A CompositePodGroup's priority and preemption policy, as a PodGroup's."""
    await _admit_group(cache, COMPOSITE_POD_GROUP, group.metadata.name, group.spec, "compositepodgroup spec")


def admit_composite_pod_group_update(
    new: objects_pb2.CompositePodGroup, old: objects_pb2.CompositePodGroup
) -> None:
    _keep_group(new.spec, old.spec)


async def admit_workload_create(cache: Cacher, workload: objects_pb2.Workload) -> None:
    """Each template's priority and preemption policy, as the PodGroup (or CompositePodGroup) made from it
    will have them; a refusal names the template."""
    for path, template in podgroups.group_templates(workload.spec):
        await _admit_group(cache, WORKLOAD, workload.metadata.name, template, path)


def admit_workload_update(new: objects_pb2.Workload, old: objects_pb2.Workload) -> None:
    """An update keeps each template's priority and policy (validation keeps the templates)."""
    olds = dict(podgroups.group_templates(old.spec))
    for path, template in podgroups.group_templates(new.spec):
        previous = olds.get(path)
        if previous is not None and type(previous) is type(template):
            _keep_group(template, previous)


#: Every PriorityClass, parsed once: every pod create that names no class lists them (about 5 us a parse).
_ALL_PRIORITY_CLASSES = Selection.parse(PRIORITY_CLASS)


async def global_default_class(cache: Cacher) -> objects_pb2.PriorityClass | None:
    """The globalDefault class; if a race let two in, the lower value wins (as in Kubernetes). A
    consistent read from the watch cache, not a List from the store on every pod create."""
    classes = await cache.list(_ALL_PRIORITY_CLASSES)
    defaults = [pc for pc in classes.items if pc.global_default]
    return min(defaults, key=lambda pc: pc.value, default=None)


# ------------------------------------------------------------------------------- priority classes


async def admit_priority_class(
    cache: Cacher, pc: objects_pb2.PriorityClass, *, updating: bool
) -> None:
    """At most one globalDefault: a second one is Forbidden, naming the class that already is."""
    if not pc.global_default:
        return
    current = await global_default_class(cache)
    if current is None:
        return
    if not updating or current.metadata.name != pc.metadata.name:
        raise messages.forbidden(
            PRIORITY_CLASS, pc.metadata.name,
            f"PriorityClass {current.metadata.name} is already marked as default. Only one default can exist",
        )


class Priority(AdmissionPlugin):
    name = "Priority"
    handles = {
        "mutate_create": frozenset({POD, POD_GROUP, COMPOSITE_POD_GROUP, WORKLOAD}),
        "mutate_update": frozenset({POD, POD_GROUP, COMPOSITE_POD_GROUP, WORKLOAD}),
        "validate_create": frozenset({PRIORITY_CLASS}),
        "validate_update": frozenset({PRIORITY_CLASS}),
    }

    async def mutate_create(self, ctx: Context, obj: Any) -> None:
        if isinstance(obj, objects_pb2.Pod):
            await admit_pod_create(ctx.cache, obj)
        elif isinstance(obj, objects_pb2.PodGroup):
            await admit_pod_group_create(ctx.cache, obj)
        elif isinstance(obj, objects_pb2.CompositePodGroup):
            await admit_composite_pod_group_create(ctx.cache, obj)
        elif isinstance(obj, objects_pb2.Workload):
            await admit_workload_create(ctx.cache, obj)

    async def mutate_update(self, ctx: Context, new: Any, old: Any) -> None:
        if isinstance(new, objects_pb2.Pod):
            admit_pod_update(new, old)
        elif isinstance(new, objects_pb2.PodGroup):
            admit_pod_group_update(new, old)
        elif isinstance(new, objects_pb2.CompositePodGroup):
            admit_composite_pod_group_update(new, old)
        elif isinstance(new, objects_pb2.Workload):
            admit_workload_update(new, old)

    async def validate_create(self, ctx: Context, obj: Any, dry_run: bool) -> Rollback | None:
        if isinstance(obj, objects_pb2.PriorityClass):
            await admit_priority_class(ctx.cache, obj, updating=False)
        return None

    async def validate_update(self, ctx: Context, new: Any, old: Any) -> None:
        if isinstance(new, objects_pb2.PriorityClass):
            await admit_priority_class(ctx.cache, new, updating=True)
