"""Objects of every kind kept in a Store (the storage behind every kind, as kube-apiserver's generic
registry store): where they live, how they are encoded, and what a store outcome means in the API's terms.

Layout (shared with every other reader of the store): ``Kind.key(namespace, name)``; the value is the
object's protobuf binary with ``metadata.resourceVersion`` cleared, because the version is the key's
``mod_revision`` and storing it would make it wrong after the very write that stores it. Decoding puts
``str(mod_revision)`` back.

Writes are compare-and-swap on the revision the caller read. ``guaranteed_update`` is Kubernetes'
GuaranteedUpdate: read, let the caller compute the new object from the current one, write it only if
nothing changed meanwhile, and start again from what the store returned when something did. A write may
carry guards (store.base.Guard: other keys that must be unchanged in the same transaction); a fenced write
draws fresh ones before each attempt, so one that failed only on a guard is simply tried again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from google.protobuf.message import DecodeError, Message

from cluster.api import errors, validation
from cluster.api.kinds import Kind
from cluster.apiserver import messages
from store.base import Guard, KeyValue, Store, TxnOp, get_many

#: etcd refuses requests above 1.5 MiB by default (--max-request-bytes); an object must fit in one.
MAX_OBJECT_BYTES = 1536 * 1024


def _may_exist(namespace: str, name: str) -> bool:
    """Whether an object could have this namespace and name: validation allows neither longer than a DNS
    subdomain, and a longer one (a Bind's or a fence's, which name objects without the verbs' checks) must
    not become a store key, which etcd would refuse past 2 MiB."""
    limit = validation.DNS1123_SUBDOMAIN_MAX_LENGTH
    return len(namespace) <= limit and len(name) <= limit


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """A compare-and-swap write in the API's terms.

    On success ``obj`` is the object as written (resourceVersion set; for a delete, the object as it
    was). On failure ``obj`` is the object as the store holds it now (None when it is gone) and
    ``failed_guards`` names the guards that did not hold.
    """

    succeeded: bool
    obj: Message | None
    failed_guards: tuple[Guard, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupWriteOutcome:
    """Several objects updated in one store transaction (``Storage.update_together``), in the API's
    terms: on success ``objs`` are the objects as written, all at one resourceVersion; on failure
    nothing was written, ``objs`` are the objects as the store holds them now (None when gone),
    ``failed`` the indexes of the objects that changed and ``failed_guards`` the guards that did not
    hold."""

    succeeded: bool
    objs: tuple[Message | None, ...]
    failed: tuple[int, ...] = ()
    failed_guards: tuple[Guard, ...] = ()


Mutation = Callable[[Message], Awaitable[Message | None]]
#: Called before each attempt of a write for the extra guards that attempt carries (fencing.py's lease
#: guard); it may raise to refuse the write.
GuardSource = Callable[[], Awaitable[Sequence[Guard]]]


def revision_of(obj: Message) -> int:
    """The store revision an object was read at (its resourceVersion)."""
    return int(obj.metadata.resource_version)


class Storage:
    def __init__(self, store: Store, *, max_object_bytes: int = MAX_OBJECT_BYTES) -> None:
        self.store = store
        self.max_object_bytes = max_object_bytes

    # ------------------------------------------------------------------------------------ encoding

    def encode(self, kind: Kind, obj: Message) -> bytes:
        """The stored form of ``obj``; an object too big for the store is Invalid."""
        version = obj.metadata.resource_version
        obj.metadata.resource_version = ""
        try:
            # Deterministic (sorted map entries), so an unchanged object encodes to unchanged bytes.
            data = obj.SerializeToString(deterministic=True)
        finally:
            obj.metadata.resource_version = version
        if len(data) > self.max_object_bytes:
            validation.ensure_valid(obj, [
                f"the object is {len(data)} bytes serialized, more than the limit of "
                f"{self.max_object_bytes} bytes (1.5 MiB: etcd's default request size limit)"
            ])
        return data

    @staticmethod
    def decode(kind: Kind, value: bytes, revision: int) -> Message:
        return Storage.decode_into(kind.message(), kind, value, revision)

    @staticmethod
    def decode_into(obj: Message, kind: Kind, value: bytes, revision: int) -> Message:
        """Decode into ``obj``, an empty message of ``kind``: a field of an envelope, say, which spares
        copying the object into the envelope afterwards."""
        try:
            obj.ParseFromString(value)
        except DecodeError as exc:
            raise errors.InternalError(f"stored {kind.plural} object cannot be decoded: {exc}") from exc
        obj.metadata.resource_version = str(revision)
        return obj

    def decode_kv(self, kind: Kind, kv: KeyValue) -> Message:
        return self.decode(kind, kv.value, kv.mod_revision)

    # --------------------------------------------------------------------------------------- reads

    async def get(self, kind: Kind, namespace: str, name: str) -> Message | None:
        if not _may_exist(namespace, name):
            return None
        kv = await self.store.get(kind.key(namespace, name))
        return None if kv is None else self.decode_kv(kind, kv)

    async def get_many(self, addresses: Sequence[tuple[Kind, str, str]]) -> list[Message | None]:
        """The objects at ``addresses`` (kind, namespace, name), None for each absent one: one store round
        trip where the store reads several keys at once (store.base.get_many)."""
        keys = [kind.key(ns, name) for kind, ns, name in addresses if _may_exist(ns, name)]
        found = iter(await get_many(self.store, keys))
        objects: list[Message | None] = []
        for kind, namespace, name in addresses:
            kv = next(found) if _may_exist(namespace, name) else None
            objects.append(None if kv is None else self.decode_kv(kind, kv))
        return objects

    async def require(self, kind: Kind, namespace: str, name: str) -> Message:
        obj = await self.get(kind, namespace, name)
        if obj is None:
            raise messages.not_found(kind, name)
        return obj

    # -------------------------------------------------------------------------------------- writes

    async def create(
        self, kind: Kind, obj: Message, *, dry_run: bool = False, guards: GuardSource | None = None
    ) -> Message:
        """Store a new object; AlreadyExists when its key is taken. A dry run checks the same and
        returns the object unwritten (without a resourceVersion, as Kubernetes does). ``guards``, when
        given, is called before each attempt and its guards go into that attempt's write."""
        key = kind.key(obj.metadata.namespace, obj.metadata.name)
        data = self.encode(kind, obj)
        while True:
            extra = await guards() if guards is not None else ()
            if dry_run:
                if await self.store.get(key) is not None:
                    raise messages.already_exists(kind, obj.metadata.name)
                return obj
            result = await self.store.create(key, data, extra)
            if result.succeeded:
                obj.metadata.resource_version = str(result.revision)
                return obj
            if result.current is not None or not result.failed_guards:
                raise messages.already_exists(kind, obj.metadata.name)
            # Only a guard failed (a fenced lease renewed meanwhile): draw fresh guards and try again.

    async def update(
        self, kind: Kind, obj: Message, expected_revision: int, guards: Sequence[Guard] = ()
    ) -> WriteOutcome:
        return await self._write(kind, obj, self.encode(kind, obj), expected_revision, guards)

    async def _write(
        self, kind: Kind, obj: Message, data: bytes, expected_revision: int, guards: Sequence[Guard]
    ) -> WriteOutcome:
        key = kind.key(obj.metadata.namespace, obj.metadata.name)
        result = await self.store.update(key, data, expected_revision, guards)
        if result.succeeded:
            obj.metadata.resource_version = str(result.revision)
            return WriteOutcome(True, obj)
        current = None if result.current is None else self.decode_kv(kind, result.current)
        return WriteOutcome(False, current, result.failed_guards)

    async def _update_cached(
        self, kind: Kind, cached: Message, mutate: Mutation, guards: Sequence[Guard]
    ) -> WriteOutcome | None:
        """The write of ``mutate``'s update of ``cached``, which lands if ``cached`` was current; None when
        nothing was written (a refusal or nothing to write, which only the store's state can confirm)."""
        try:
            change = await self._mutated(kind, cached, mutate)
        except errors.ApiError:
            return None  # perhaps only because the copy is behind: the store's state decides
        if change is None:
            return None
        updated, data = change
        return await self._write(kind, updated, data, revision_of(cached), guards)

    async def _mutated(self, kind: Kind, current: Message, mutate: Mutation) -> tuple[Message, bytes] | None:
        """``mutate``'s update of ``current`` with its encoding; None when it writes nothing (None, or the
        same bytes)."""
        updated = await mutate(current)
        if updated is None:
            return None
        updated.metadata.resource_version = current.metadata.resource_version
        data = self.encode(kind, updated)
        return None if data == self.encode(kind, current) else (updated, data)

    async def update_together(
        self, kind: Kind, updates: Sequence[tuple[Message, int]], guards: Sequence[Guard] = ()
    ) -> GroupWriteOutcome:
        """Write every (object, expected revision) of ``updates`` and check ``guards`` in ONE store
        transaction: all written at one new resourceVersion, or none."""
        ops = [
            TxnOp.update(kind.key(meta.namespace, meta.name), self.encode(kind, obj), expected)
            for obj, expected in updates
            for meta in (obj.metadata,)
        ]
        result = await self.store.txn(ops, guards)
        if result.succeeded:
            for obj, _ in updates:
                obj.metadata.resource_version = str(result.revision)
            return GroupWriteOutcome(True, tuple(obj for obj, _ in updates))
        current = tuple(None if kv is None else self.decode_kv(kind, kv) for kv in result.current)
        return GroupWriteOutcome(False, current, result.failed_ops, result.failed_guards)

    async def delete(
        self, kind: Kind, obj: Message, expected_revision: int, guards: Sequence[Guard] = ()
    ) -> WriteOutcome:
        key = kind.key(obj.metadata.namespace, obj.metadata.name)
        result = await self.store.delete(key, expected_revision, guards)
        if result.succeeded:
            return WriteOutcome(True, obj)
        current = None if result.current is None else self.decode_kv(kind, result.current)
        return WriteOutcome(False, current, result.failed_guards)

    async def guaranteed_update(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        mutate: Mutation,
        *,
        dry_run: bool = False,
        guards: GuardSource | None = None,
        cached: Message | None = None,
    ) -> Message:
        """Apply ``mutate`` to the current object and write the result, retrying from the newer object
        whenever another writer got there first. ``mutate`` builds a new object (it must not change the
        one it is given), returns None to leave the object as it is, or raises to refuse (a
        precondition it checks against the current object, validation).

        ``guards``, when given, is called first in every attempt, even one that turns out to write
        nothing (so a refusal is never hidden by a no-op), and its guards go into that attempt's write.

        ``cached``, the watch cache's copy of the object, is where the first attempt starts, as
        kube-apiserver's GuaranteedUpdate starts from the cached object: it saves the store read when the
        copy is current, which its compare-and-swap proves. What only a current copy could tell (a
        refusal, nothing to write, a lost compare-and-swap) is decided again from the store."""
        current: Message | None = None
        if dry_run:
            cached = None
        while True:
            extra = await guards() if guards is not None else ()
            if cached is not None:
                attempt, cached = cached, None
                outcome = await self._update_cached(kind, attempt, mutate, extra)
                if outcome is not None:
                    if outcome.obj is None:  # a write that lands always has its object
                        raise messages.not_found(kind, name)
                    if outcome.succeeded:
                        return outcome.obj
                    # The copy was behind, or only a guard failed: again from what the store answered.
                    current = outcome.obj
                    continue
            if current is None:
                current = await self.require(kind, namespace, name)
            change = await self._mutated(kind, current, mutate)
            if change is None:
                return current
            updated, data = change
            if dry_run:
                return updated
            outcome = await self._write(kind, updated, data, revision_of(current), extra)
            if outcome.succeeded:
                return updated
            if outcome.obj is None:
                raise messages.not_found(kind, name)
            # Changed by another writer, or only a guard failed (the object is as it was): again.
            current = outcome.obj
