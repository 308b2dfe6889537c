"""The write and read verbs of the API over the registry, in kube-apiserver's order:
strategy (server-owned fields, defaults) → mutating admission → validation → validating admission →
the size limit and the compare-and-swap write. A dry run goes through every step but the write.

UpdateStatus and Delete may be fenced (fencing.py), and so may the Create and Update of an Event (a
scheduler's events belong to its term) and the Update of a Lease (a leader's release): then every attempt
first checks the fence against the Lease and carries the Guard it gives, even an attempt that ends up
writing nothing (a delete of a pod already terminating, a status already so), so a deposed writer always
hears that it was deposed. An Event stores the fence it was written under in annotation
podsched.io/written-under-fence; an unfenced write of it drops that annotation.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, objects_pb2, timeutil, validation
from cluster.api.fencing import WRITTEN_UNDER_FENCE_ANNOTATION
from cluster.api.kinds import EVENT, LEASE, NAMESPACE, POD, PRIORITY_CLASS, Kind, kind_by_name, kind_of
from cluster.apiserver import admission, graceful, messages, namespaces, quota, strategy
from cluster.apiserver.fencing import Fencing, LeaseFence
from cluster.apiserver.leadership import Leadership
from cluster.apiserver.storage import GuardSource, Storage, revision_of
from cluster.apiserver.watchcache import Cacher
from store.base import Guard

#: How many generated names a create tries before it gives up on collisions (as Kubernetes).
GENERATE_NAME_ATTEMPTS = 8
#: No object's name or namespace is longer (a DNS subdomain's limit); a request naming a longer one is
#: refused before it reaches the store, whose keys are bounded (etcd refuses requests over 2 MiB).
MAX_PATH_NAME_LENGTH = validation.DNS1123_SUBDOMAIN_MAX_LENGTH


def resolve_kind(name: str) -> Kind:
    if not name:
        raise errors.Invalid("kind is required")
    return kind_by_name(name)


def check_path_name(what: str, value: str) -> None:
    """A name used to build a store key must be one path segment (apimachinery's path segment rules)."""
    if not value:
        raise errors.Invalid(f"{what} may not be empty")
    if len(value) > MAX_PATH_NAME_LENGTH:
        raise errors.Invalid(
            f'{what} "{value[:64]}..." is {len(value)} characters long: no object\'s is longer than '
            f"{MAX_PATH_NAME_LENGTH}"
        )
    if value in (".", ".."):
        raise errors.Invalid(f'{what} "{value}" may not be "{value}"')
    for forbidden in ("/", "%"):
        if forbidden in value:
            raise errors.Invalid(f'{what} "{value}" may not contain "{forbidden}"')


def request_namespace(kind: Kind, namespace: str) -> str:
    """The namespace a single-object request addresses: "default" when a namespaced kind's is empty."""
    if not kind.namespaced:
        return ""
    namespace = namespace or strategy.DEFAULT_NAMESPACE
    check_path_name("namespace", namespace)
    return namespace


class Verbs:
    def __init__(
        self,
        registry: Storage,
        *,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        leadership: Leadership | None = None,
        cache: Cacher | None = None,
    ) -> None:
        self.registry = registry
        #: The watch cache Get, List, Watch and admission read from; one that is not run (the default)
        #: is never in sync, and every read goes to the store.
        self.cache = cache or Cacher(registry)
        #: Checks the fences of fenced writes and counts the ones it refuses.
        self.fencing = Fencing(registry)
        #: Server-enforced leadership (leadership.py): off unless the server was asked for it.
        self.leadership = leadership or Leadership(enforced=False, may=lambda user, request: True)
        self._clock = clock
        self._rng = rng or random.Random()

    def now(self) -> Timestamp:
        return timeutil.from_seconds(self._clock())

    # ------------------------------------------------------------------------------------- create

    async def create(
        self, obj: Message, *, dry_run: bool = False, fence: LeaseFence | None = None
    ) -> Message:
        """Create an object; an Event under ``fence`` when given."""
        kind = kind_of(obj)
        _check_fenced_kind(fence, "Create", kind, (EVENT,))
        generated = not obj.metadata.name and bool(obj.metadata.generate_name)
        attempt = 1
        while True:
            candidate = kind.message()
            candidate.CopyFrom(obj)
            strategy.prepare_for_create(kind, candidate, self.now(), self._rng)
            _stamp_fence(candidate, fence)
            if isinstance(candidate, objects_pb2.Pod):
                await admission.admit_pod_create(self.cache, candidate)
            elif isinstance(candidate, objects_pb2.PodGroup):
                await admission.admit_pod_group_create(self.cache, candidate)
            elif isinstance(candidate, objects_pb2.ResourceQuota):
                await quota.status_for_create(self.registry, candidate)
            self._validate(kind, candidate)
            if isinstance(candidate, objects_pb2.PriorityClass):
                await admission.admit_priority_class(self.cache, candidate, updating=False)
            meta = candidate.metadata
            guards = _fence_guards(fence, "create", kind, meta.namespace, meta.name)
            charged: tuple[str, ...] = ()
            if isinstance(candidate, objects_pb2.Pod):
                charged = await quota.charge(self.registry, candidate, dry_run=dry_run, cache=self.cache)
            elif isinstance(candidate, objects_pb2.PodGroup):
                await quota.admit_pod_group(self.cache, candidate)
            try:
                created = await self.registry.create(kind, candidate, dry_run=dry_run, guards=guards)
            except Exception as exc:
                await quota.refund(self.registry, meta.namespace, charged)
                name_taken = isinstance(exc, errors.AlreadyExists)
                if not (name_taken and generated and attempt < GENERATE_NAME_ATTEMPTS):
                    raise
                attempt += 1
                continue
            if isinstance(created, objects_pb2.Lease) and not dry_run:
                self.leadership.clock.observe(created)
            return created

    def _validate(self, kind: Kind, obj: Message, old: Message | None = None) -> None:
        problems = validation.validate_object(obj)
        if old is not None:
            problems += validation.validate_update(old, obj)
        if kind is PRIORITY_CLASS:
            problems += admission.priority_class_problems(obj)
        if problems:
            validation.ensure_valid(obj, problems)

    @staticmethod
    def _validate_status(obj: Message, old: Message) -> None:
        """A status update is judged by its status alone (and its change from ``old``'s), as Kubernetes'
        status strategies do: metadata and spec are kept as stored, so a problem there (an object stored
        before a rule existed) must not stop its controller from reporting on it."""
        problems = validation.validate_status(obj) + validation.validate_status_update(old, obj)
        if problems:
            validation.ensure_valid(obj, problems)

    # -------------------------------------------------------------------------------------- reads

    async def get(self, kind: Kind, namespace: str, name: str) -> Message:
        namespace = request_namespace(kind, namespace)
        check_path_name("resource name", name)
        obj = await self.cache.get(kind, namespace, name)
        if obj is None:
            raise messages.not_found(kind, name)
        return obj

    # ------------------------------------------------------------------------------------ updates

    def _addressed(self, obj: Message) -> tuple[Kind, str, str]:
        kind = kind_of(obj)
        namespace = request_namespace(kind, obj.metadata.namespace)
        check_path_name("resource name", obj.metadata.name)
        return kind, namespace, obj.metadata.name

    async def update(
        self, obj: Message, *, dry_run: bool = False, fence: LeaseFence | None = None
    ) -> Message:
        """Replace metadata and spec (status is kept). An empty resourceVersion is unconditional. An
        Event or a Lease under ``fence`` when given."""
        kind, namespace, name = self._addressed(obj)
        _check_fenced_kind(fence, "Update", kind, (EVENT, LEASE))
        precondition = obj.metadata.resource_version
        guards = _fence_guards(fence, "update", kind, namespace, name)

        async def mutate(current: Message) -> Message:
            if precondition and precondition != current.metadata.resource_version:
                raise messages.conflict(kind, name)
            updated = kind.message()
            updated.CopyFrom(obj)
            strategy.prepare_for_update(kind, updated, current)
            if kind is EVENT:
                _stamp_fence(updated, fence)
            if isinstance(updated, objects_pb2.Lease):
                self.leadership.check_lease_update(current, updated, fence)  # type: ignore[arg-type]
            if isinstance(updated, objects_pb2.Pod):
                admission.admit_pod_update(updated, current)
            elif isinstance(updated, objects_pb2.PodGroup):
                admission.admit_pod_group_update(updated, current)
            elif isinstance(updated, objects_pb2.ResourceQuota):
                await quota.status_for_update(self.registry, updated)
            self._validate(kind, updated, current)
            if isinstance(updated, objects_pb2.PriorityClass):
                await admission.admit_priority_class(self.cache, updated, updating=True)
            return updated

        updated = await self.registry.guaranteed_update(
            kind, namespace, name, mutate, dry_run=dry_run, guards=guards
        )
        if isinstance(updated, objects_pb2.Lease) and not dry_run:
            self.leadership.clock.observe(updated)
        return updated

    async def update_status(
        self,
        obj: Message,
        *,
        dry_run: bool = False,
        fence: LeaseFence | None = None,
        nomination_check: Callable[[objects_pb2.Pod, objects_pb2.Pod], None] | None = None,
    ) -> Message:
        """Replace the status (metadata and spec are kept); under ``fence`` when given. A pod's
        ``nomination_check``, when given, is called with the stored pod and the updated one and may
        refuse."""
        kind, namespace, name = self._addressed(obj)
        precondition = obj.metadata.resource_version
        guards = _fence_guards(fence, "status update", kind, namespace, name)
        #: The stored version the written update was made from (the last one ``mutate`` saw).
        replaced: list[Message] = []

        async def mutate(current: Message) -> Message:
            if precondition and precondition != current.metadata.resource_version:
                raise messages.conflict(kind, name)
            updated = strategy.prepare_for_status_update(kind, obj, current)
            self._validate_status(updated, current)
            if nomination_check is not None and isinstance(updated, objects_pb2.Pod):
                nomination_check(current, updated)  # type: ignore[arg-type]
            replaced[:] = [current]
            return updated

        updated = await self.registry.guaranteed_update(
            kind, namespace, name, mutate, dry_run=dry_run, guards=guards
        )
        if isinstance(updated, objects_pb2.Pod) and replaced and not dry_run:
            await quota.release_finished(self.registry, replaced[0], updated)  # type: ignore[arg-type]
        return updated

    # ------------------------------------------------------------------------------------- delete

    async def delete(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        resource_version: str = "",
        dry_run: bool = False,
        fence: LeaseFence | None = None,
    ) -> Message:
        """Delete an object, or for a pod with a grace period, mark it (graceful.py); under ``fence`` when
        given. Returns the object as deleted or as marked."""
        namespace = request_namespace(kind, namespace)
        check_path_name("resource name", name)
        if kind is PRIORITY_CLASS:
            admission.check_priority_class_delete(name)
        elif kind is NAMESPACE:
            namespaces.check_namespace_delete(name)
        guards = _fence_guards(fence, "delete", kind, namespace, name)
        current: Message | None = None
        while True:
            extra = await guards() if guards is not None else ()
            if current is None:
                current = await self.registry.require(kind, namespace, name)
            actual = current.metadata.resource_version
            if resource_version and resource_version != actual:
                raise messages.stale_precondition(kind, name, resource_version, actual)
            if kind is POD:
                plan = graceful.plan_pod_deletion(current, grace_period_seconds, self._clock())
                if plan.action is graceful.Action.KEEP:
                    return current
                if plan.action is graceful.Action.MARK:
                    marked = graceful.apply_plan(current, plan)
                    if dry_run:
                        return marked
                    outcome = await self.registry.update(kind, marked, revision_of(current), extra)
                    if outcome.succeeded:
                        return marked
                    if outcome.obj is None:
                        raise messages.not_found(kind, name)
                    current = outcome.obj
                    continue
            if dry_run:
                return current
            outcome = await self.registry.delete(kind, current, revision_of(current), extra)
            if outcome.succeeded:
                if isinstance(current, objects_pb2.Pod):
                    await quota.release(self.registry, current)
                return current
            if outcome.obj is None:
                raise messages.not_found(kind, name)
            current = outcome.obj


def _check_fenced_kind(fence: LeaseFence | None, verb: str, kind: Kind, fenced: tuple[Kind, ...]) -> None:
    """A fence on a write of a kind that verb does not fence is refused: ignoring it would let the caller
    believe the write was fenced."""
    if fence is not None and kind not in fenced:
        names = " and ".join(f"{k.name}s" for k in fenced)
        raise errors.Invalid(f"{verb} takes a fence only for {names}, not for a {kind.name}")


def _stamp_fence(obj: Message, fence: LeaseFence | None) -> None:
    """Record on an Event the fence of the write that stores this version of it (none: no record)."""
    if not isinstance(obj, objects_pb2.Event):
        return
    annotations = obj.metadata.annotations
    if fence is not None:
        annotations[WRITTEN_UNDER_FENCE_ANNOTATION] = fence.stamp
    elif WRITTEN_UNDER_FENCE_ANNOTATION in annotations:
        del annotations[WRITTEN_UNDER_FENCE_ANNOTATION]


def _fence_guards(
    fence: LeaseFence | None, verb: str, kind: Kind, namespace: str, name: str
) -> GuardSource | None:
    """The per-attempt guards of a write under ``fence`` (None for an unfenced write)."""
    if fence is None:
        return None
    checked = fence

    async def lease_guard() -> list[Guard]:
        return [await checked.guard(verb, kind, namespace, name)]

    return lease_guard
