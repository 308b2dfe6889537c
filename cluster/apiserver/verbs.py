"""The write and read verbs of the API over the storage, in kube-apiserver's order:
strategy (server-owned fields, defaults) → mutating admission → validation → validating admission →
the size limit and the compare-and-swap write. A dry run goes through every step but the write.

Nothing here is about one kind: what a kind adds to a verb is its registry module's hooks
(cluster/apiserver/registry), and what admission adds is the admission chain's plugins
(cluster/apiserver/admission); each request looks both up once, by kind.

UpdateStatus and Delete may be fenced (fencing.py), and so may the writes of the verbs a kind's
registration names (an Event's Create and Update: a scheduler's events belong to its term; a Lease's
Update: a leader's release): then every attempt first checks the fence against the Lease and carries the
Guard it gives, even an attempt that ends up writing nothing (a delete of a pod already terminating, a
status already so), so a deposed writer always hears that it was deposed.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cluster.api import errors, timeutil, validation
from cluster.api.kinds import Kind, kind_by_name, kind_of
from cluster.apiserver import graceful, messages, strategy
from cluster.apiserver.admission import Chain, Rollback, default_chain
from cluster.apiserver.context import Context
from cluster.apiserver.fencing import Fencing, LeaseFence
from cluster.apiserver.leadership import Leadership
from cluster.apiserver.registry import fenced_kinds, strategy_of
from cluster.apiserver.registry.kind import CREATE, UPDATE, KindStrategy
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
        admission: Chain | None = None,
    ) -> None:
        self.registry = registry
        #: The watch cache Get, List, Watch and admission read from; one that is not run (the default)
        #: is never in sync, and every read goes to the store.
        self.cache = cache or Cacher(registry)
        #: Checks the fences of fenced writes and counts the ones it refuses.
        self.fencing = Fencing(registry)
        #: Server-enforced leadership (leadership.py): off unless the server was asked for it.
        self.leadership = leadership or Leadership(enforced=False, may=lambda user, request: True)
        #: The admission plugins every write passes, in order.
        self.admission = admission or default_chain()
        #: What kinds' hooks and admission plugins reach.
        self.context = Context(registry, self.cache, self.leadership)
        self._clock = clock
        self._rng = rng or random.Random()
        # UIDs from their own source, seeded by the names' without drawing from it: a seeded server
        # repeats both (a simulation's provisioned volumes are named by their claims' UIDs), and the
        # generated names stay what they were.
        self._uids = random.Random(hash(self._rng.getstate()[1]))

    def now(self) -> Timestamp:
        return timeutil.from_seconds(self._clock())

    # ------------------------------------------------------------------------------------- create

    async def create(
        self, obj: Message, *, dry_run: bool = False, fence: LeaseFence | None = None
    ) -> Message:
        """Create an object; under ``fence`` when its kind's Create takes one."""
        kind = kind_of(obj)
        kind_strategy = strategy_of(kind)
        admission = self.admission.of(kind)
        ctx = self.context
        _check_fenced_kind(fence, CREATE, kind_strategy)
        generated = not obj.metadata.name and bool(obj.metadata.generate_name)
        attempt = 1
        while True:
            candidate = kind.message()
            candidate.CopyFrom(obj)
            strategy.prepare_for_create(kind, candidate, self.now(), self._rng,
                                        uid=str(uuid.UUID(int=self._uids.getrandbits(128), version=4)))
            if kind_strategy.record_fence is not None:
                kind_strategy.record_fence(candidate, fence)
            for plugin in admission.mutate_create:
                await plugin.mutate_create(ctx, candidate)
            self._validate(kind_strategy, candidate)
            meta = candidate.metadata
            guards = _fence_guards(fence, "create", kind, meta.namespace, meta.name)
            rollbacks: list[Rollback] = []
            try:
                for plugin in admission.validate_create:
                    rollback = await plugin.validate_create(ctx, candidate, dry_run)
                    if rollback is not None:
                        rollbacks.append(rollback)
                created = await self.registry.create(kind, candidate, dry_run=dry_run, guards=guards)
            except Exception as exc:
                for rollback in reversed(rollbacks):
                    await rollback()
                name_taken = isinstance(exc, errors.AlreadyExists)
                if not (name_taken and generated and attempt < GENERATE_NAME_ATTEMPTS):
                    raise
                attempt += 1
                continue
            if kind_strategy.after_write is not None and not dry_run:
                kind_strategy.after_write(ctx, created)
            return created

    @staticmethod
    def _validate(kind_strategy: KindStrategy, obj: Message, old: Message | None = None) -> None:
        rules = kind_strategy.validation
        problems = validation.object_problems(rules, obj)
        if old is not None:
            problems += validation.update_problems(rules, old, obj)
        if kind_strategy.server_validation is not None:
            problems += kind_strategy.server_validation(obj)
        if problems:
            validation.ensure_valid(obj, problems)

    @staticmethod
    def _validate_status(kind_strategy: KindStrategy, obj: Message, old: Message) -> None:
        """A status update is judged by its status alone (and its change from ``old``'s), as Kubernetes'
        status strategies do: metadata and spec are kept as stored, so a problem there (an object stored
        before a rule existed) must not stop its controller from reporting on it."""
        problems = validation.status_problems(kind_strategy.validation, old, obj)
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
        """Replace metadata and spec (status is kept). An empty resourceVersion is unconditional. Under
        ``fence`` when the kind's Update takes one."""
        kind, namespace, name = self._addressed(obj)
        kind_strategy = strategy_of(kind)
        admission = self.admission.of(kind)
        ctx = self.context
        _check_fenced_kind(fence, UPDATE, kind_strategy)
        precondition = obj.metadata.resource_version
        guards = _fence_guards(fence, "update", kind, namespace, name)

        async def mutate(current: Message) -> Message:
            if precondition and precondition != current.metadata.resource_version:
                raise messages.conflict(kind, name)
            updated = kind.message()
            updated.CopyFrom(obj)
            strategy.prepare_for_update(kind, updated, current)
            if kind_strategy.record_fence is not None:
                kind_strategy.record_fence(updated, fence)
            if kind_strategy.check_update is not None:
                kind_strategy.check_update(ctx, current, updated, fence)
            for plugin in admission.mutate_update:
                await plugin.mutate_update(ctx, updated, current)
            self._validate(kind_strategy, updated, current)
            for plugin in admission.validate_update:
                await plugin.validate_update(ctx, updated, current)
            return updated

        updated = await self.registry.guaranteed_update(
            kind, namespace, name, mutate, dry_run=dry_run, guards=guards
        )
        if kind_strategy.after_write is not None and not dry_run:
            kind_strategy.after_write(ctx, updated)
        return updated

    async def update_status(
        self,
        obj: Message,
        *,
        dry_run: bool = False,
        fence: LeaseFence | None = None,
        nomination_check: Callable[[Any, Any], None] | None = None,
    ) -> Message:
        """Replace the status (metadata and spec are kept); under ``fence`` when given. The caller's
        ``nomination_check``, when given and the kind's status nominates (a pod's), is called with the
        stored object and the updated one and may refuse."""
        kind, namespace, name = self._addressed(obj)
        kind_strategy = strategy_of(kind)
        if not kind_strategy.nominates:
            nomination_check = None
        precondition = obj.metadata.resource_version
        guards = _fence_guards(fence, "status update", kind, namespace, name)
        #: The stored version the written update was made from (the last one ``mutate`` saw).
        replaced: list[Message] = []

        async def mutate(current: Message) -> Message:
            if precondition and precondition != current.metadata.resource_version:
                raise messages.conflict(kind, name)
            updated = strategy.prepare_for_status_update(kind, obj, current)
            if kind_strategy.prepare_for_status_update is not None:
                kind_strategy.prepare_for_status_update(updated, current, self.now())
            self._validate_status(kind_strategy, updated, current)
            if nomination_check is not None:
                nomination_check(current, updated)
            replaced[:] = [current]
            return updated

        updated = await self.registry.guaranteed_update(
            kind, namespace, name, mutate, dry_run=dry_run, guards=guards,
            cached=self.cache.peek(kind, namespace, name),
        )
        if kind_strategy.after_status_update is not None and replaced and not dry_run:
            await kind_strategy.after_status_update(self.context, replaced[0], updated)
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
        uid: str = "",
        dry_run: bool = False,
        fence: LeaseFence | None = None,
    ) -> Message:
        """Delete an object, or for a pod with a grace period, mark it (graceful.py); under ``fence`` when
        given. ``uid`` and ``resource_version``, when given, are preconditions the object must still meet
        (metav1.Preconditions). Returns the object as deleted or as marked."""
        namespace = request_namespace(kind, namespace)
        check_path_name("resource name", name)
        kind_strategy = strategy_of(kind)
        if kind_strategy.check_delete is not None:
            kind_strategy.check_delete(name)
        for plugin in self.admission.of(kind).validate_delete:
            plugin.validate_delete(kind, name)
        guards = _fence_guards(fence, "delete", kind, namespace, name)
        current: Message | None = None
        while True:
            extra = await guards() if guards is not None else ()
            if current is None:
                current = await self.registry.require(kind, namespace, name)
            if uid and uid != current.metadata.uid:
                raise messages.stale_uid(kind, name, uid, current.metadata.uid)
            actual = current.metadata.resource_version
            if resource_version and resource_version != actual:
                raise messages.stale_precondition(kind, name, resource_version, actual)
            if kind_strategy.graceful_delete is not None:
                plan = kind_strategy.graceful_delete(current, grace_period_seconds, self._clock())
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
                if kind_strategy.after_delete is not None:
                    await kind_strategy.after_delete(self.context, current)
                return current
            if outcome.obj is None:
                raise messages.not_found(kind, name)
            current = outcome.obj


def _check_fenced_kind(fence: LeaseFence | None, verb: str, kind_strategy: KindStrategy) -> None:
    """A fence on a write of a kind that verb does not fence is refused: ignoring it would let the caller
    believe the write was fenced."""
    if fence is not None and verb not in kind_strategy.fenced_verbs:
        *others, last = [f"{k.name}s" for k in fenced_kinds(verb)]
        names = f"{', '.join(others)} and {last}" if others else last
        raise errors.Invalid(f"{verb} takes a fence only for {names}, not for a {kind_strategy.kind.name}")


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
