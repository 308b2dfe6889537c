"""`podsched apply -f FILE|DIR|-`: create what is absent, replace what changed, leave the rest alone.

Nothing is half-applied: every manifest is parsed first (a parse error in any document stops
everything, and so does a document too large to send: cluster.api.limits), then the server checks every
object in a dry run, then the pods the apply creates are judged together against their namespaces'
ResourceQuotas, and only when all pass are they written (consecutive new objects of one kind in Batch
calls, each created and answered on its own).
Objects go in dependency order — PriorityClasses, then Nodes and DeviceClasses, then ResourceQuotas and
ResourceSlices, then PodGroups, ResourceClaims and their templates, then the rest in file order — so a
pod may name a priority class created by the same apply, a namespace's quota counts the pods the same
apply creates there (and may open the system priority classes for them), a pod's claims exist before it,
and a gang's PodGroup exists before its pods.

The dry run judges each pod against the quotas as they stand, as if it were the only one. So before any
write, the new pods (creates, not updates) are counted in file order against each namespace's quotas —
the stored ones and those the apply creates or updates, as their dry runs answered — with
cluster.api.quota's rules: the first pod that a quota would refuse once the pods before it are in (over a
hard limit, or of a system priority class that no quota opens) refuses the whole apply, in the server's
words, naming its document. New PodGroups are judged among them by the same rule for system classes
(a group uses no quota). A namespace whose quotas the caller may not list is left to the server's
check of each pod as it is written.

Updates replace labels, annotations and spec with the manifest's, keeping what the server owns (the node
a pod was bound to, the priority admission resolved, defaulted fields). A manifest that carries
metadata.resourceVersion updates only while that version is current, as with kubectl.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from google.protobuf.message import Message

from cluster.api import errors, kinds, objects_pb2, runtimeclass, validation, workloadrefs
from cluster.api.limits import MAX_REQUEST_BYTES, MAX_REQUEST_SIZE
from cluster.api.manifest import Manifest, ManifestError, load_paths
from cluster.api.quota import first_refused
from cluster.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    UsageError,
    add_server_flag,
    connect,
    error_line,
    print_error,
    resource_ref,
    run_async,
)
from cluster.client import FAIL_FAST_POLICY, Client, object_request_bytes

# Kinds others refer to go first: pods name priority classes (admission resolves them at create), quotas
# admit pods, and a gang's pods find their PodGroup there when they are queued. Namespaces go before
# everything, as kubectl orders them (what is in a namespace may be selected by its labels). Pods name
# RuntimeClasses, which admission must find at their create.
_ORDER = {kinds.PRIORITY_CLASS: 0, kinds.NODE: 1, kinds.RESOURCE_QUOTA: 2, kinds.POD_GROUP: 3,
          kinds.NAMESPACE: -1, kinds.RUNTIME_CLASS: 0}
# Services and workload controllers go before pods too: the scheduler spreads a pod by their selectors.
_ORDER.update(
    {kinds.SERVICE: 3, kinds.REPLICA_SET: 3, kinds.STATEFUL_SET: 3, kinds.REPLICATION_CONTROLLER: 3}
)
# A pod's claims, the templates they are made from and the devices and classes they are allocated from
# go before it: the scheduler queues a pod only once its claims exist.
_ORDER.update({kinds.DEVICE_CLASS: 1, kinds.RESOURCE_SLICE: 2, kinds.RESOURCE_CLAIM_TEMPLATE: 3,
               kinds.RESOURCE_CLAIM: 3})
# Storage: a claim created before the default StorageClass would get no class (admission gives it at
# create), and the volumes a claim may bind to are best there when it is queued; CSI drivers, nodes and
# capacities are what the scheduler checks claims' volumes against.
_ORDER.update({kinds.STORAGE_CLASS: 0, kinds.CSI_DRIVER: 0, kinds.CSI_NODE: 1, kinds.CSI_STORAGE_CAPACITY: 1,
               kinds.PERSISTENT_VOLUME: 2, kinds.PERSISTENT_VOLUME_CLAIM: 3})
# A group naming a Workload's template is admitted only once the Workload exists.
_ORDER.update({kinds.WORKLOAD: 2, kinds.COMPOSITE_POD_GROUP: 3})
_LAST = 4
#: Workload controllers podsched stores (the scheduler spreads pods by their selectors) but never runs:
#: applying one creates no pods, which a user coming from Kubernetes would not expect.
_CONTROLLERS_NOT_RUN = (kinds.REPLICA_SET, kinds.STATEFUL_SET, kinds.REPLICATION_CONTROLLER)
#: The system priority classes' reserved prefix: only a quota admits them.
_SYSTEM_CLASS_PREFIX = "system-"

# Fields the server fills in when a manifest leaves them out; an update keeps the stored value rather
# than asking to clear it (kubectl's apply leaves fields it never set to their owners in the same way).
_SERVER_OWNED: dict[kinds.Kind, tuple[str, ...]] = {
    kinds.POD: (
        "node_name",
        "scheduler_name",
        "priority",
        # Admission writes the globalDefault class's name into a pod that names none.
        "priority_class_name",
        "preemption_policy",
        "termination_grace_period_seconds",
        "restart_policy",
        "service_account_name",
    ),
    kinds.PRIORITY_CLASS: ("preemption_policy",),
    # Admission's, as a pod's; the disruption mode is defaulted.
    kinds.POD_GROUP: ("priority", "priority_class_name", "disruption_mode"),
    kinds.COMPOSITE_POD_GROUP: ("priority", "priority_class_name", "disruption_mode"),
    # The binder's (the PV controller's, the scheduler's) and DefaultStorageClass admission's.
    kinds.PERSISTENT_VOLUME: ("claim_ref",),
    kinds.PERSISTENT_VOLUME_CLAIM: ("volume_name", "storage_class_name"),
}
#: The kinds whose server-owned fields are in their spec.
_SPEC_OWNED = (kinds.POD, kinds.POD_GROUP, kinds.COMPOSITE_POD_GROUP, kinds.PERSISTENT_VOLUME,
               kinds.PERSISTENT_VOLUME_CLAIM)
#: Annotations the volume binder and provisioner write on volumes and claims (bind-completed,
#: bound-by-controller, selected-node, storage-provisioner, ...): a re-apply keeps those it does not set.
_BINDER_ANNOTATION_PREFIXES = ("pv.kubernetes.io/", "volume.kubernetes.io/", "volume.beta.kubernetes.io/")

# An update that loses a race with another writer is recomputed from a fresh read this many times.
_CONFLICT_RETRIES = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "apply",
        help="create or update objects from manifests",
        description="Create or update objects from Kubernetes YAML or JSON manifests. "
        "All documents are checked by the server before any is written.",
    )
    parser.add_argument(
        "-f", "--filename", action="append", required=True,
        help="a manifest file, a directory of *.yaml/*.yml/*.json, or - for stdin (repeatable)",
    )
    parser.add_argument(
        "-n", "--namespace", default=None, help="namespace for manifests that name none (default: default)"
    )
    parser.add_argument(
        "--validate", choices=("strict", "warn"), default="warn",
        help="unknown fields: warn (default) drops them with a warning; strict rejects the manifest",
    )
    parser.add_argument(
        "--dry-run", choices=("server", "none"), default="none",
        help="server: have the server check every object, write nothing",
    )
    add_server_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        manifests = load_paths(args.filename, strict=args.validate == "strict")
    except ManifestError as exc:
        for problem in exc.problems:
            print_error(f"error: {problem}")
        print_error("error: nothing was applied")
        return EXIT_ERROR
    for manifest in manifests:
        for warning in manifest.warnings:
            print_error(f"Warning: {warning}")
    for warning in controller_warnings(manifests):
        print_error(f"Warning: {warning}")
    try:
        manifests = _prepare(manifests, args.namespace)
    except UsageError as exc:
        print_error(f"error: {exc}")
        return EXIT_ERROR
    oversized = [problem for problem in map(_too_large, manifests) if problem is not None]
    if oversized:
        for problem in oversized:
            print_error(f"error: {problem}")
        print_error("error: nothing was applied")
        return EXIT_ERROR
    return run_async(args, lambda: _apply(args, manifests))


def controller_warnings(manifests: list[Manifest]) -> list[str]:
    """One warning per workload controller in ``manifests``: it is stored, and no pod will come of it."""
    return [
        f"{resource_ref(manifest.kind, manifest.obj.metadata.name)}: podsched runs no workload controllers; "
        "no pods will be created for it"
        for manifest in manifests
        if manifest.kind in _CONTROLLERS_NOT_RUN
    ]


def _too_large(manifest: Manifest) -> str | None:
    """Why ``manifest`` cannot be sent at all (its request would pass the size any API server reads)."""
    size = object_request_bytes(manifest.obj)
    if size <= MAX_REQUEST_BYTES:
        return None
    return (f"{_where(manifest)}: {manifest.kind.name} \"{manifest.obj.metadata.name}\" makes a request of "
            f"{size} bytes, more than the {MAX_REQUEST_BYTES} bytes ({MAX_REQUEST_SIZE}) an API server reads")


def _where(manifest: Manifest) -> str:
    return f'"{manifest.source}" (document {manifest.index})'


def _prepare(manifests: list[Manifest], namespace: str | None) -> list[Manifest]:
    """Settle each object's namespace, refuse duplicates, and put the list in dependency order."""
    seen: dict[tuple[kinds.Kind, str, str], Manifest] = {}
    for manifest in manifests:
        meta = manifest.obj.metadata
        if not manifest.kind.namespaced:
            meta.namespace = ""
        elif namespace and meta.namespace and meta.namespace != namespace:
            raise UsageError(
                f'the namespace from the provided object "{meta.namespace}" does not match the namespace '
                f'"{namespace}" in {_where(manifest)}. You must pass \'--namespace={meta.namespace}\' '
                f"to perform this operation."
            )
        elif not meta.namespace:
            meta.namespace = namespace or "default"
        identity = (manifest.kind, meta.namespace, meta.name)
        if identity in seen:
            raise UsageError(
                f"{resource_ref(manifest.kind, meta.name)} appears twice: in {_where(seen[identity])} "
                f"and in {_where(manifest)}"
            )
        seen[identity] = manifest
    return sorted(manifests, key=lambda m: _ORDER.get(m.kind, _LAST))


@dataclass
class _Step:
    manifest: Manifest
    action: str  # "created", "configured" or "unchanged"
    #: What the write sends (the manifest, with server-owned fields kept for an update); None when
    #: labels, annotations and spec are as stored.
    desired: Message | None
    #: The status to write after the object, when the manifest carries one that differs.
    status: Message | None = None
    #: The object as the server's dry run answered: as the write would store it.
    checked: Message | None = None

    @property
    def ref(self) -> str:
        obj = self.manifest.obj
        return resource_ref(self.manifest.kind, obj.metadata.name, obj.api_version)


async def _apply(args: argparse.Namespace, manifests: list[Manifest]) -> int:
    async with connect(args, retry_policy=FAIL_FAST_POLICY) as client:
        steps: list[_Step] = []
        failures: list[str] = []
        created = _Created()
        for manifest in manifests:
            try:
                step = await _plan(client, manifest, created)
            except _Rejected as rejected:
                failures.append(_failure(rejected.error, manifest, rejected.doing))
                continue
            steps.append(step)
            if step.action == "created":
                created.add(manifest)
        if not failures:
            refused = await _quota_refusal(client, steps)
            if refused is not None:
                step, error = refused
                failures.append(_failure(error, step.manifest, "creating"))
        if failures:
            for line in failures:
                print_error(line)
            print_error(
                f"error: {len(failures)} of {len(manifests)} objects were rejected; nothing was applied"
            )
            return EXIT_ERROR
        if args.dry_run == "server":
            for step in steps:
                print(f"{step.ref} {step.action} (server dry run)", flush=True)
            return EXIT_OK
        for run in _runs(steps):
            # A run of new objects of one kind is created in Batch calls, then each finished on its own.
            created_now: list[Message | errors.ApiError | None] = (
                [*await client.create_many([step.desired for step in run])] if len(run) > 1 else [None])
            failed = False
            for step, created_obj in zip(run, created_now, strict=True):
                try:
                    if isinstance(created_obj, errors.ApiError):
                        raise created_obj
                    await _write(client, step, created_obj)
                except errors.Unavailable:
                    raise
                except errors.ApiError as exc:
                    print_error(_failure(exc, step.manifest, _VERBS[step.action]))
                    failed = True
                    continue
                print(f"{step.ref} {step.action}", flush=True)
            if failed:
                return EXIT_ERROR
    return EXIT_OK


def _runs(steps: list[_Step]) -> Iterator[list[_Step]]:
    """The steps in order, in runs that may be written together: consecutive creates of one kind (objects
    of one kind never need each other to exist first; the kinds' order is kept), every other step alone."""
    run: list[_Step] = []
    for step in steps:
        if run and _creates(step) and _creates(run[-1]) and step.manifest.kind is run[-1].manifest.kind:
            run.append(step)
            continue
        if run:
            yield run
        run = [step]
    if run:
        yield run


def _creates(step: _Step) -> bool:
    return step.action == "created" and step.desired is not None


class _Rejected(Exception):
    """The server refused a document in the dry run; ``doing`` says what apply was trying."""

    def __init__(self, error: errors.ApiError, doing: str) -> None:
        super().__init__(error.message)
        self.error = error
        self.doing = doing


@contextlib.contextmanager
def _rejected_when(doing: str) -> Iterator[None]:
    try:
        yield
    except errors.Unavailable:
        raise
    except errors.ApiError as exc:
        raise _Rejected(exc, doing) from exc


_VERBS = {"created": "creating", "configured": "updating", "unchanged": "updating"}


def _failure(exc: errors.ApiError, manifest: Manifest, doing: str) -> str:
    """kubectl's line: `Error from server (Invalid): error when creating "x.yaml" (document 2): ...`."""
    reason_and_message = error_line(exc)
    prefix, _, message = reason_and_message.partition("): ")
    return f"{prefix}): error when {doing} {_where(manifest)}: {message}"


async def _plan(client: Client, manifest: Manifest, created: _Created) -> _Step:
    """Decide what applying ``manifest`` means, and have the server check it without writing."""
    kind, obj = manifest.kind, manifest.obj
    current = await _current(client, kind, obj)
    if current is None:
        if isinstance(obj, objects_pb2.CompositePodGroup) and _new_workload(obj, created) is not None:
            # Its Workload is this apply's, which its dry run cannot see, and its workloadRef is
            # required: checked here as the server would, against the Workload's document.
            with _rejected_when("creating"):
                validation.ensure_valid(obj)
                _refuse_unless_template(obj, created)
            return _Step(manifest, "created", obj, status=_carried_status(obj, None), checked=obj)
        with _rejected_when("creating"):
            would_be = await client.create(_checkable(obj, created), dry_run=True)
        return _Step(manifest, "created", obj, status=_carried_status(obj, None), checked=would_be)
    desired = _desired_update(kind, obj, current)
    with _rejected_when("updating"):
        would_be = await client.update(_checkable(desired, created), dry_run=True)
    status = _carried_status(obj, current)
    if _comparable(would_be) == _comparable(current):
        action = "configured" if status is not None else "unchanged"
        return _Step(manifest, action, None, status=status, checked=would_be)
    return _Step(manifest, "configured", desired, status=status, checked=would_be)


async def _quota_refusal(client: Client, steps: list[_Step]) -> tuple[_Step, errors.Forbidden] | None:
    """The first pod or PodGroup this apply creates that its namespace's quotas would refuse once the
    ones before it are in, and the server's error for it; None when they all fit. The quotas are the
    stored ones and those this apply creates or updates, as their dry runs answered (a new one counts the
    pods there already). A namespace whose quotas the caller may not list is left to the server's check
    of each object."""
    creates = [
        step for step in steps
        if step.manifest.kind in (kinds.POD, kinds.POD_GROUP) and step.action == "created"
    ]
    if not creates:
        return None
    quotas: dict[tuple[str, str], Message] = {
        (step.checked.metadata.namespace, step.checked.metadata.name): step.checked
        for step in steps if step.manifest.kind is kinds.RESOURCE_QUOTA and step.checked is not None
    }
    judged: set[str] = set()
    for namespace in sorted({step.manifest.obj.metadata.namespace for step in creates}):
        try:
            stored = (await client.list(kinds.RESOURCE_QUOTA, namespace)).items
        except errors.PermissionDenied:
            continue
        judged.add(namespace)
        for quota in stored:
            quotas.setdefault((namespace, quota.metadata.name), quota)
    creates = [step for step in creates if step.manifest.obj.metadata.namespace in judged]
    admitted = [_as_admitted(step) for step in creates]
    refused = first_refused(admitted, quotas.values())  # type: ignore[arg-type]
    if refused is None:
        return None
    index, reason = refused
    step = creates[index]
    name = admitted[index].metadata.name
    return step, errors.Forbidden(f'{step.manifest.kind.resource} "{name}" is forbidden: {reason}')


def _as_admitted(step: _Step) -> objects_pb2.Pod | objects_pb2.PodGroup:
    """A pod or PodGroup as the server would store it: its dry run's answer, with the priority class the
    manifest names (a dry run made without it, see ``_checkable``, answered without it)."""
    admitted = _clone(step.checked if step.checked is not None else step.manifest.obj)
    named = step.manifest.obj.spec.priority_class_name  # type: ignore[attr-defined]
    if named:
        admitted.spec.priority_class_name = named  # type: ignore[attr-defined]
    return admitted  # type: ignore[return-value]


async def _current(client: Client, kind: kinds.Kind, obj: Message) -> Message | None:
    try:
        with _rejected_when("reading"):
            return await client.get(kind, obj.metadata.name, obj.metadata.namespace)
    except _Rejected as rejected:
        if isinstance(rejected.error, errors.NotFound):
            return None
        raise


async def _write(client: Client, step: _Step, created: Message | None = None) -> None:
    """Write ``step``; ``created``: its object, when a Batch call has created it already."""
    manifest = step.manifest
    kind, obj = manifest.kind, manifest.obj
    written: Message | None = created
    if step.desired is not None and written is None:
        if step.action == "created":
            written = await client.create(step.desired)
        else:
            written = await _update(client, kind, obj, step.desired)
    if step.status is None or (written is not None and written.status == step.status):
        return
    with_status = _clone(obj)
    with_status.status.CopyFrom(step.status)
    # After our own write the status update is conditional on it; otherwise on the manifest's
    # resourceVersion if it carries one (the dry run checked it), else unconditional.
    if written is not None:
        with_status.metadata.resource_version = written.metadata.resource_version
    await client.update_status(with_status)


async def _update(client: Client, kind: kinds.Kind, obj: Message, desired: Message) -> Message:
    """Write ``desired``. A manifest without a resourceVersion asked for an unconditional update: when
    another writer got in between our read and our write, read again and redo the merge."""
    for _ in range(_CONFLICT_RETRIES):
        try:
            return await client.update(desired)
        except errors.Conflict:
            if obj.metadata.resource_version:
                raise
            current = await client.get(kind, obj.metadata.name, obj.metadata.namespace)
            desired = _desired_update(kind, obj, current)
    return await client.update(desired)


def _clone(obj: Message) -> Message:
    copy = type(obj)()
    copy.CopyFrom(obj)
    return copy


def _desired_update(kind: kinds.Kind, obj: Message, current: Message) -> Message:
    """The manifest as an update of ``current``: the manifest's labels, annotations and spec; the
    server's fields where the manifest is silent; the manifest's resourceVersion as the precondition,
    else the version just read."""
    desired = _clone(obj)
    if not desired.metadata.resource_version:
        desired.metadata.resource_version = current.metadata.resource_version
    owned = _SERVER_OWNED.get(kind, ())
    holder_name = "spec" if kind in _SPEC_OWNED else None
    source = getattr(current, holder_name) if holder_name else current
    target = getattr(desired, holder_name) if holder_name else desired
    for name in owned:
        if not _is_set(target, name) and _is_set(source, name):
            value = getattr(source, name)
            if isinstance(value, Message):
                getattr(target, name).CopyFrom(value)
            else:
                setattr(target, name, value)
    if isinstance(desired, objects_pb2.Pod) and isinstance(current, objects_pb2.Pod):
        _keep_runtime_class_admission(desired.spec, current.spec)
    if kind in (kinds.PERSISTENT_VOLUME, kinds.PERSISTENT_VOLUME_CLAIM):
        annotations = kinds.metadata_of(desired).annotations
        for key, value in kinds.metadata_of(current).annotations.items():
            if key.startswith(_BINDER_ANNOTATION_PREFIXES) and key not in annotations:
                annotations[key] = value
    if _has_status(kind):
        # Status is not the update's business (the server keeps the stored one); it is written apart.
        desired.status.CopyFrom(current.status)
    return desired


def _keep_runtime_class_admission(desired: objects_pb2.PodSpec, current: objects_pb2.PodSpec) -> None:
    """What RuntimeClass admission wrote into a pod (its overhead, the class's nodeSelector entries and
    tolerations) stays on a re-apply of a manifest that names the same class and never wrote them."""
    if not current.HasField("runtime_class_name") or desired.runtime_class_name != current.runtime_class_name:
        return
    if not desired.overhead:
        desired.overhead.update(current.overhead)
    for key, value in current.node_selector.items():
        desired.node_selector.setdefault(key, value)
    desired.tolerations.extend(t for t in current.tolerations if t not in desired.tolerations)


def _is_set(message: Message, name: str) -> bool:
    descriptor = message.DESCRIPTOR.fields_by_name[name]
    if descriptor.has_presence:
        return message.HasField(name)
    return bool(getattr(message, name))


def _has_status(kind: kinds.Kind) -> bool:
    return "status" in kind.message.DESCRIPTOR.fields_by_name


def _carried_status(obj: Message, current: Message | None) -> Message | None:
    """The status a manifest carries (nodes' allocatable, typically), when it differs from the stored
    one; None when the manifest says nothing about status."""
    if not _has_status(kinds.kind_of(obj)) or not obj.HasField("status"):
        return None
    if current is not None and current.status == obj.status:
        return None
    return obj.status


def _comparable(obj: Message) -> Message:
    """What an apply changes: labels, annotations and everything outside metadata and status."""
    copy = _clone(obj)
    labels, annotations = dict(copy.metadata.labels), dict(copy.metadata.annotations)
    copy.ClearField("metadata")
    copy.metadata.labels.update(labels)
    copy.metadata.annotations.update(annotations)
    if _has_status(kinds.kind_of(obj)):
        copy.ClearField("status")
    copy.api_version = ""
    copy.kind = ""
    return copy


@dataclass(slots=True)
class _Created:
    """What this apply creates before the documents after it, which their dry runs cannot see yet."""

    classes: set[str] = field(default_factory=set)
    quota_namespaces: set[str] = field(default_factory=set)
    runtime_classes: dict[str, objects_pb2.RuntimeClass] = field(default_factory=dict)
    #: Workloads by (namespace, name).
    workloads: dict[tuple[str, str], objects_pb2.Workload] = field(default_factory=dict)

    def add(self, manifest: Manifest) -> None:
        if manifest.kind is kinds.WORKLOAD:
            meta = manifest.obj.metadata
            self.workloads[(meta.namespace, meta.name)] = manifest.obj
        elif manifest.kind is kinds.PRIORITY_CLASS:
            self.classes.add(manifest.obj.metadata.name)
        elif manifest.kind is kinds.RUNTIME_CLASS:
            self.runtime_classes[manifest.obj.metadata.name] = manifest.obj
        elif manifest.kind is kinds.RESOURCE_QUOTA:
            self.quota_namespaces.add(manifest.obj.metadata.namespace)


def _with_new_runtime_class(pod: objects_pb2.Pod, created: _Created) -> objects_pb2.Pod:
    """A pod naming a RuntimeClass this apply creates, as the dry run can judge it: with what the class
    gives it (overhead, nodeSelector, tolerations) already merged here, and the class's name left out.
    A pod the class's admission would refuse is refused here in the server's words."""
    runtime_class = created.runtime_classes.get(pod.spec.runtime_class_name)
    if not pod.spec.HasField("runtime_class_name") or runtime_class is None:
        return pod
    probe = objects_pb2.Pod()
    probe.CopyFrom(pod)
    refused = runtimeclass.apply_runtime_class(probe, runtime_class)
    if refused is not None:
        raise errors.Forbidden(f'{kinds.POD.plural} "{pod.metadata.name}" is forbidden: {refused.message}')
    probe.spec.ClearField("runtime_class_name")
    probe.spec.overhead.clear()
    return probe


def _new_workload(group: workloadrefs.Group, created: _Created) -> objects_pb2.Workload | None:
    """The Workload this apply creates that ``group`` names, if it names one."""
    if not group.spec.HasField("workload_ref"):
        return None
    return created.workloads.get((group.metadata.namespace, group.spec.workload_ref.workload_name))


def _refuse_unless_template(group: workloadrefs.Group, created: _Created) -> None:
    """PodGroupWorkloadExists's check of a group made from a Workload of this apply, in its words."""
    refused = workloadrefs.refusal(group, _new_workload(group, created))
    if refused is not None:
        resource = kinds.kind_of(group).resource
        raise errors.Forbidden(f'{resource} "{group.metadata.name}" is forbidden: {refused}')


def _with_new_workload(group: objects_pb2.PodGroup, created: _Created) -> objects_pb2.PodGroup:
    """A PodGroup made from a Workload this apply creates, as the dry run can judge it: checked against
    the Workload's document here, its reference to it (and so its parent) left out."""
    if _new_workload(group, created) is None:
        return group
    _refuse_unless_template(group, created)
    probe = objects_pb2.PodGroup()
    probe.CopyFrom(group)
    probe.spec.ClearField("workload_ref")
    probe.spec.ClearField("parent_composite_pod_group_name")
    return probe


def _checkable(obj: Message, created: _Created) -> Message:
    """The object as the dry run can judge it (a PodGroup made from a Workload this apply creates is
    checked against it here): a pod or PodGroup naming a priority class that this same apply creates,
    or a system class in a namespace where this apply creates a quota (which may be what admits that
    class there), is checked without its class; the class and the quota were checked as their own
    documents, and the object's create is checked against both."""
    if isinstance(obj, kinds.POD.message):
        obj = _with_new_runtime_class(obj, created)
    elif isinstance(obj, kinds.POD_GROUP.message):
        obj = _with_new_workload(obj, created)
    else:
        return obj
    class_name = obj.spec.priority_class_name
    opened_by_new_quota = (
        class_name.startswith(_SYSTEM_CLASS_PREFIX) and obj.metadata.namespace in created.quota_namespaces
    )
    if class_name not in created.classes and not opened_by_new_quota:
        return obj
    probe = _clone(obj)
    probe.spec.priority_class_name = ""  # type: ignore[attr-defined]
    probe.spec.ClearField("priority")  # type: ignore[attr-defined]
    return probe
